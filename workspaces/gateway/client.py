"""The host side of the MCP gateway: `GatewayMCPClient` and `GatewayMCPTool`.

They stand in for `MCPClient` and `MCPTool` when the MCP servers run inside a workspace's
container or sandbox: the same names, schemas, errors and streaming, with every operation an
HTTP request to the workspace's gateway (see `workspaces.gateway.app`), over its unix socket
or a URL the sandbox exposes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import httpx
from mcp.types import Tool

from agent_core.errors import MCPError
from agent_core.mcp import MCPClientConfig
from agent_core.mcp.client import MCPClient
from agent_core.mcp.tool import MCPTool, error_chunk
from agent_core.tool.base import ToolChunk
from workspaces.gateway.protocol import ToolCallRequest

# Extra seconds the host waits beyond a call's own timeout, which the gateway enforces.
_GRACE = 10.0


class GatewayConnection:
    """The host's line to one workspace's gateway: where it listens and its bearer token."""

    def __init__(
        self,
        socket_path: str | Path | None,
        token: str,
        *,
        timeout: float = 30.0,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Talk to the gateway listening on `socket_path` (or at `url`), presenting `token`.

        Args:
            socket_path: The gateway's socket, as the host sees it; None with `url`.
            token: The bearer token the gateway was started with.
            timeout: Seconds to connect and for each request that does not say otherwise.
            url: The gateway's base URL, when it is reached over the network instead.
            headers: Extra headers of every request (e.g. a sandbox proxy's routing).

        Raises:
            ValueError: Neither or both of `socket_path` and `url` are given.
        """
        if (socket_path is None) == (url is None):
            raise ValueError("give the gateway's socket_path or its url, not both")
        self.socket_path = None if socket_path is None else Path(socket_path)
        transport = None if socket_path is None else httpx.AsyncHTTPTransport(uds=str(socket_path))
        self._http = httpx.AsyncClient(
            transport=transport,
            base_url=url or "http://gateway",
            headers={**(headers or {}), "Authorization": f"Bearer {token}"},
            timeout=timeout,
        )

    async def health(self) -> bool:
        """Whether the gateway answers `/health`."""
        try:
            response = await self._http.get("/health")
        except httpx.HTTPError:
            return False
        return response.status_code == 200

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> httpx.Response:
        """Send one request; a 4xx/5xx answer or a broken connection raises.

        Raises:
            MCPError: The gateway cannot be reached or refused the request (its reason).
        """
        options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        try:
            response = await self._http.request(method, path, json=body, **options)
        except httpx.HTTPError as exc:
            raise MCPError(f"the workspace's MCP gateway cannot be reached: {_why(exc)}") from exc
        if response.is_error:
            raise MCPError(_detail(response.status_code, response.content))
        return response

    @contextlib.asynccontextmanager
    async def stream(self, path: str, body: Any) -> AsyncIterator[httpx.Response]:
        """POST `body` and hold the streamed answer open for the block (no read timeout).

        Raises:
            MCPError: The gateway cannot be reached or refused the request.
        """
        try:
            request = self._http.build_request(
                "POST",
                path,
                json=body,
                timeout=httpx.Timeout(self._http.timeout.connect, read=None),
            )
            response = await self._http.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise MCPError(f"the workspace's MCP gateway cannot be reached: {_why(exc)}") from exc
        try:
            if response.is_error:
                raise MCPError(_detail(response.status_code, await response.aread()))
            yield response
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()


class GatewayMCPClient(MCPClient):
    """An `MCPClient` whose server runs behind a workspace's MCP gateway.

    `connect()` registers the server with the gateway, which starts it and holds its session;
    `close()` unregisters it (stopping a stdio server). A stateless client is registered on
    first use. Listing and calls behave as `MCPClient`'s: listing raises `MCPError`, calls
    stream progress and end with the result or an ERROR chunk.
    """

    def __init__(self, config: MCPClientConfig, gateway: GatewayConnection) -> None:
        """Describe the server; nothing is sent until `connect()` or a stateless use.

        Args:
            config: The server's configuration, as registered in the workspace.
            gateway: The workspace's gateway.

        Raises:
            MCPError: The configuration is invalid (bad name, stateless stdio, ...).
        """
        super().__init__(**dict(config))
        self.gateway = gateway
        self._connected = False
        self._registered = False

    @property
    def is_connected(self) -> bool:
        """Whether the stateful server is registered with the gateway (False when stateless)."""
        return self.is_stateful and self._connected

    async def connect(self) -> None:
        """Register the stateful server with the gateway, which connects it.

        Raises:
            MCPError: The gateway cannot be reached or cannot connect the server.
        """
        if not self.is_stateful or self._connected:
            return
        await self._register()
        self._connected = True

    async def close(self) -> None:
        """Unregister the server (the gateway closes its session); never raises."""
        self._connected = False
        if self._registered:
            self._registered = False
            with contextlib.suppress(MCPError):
                await self.gateway.request("DELETE", f"/mcps/{self.name}")

    async def _register(self) -> None:
        failure = f"cannot connect to MCP server {self.name!r}"
        try:
            await self.gateway.request(
                "POST", "/mcps", body=self.config.model_dump(mode="json"), timeout=self.timeout
            )
        except MCPError as exc:
            raise MCPError(f"{failure}: {exc}") from exc
        self._registered = True

    async def _ready(self) -> None:
        if self.is_stateful and not self._connected:
            raise MCPError(f"MCP client {self.name!r} is not connected; call connect() first")
        if not self._registered:
            await self._register()

    async def list_tools(self) -> list[MCPTool]:
        """The server's tools as the gateway lists them (filtered by the configuration).

        Raises:
            MCPError: The client is stateful but not connected, or the listing fails.
        """
        await self._ready()
        try:
            response = await self.gateway.request(
                "GET", f"/mcps/{self.name}/tools", timeout=self.timeout + _GRACE
            )
            tools = [Tool.model_validate(item) for item in response.json()]
        except (MCPError, ValueError) as exc:
            raise MCPError(f"cannot list the tools of MCP server {self.name!r}: {exc}") from exc
        return [GatewayMCPTool(self, tool) for tool in tools]

    async def call_tool(
        self,
        tool_name: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> AsyncGenerator[ToolChunk, None]:
        """Call one of the server's tools through the gateway, streaming its chunks.

        Yields:
            RUNNING progress chunks, then one final chunk: the result, or an ERROR naming
            why there is none (gateway unreachable, server failure, timeout).
        """
        limit = self.timeout if timeout is None else timeout
        where = f"MCP tool '{tool_name}' on server '{self.name}'"
        body = ToolCallRequest(arguments=arguments, timeout=limit).model_dump(mode="json")
        deadline = asyncio.get_running_loop().time() + limit + _GRACE
        try:
            await self._ready()
            async with self.gateway.stream(f"/mcps/{self.name}/tools/{tool_name}", body) as reply:
                lines = reply.aiter_lines()
                while True:
                    async with asyncio.timeout_at(deadline):
                        line = await anext(lines, None)
                    if line is None:
                        break
                    if not line.strip():
                        continue
                    chunk = ToolChunk.model_validate_json(line)
                    yield chunk
                    if chunk.is_last:
                        return
            yield error_chunk(f"{where} failed: the gateway ended the call without a result")
        except TimeoutError:
            yield error_chunk(f"{where} timed out after {limit} s")
        except (MCPError, httpx.HTTPError, ValueError) as exc:
            yield error_chunk(f"{where} could not run: {_why(exc)}")

    def __repr__(self) -> str:
        mode = "stateful" if self.is_stateful else "stateless"
        return f"GatewayMCPClient(name={self.name!r}, {mode}, {self.mcp_config.type})"


class GatewayMCPTool(MCPTool):
    """A tool of an MCP server behind a workspace's gateway.

    It is exposed exactly as `MCPTool` exposes it; calling it posts to
    `/mcps/{server}/tools/{tool}` through its `GatewayMCPClient` and rebuilds the streamed
    `ToolChunk`s.
    """

    client: GatewayMCPClient

    def __init__(self, client: GatewayMCPClient, tool: Tool) -> None:
        """Wrap `tool`, as the gateway listed it for `client`."""
        super().__init__(client, tool)


def _detail(status: int, body: bytes) -> str:
    """`HTTP <status>: <the gateway's reason>`, whatever shape the error body has."""
    try:
        detail = json.loads(body).get("detail", body.decode(errors="replace"))
    except (ValueError, AttributeError):
        detail = body.decode(errors="replace")
    if not isinstance(detail, str):
        detail = json.dumps(detail)
    return f"HTTP {status}: {detail[:500]}"


def _why(exc: BaseException) -> str:
    text = str(exc)
    if isinstance(exc, MCPError):
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
