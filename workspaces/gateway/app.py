"""The MCP gateway: a FastAPI app, run inside a container, that owns its MCP sessions.

The host cannot hold a stdio session with a server inside a container, so the gateway does:
it keeps one `MCPClient` per registered server and serves them over HTTP, on a unix socket in
a directory the host shares with a container (which has no network to listen on) or on a TCP
port a sandbox exposes (E2B)::

    GET    /health                       liveness (no token needed)
    GET    /mcps                         the registered servers
    POST   /mcps                         register one (an MCPClientConfig) and connect it
    DELETE /mcps/{name}                  disconnect and forget it
    GET    /mcps/{name}/tools            its tools, as the MCP server lists them
    POST   /mcps/{name}/tools/{tool}     call one; the reply streams ToolChunks (NDJSON)

Every route but `/health` needs `Authorization: Bearer <token>`, the token the workspace
minted at `initialize()`. Run it as `python -m workspaces.gateway.app --socket PATH` (or
`--port N`, listening on every interface of the sandbox); the token
is the first line of its stdin (never argv or the environment, which other processes in the
container can read), and it exits when its stdin ends.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import secrets
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import uvicorn
from fastapi import Depends, FastAPI, HTTPException, Request, Response
from fastapi.responses import StreamingResponse

from agent_core.errors import MCPError
from agent_core.mcp import MCPClient, MCPClientConfig
from workspaces.gateway.protocol import RegisteredMCP, ToolCallRequest

log = logging.getLogger(__name__)


class _Registry:
    """The gateway's MCP clients by name."""

    def __init__(self) -> None:
        self.clients: dict[str, MCPClient] = {}
        self.lock = asyncio.Lock()

    def get(self, name: str) -> MCPClient:
        client = self.clients.get(name)
        if client is None:
            raise HTTPException(404, f"MCP server {name!r} is not registered")
        return client

    async def close(self) -> None:
        clients, self.clients = list(self.clients.values()), {}
        await asyncio.gather(*(client.close() for client in clients))


def build_app(token: str) -> FastAPI:
    """The gateway app, accepting requests that carry `token`.

    Args:
        token: The bearer token the workspace minted.
    """
    registry = _Registry()
    expected = f"Bearer {token}".encode()

    def authorized(request: Request) -> None:
        header = request.headers.get("authorization", "").encode()
        if not secrets.compare_digest(header, expected):
            raise HTTPException(401, "invalid or missing gateway token")

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await registry.close()

    app = FastAPI(title="Troupe MCP gateway", lifespan=lifespan)
    guarded = [Depends(authorized)]

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/mcps", dependencies=guarded)
    async def list_mcps() -> list[RegisteredMCP]:
        return [
            RegisteredMCP(config=client.config, connected=client.is_connected)
            for client in registry.clients.values()
        ]

    @app.post("/mcps", dependencies=guarded, status_code=201)
    async def add_mcp(config: MCPClientConfig, response: Response) -> RegisteredMCP:
        async with registry.lock:
            existing = registry.clients.get(config.name)
            if existing is not None:
                if existing.config != config:
                    raise HTTPException(
                        409, f"an MCP server named {config.name!r} is registered differently"
                    )
                response.status_code = 200
                await _upstream(existing.connect)
                return RegisteredMCP(config=config, connected=existing.is_connected)
            try:
                client = MCPClient.from_config(config)
            except MCPError as exc:
                raise HTTPException(400, str(exc)) from exc
            await _upstream(client.connect)
            registry.clients[config.name] = client
            return RegisteredMCP(config=config, connected=client.is_connected)

    @app.delete("/mcps/{name}", dependencies=guarded, status_code=204)
    async def remove_mcp(name: str) -> Response:
        async with registry.lock:
            client = registry.get(name)
            del registry.clients[name]
        await client.close()
        return Response(status_code=204)

    @app.get("/mcps/{name}/tools", dependencies=guarded)
    async def list_tools(name: str) -> list[dict[str, Any]]:
        tools = await _upstream(registry.get(name).list_tools)
        return [
            tool.mcp_tool.model_dump(mode="json", by_alias=True, exclude_none=True)
            for tool in tools
        ]

    @app.post("/mcps/{name}/tools/{tool}", dependencies=guarded)
    async def call_tool(name: str, tool: str, body: ToolCallRequest) -> StreamingResponse:
        client = registry.get(name)

        async def frames() -> AsyncIterator[bytes]:
            # Closing this stream (the host went away) cancels the call upstream.
            stream = client.call_tool(tool, body.arguments, timeout=body.timeout)
            async with contextlib.aclosing(stream):
                async for chunk in stream:
                    yield chunk.model_dump_json().encode() + b"\n"

        return StreamingResponse(frames(), media_type="application/x-ndjson")

    return app


async def _upstream(action: Callable[[], Awaitable[Any]]) -> Any:
    """Run an MCP client action; its failure becomes a 502 naming the cause."""
    try:
        return await action()
    except MCPError as exc:
        raise HTTPException(502, str(exc)) from exc


async def serve(socket_path: str | None, port: int | None = None) -> None:
    """Read the token from stdin, then serve on `socket_path` (or `port`) until stdin ends."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    token = (await reader.readline()).decode().strip()
    if not token:
        raise SystemExit("gateway: no token on stdin")
    where: dict[str, Any] = (
        {"uds": socket_path} if port is None else {"host": "0.0.0.0", "port": port}
    )
    config = uvicorn.Config(build_app(token), log_level="warning", lifespan="on", **where)
    server = uvicorn.Server(config)

    async def watch_stdin() -> None:
        while await reader.read(4096):
            pass
        server.should_exit = True

    watcher = asyncio.create_task(watch_stdin())
    try:
        await server.serve()
    finally:
        watcher.cancel()


def main() -> None:
    """`python -m workspaces.gateway.app --socket PATH | --port N` (token on stdin)."""
    parser = argparse.ArgumentParser(prog="python -m workspaces.gateway.app")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--socket", help="The unix socket to listen on.")
    where.add_argument("--port", type=int, help="The TCP port to listen on (all interfaces).")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="gateway: %(levelname)s %(message)s")
    asyncio.run(serve(args.socket, args.port))


if __name__ == "__main__":
    main()
