"""MCPClient: one MCP server's tools, over a long-lived session or a fresh session per call."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, TypeVar

from mcp import Client
from mcp.types import CallToolResult, Tool

from agent_core.errors import MCPError
from agent_core.mcp._session import Connection, connection_lost, describe, open_client
from agent_core.mcp.config import HttpMCPConfig, MCPClientConfig, StdioMCPConfig
from agent_core.mcp.tool import MCPTool, error_chunk, progress_chunk, result_chunk
from agent_core.tool.base import ToolChunk

Launcher = Callable[[StdioMCPConfig], StdioMCPConfig]
"""Rewrites a stdio server's launch command (e.g. to run it inside a sandbox)."""

logger = logging.getLogger(__name__)

T = TypeVar("T")
# A server that keeps handing out cursors must not make a listing loop forever.
_MAX_PAGES = 100


class MCPClient:
    """A client of one MCP server, handing out its tools as `MCPTool` adapters.

    A stateful client keeps one session open between `connect()` and `close()` (or for the
    body of `async with`), over stdio or HTTP. When that session dies (the server crashed or
    was restarted), the call that finds out ends with an ERROR result and the next call opens
    a new session. A stateless client opens a fresh session for every listing and every call
    and needs no lifecycle; it is HTTP-only, since a fresh stdio session would mean a new
    server process per call (such a configuration is rejected).

    Tool calls never raise: failures reach the model as ERROR results. Connecting and listing
    raise `MCPError`.
    """

    def __init__(
        self,
        name: str,
        is_stateful: bool,
        mcp_config: StdioMCPConfig | HttpMCPConfig,
        enable_tools: list[str] | None = None,
        disable_tools: list[str] | None = None,
        timeout: float = 60.0,
        *,
        launcher: Launcher | None = None,
    ) -> None:
        """Describe the server; nothing is contacted until `connect()` or a stateless listing.

        Args:
            name: Server name (letters, digits, '_' and '-'); tools become mcp__{name}__{tool}.
            is_stateful: Keep one session open (stdio or HTTP) rather than one per call (HTTP).
            mcp_config: How to reach the server.
            enable_tools: Expose only these server tools (None: all).
            disable_tools: Never expose these server tools.
            timeout: Seconds allowed to connect, to list tools, and for each tool call.
            launcher: Rewrites a stdio server's command line before it starts (a workspace
                runs it inside its sandbox this way); the configuration is kept as given.

        Raises:
            MCPError: When the configuration is invalid (bad name, stateless stdio, ...).
        """
        try:
            self._config = MCPClientConfig(
                name=name,
                is_stateful=is_stateful,
                mcp_config=mcp_config,
                enable_tools=enable_tools,
                disable_tools=disable_tools,
                timeout=timeout,
            )
        except ValueError as exc:
            raise MCPError(f"invalid configuration for MCP client {name!r}: {exc}") from exc
        if not is_stateful and isinstance(mcp_config, StdioMCPConfig):
            raise MCPError(
                f"MCP client {name!r}: a stdio server needs is_stateful=True "
                "(stateless sessions are supported over HTTP only)"
            )
        self._launcher = launcher
        self._connection: Connection | None = None
        self._wanted = False
        self._lock = asyncio.Lock()

    @classmethod
    def from_config(cls, config: MCPClientConfig, *, launcher: Launcher | None = None) -> MCPClient:
        """Build a client from its persisted configuration.

        Args:
            config: The configuration.
            launcher: See `__init__`.

        Raises:
            MCPError: When the configuration is invalid.
        """
        return cls(**dict(config), launcher=launcher)

    @property
    def config(self) -> MCPClientConfig:
        """The client's configuration, as a workspace persists it."""
        return self._config

    @property
    def name(self) -> str:
        """The server name."""
        return self._config.name

    @property
    def is_stateful(self) -> bool:
        """Whether the client keeps one session open."""
        return self._config.is_stateful

    @property
    def mcp_config(self) -> StdioMCPConfig | HttpMCPConfig:
        """How the server is reached."""
        return self._config.mcp_config

    @property
    def _launch_config(self) -> StdioMCPConfig | HttpMCPConfig:
        """The transport actually opened: a stdio command line as the launcher rewrote it."""
        config = self._config.mcp_config
        if self._launcher is not None and isinstance(config, StdioMCPConfig):
            return self._launcher(config)
        return config

    @property
    def timeout(self) -> float:
        """Seconds allowed to connect, to list tools, and for each tool call."""
        return self._config.timeout

    @property
    def is_connected(self) -> bool:
        """Whether a stateful session is open and usable (always False when stateless)."""
        return self._connection is not None and self._connection.alive

    async def connect(self) -> None:
        """Open the stateful session (a no-op when stateless or already connected).

        Raises:
            MCPError: When the server cannot be started/reached or the handshake fails.
        """
        if not self.is_stateful:
            return
        self._wanted = True
        await self._live_connection()

    async def close(self) -> None:
        """Close the stateful session, stopping a stdio server (a no-op when not connected)."""
        self._wanted = False
        async with self._lock:
            connection, self._connection = self._connection, None
        if connection is not None:
            await connection.close()

    async def __aenter__(self) -> MCPClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def list_tools(self) -> list[MCPTool]:
        """List the server's tools, filtered by `enable_tools` / `disable_tools`.

        Returns:
            One adapter per exposed tool, in the server's order.

        Raises:
            MCPError: When the client is stateful but not connected, the server cannot be
                reached, or the listing fails or times out.
        """
        failure = f"cannot list the tools of MCP server {self.name!r}"
        try:
            async with asyncio.timeout(self.timeout):
                tools = await self._with_session(_list_all)
        except MCPError:
            raise
        except TimeoutError as exc:
            raise MCPError(f"{failure}: no answer within {self.timeout} s") from exc
        except Exception as exc:
            raise MCPError(f"{failure}: {describe(exc)}") from exc
        return [MCPTool(self, tool) for tool in tools if self._exposed(tool.name)]

    # The timeout must bound the server's work only, never the consumer's handling of a
    # yielded chunk, so it cannot be an `asyncio.timeout` around the iteration.
    async def call_tool(
        self,
        tool_name: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> AsyncGenerator[ToolChunk, None]:
        """Call one of the server's tools, streaming its progress and then its result.

        Args:
            tool_name: The tool's name on the server (not the mcp__ name).
            arguments: The tool's arguments.
            timeout: Seconds the call may take (default: the client's `timeout`).

        Yields:
            A RUNNING chunk per progress notification (`metadata["progress"]` holds progress,
            total and message), then one final chunk: the converted result, SUCCESS or ERROR
            (`isError`), or an ERROR naming why there is no result (server unreachable,
            connection lost, protocol error, timeout).
        """
        limit = self.timeout if timeout is None else timeout
        updates: asyncio.Queue[ToolChunk] = asyncio.Queue()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            updates.put_nowait(progress_chunk(progress, total, message))

        async def call(client: Client) -> ToolChunk:
            result: CallToolResult = await client.call_tool(
                tool_name, arguments, progress_callback=on_progress
            )
            return result_chunk(result)

        async def run() -> None:
            try:
                chunk = await self._with_session(call)
            except Exception as exc:
                chunk = error_chunk(self._call_failure(tool_name, exc))
            updates.put_nowait(chunk)

        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        worker = asyncio.create_task(run(), name=f"mcp-call:{self.name}:{tool_name}")
        try:
            while True:
                try:
                    async with asyncio.timeout_at(deadline):
                        chunk = await updates.get()
                except TimeoutError:
                    yield error_chunk(
                        f"MCP tool '{tool_name}' on server '{self.name}' timed out after {limit} s"
                    )
                    return
                yield chunk
                if chunk.is_last:
                    return
        finally:
            # Cancelling the SDK request also tells the server to stop working on it.
            worker.cancel()
            await asyncio.wait({worker})

    def _exposed(self, tool_name: str) -> bool:
        enabled = self._config.enable_tools
        disabled = self._config.disable_tools or ()
        return (enabled is None or tool_name in enabled) and tool_name not in disabled

    def _call_failure(self, tool_name: str, exc: Exception) -> str:
        where = f"MCP tool '{tool_name}' on server '{self.name}'"
        if isinstance(exc, MCPError):
            return f"{where} could not run: {exc}"
        if self.is_stateful and connection_lost(exc):
            return (
                f"{where} failed: the connection to the server was lost ({describe(exc)}); "
                "the next call reconnects"
            )
        return f"{where} failed: {describe(exc)}"

    async def _with_session(self, action: Callable[[Client], Awaitable[T]]) -> T:
        """Run `action` on the stateful session, or on a fresh one when stateless.

        Raises:
            MCPError: When the stateful client is not connected or cannot reconnect.
            Exception: Whatever `action` raised; a lost connection is remembered so that the
                next request reconnects.
        """
        if not self.is_stateful:
            async with open_client(self._launch_config) as client:
                return await action(client)
        connection = await self._live_connection()
        try:
            return await action(connection.client)
        except Exception as exc:
            if connection_lost(exc):
                logger.info("MCP server %r: connection lost (%s)", self.name, describe(exc))
                connection.mark_broken()
            raise

    async def _live_connection(self) -> Connection:
        """The open session, reopened first if it died.

        Raises:
            MCPError: When the client was never connected (or was closed), or reconnecting
                fails.
        """
        async with self._lock:
            if not self._wanted:
                raise MCPError(f"MCP client {self.name!r} is not connected; call connect() first")
            if self._connection is not None and self._connection.alive:
                return self._connection
            stale, self._connection = self._connection, None
            if stale is not None:
                await stale.close()
            failure = f"cannot connect to MCP server {self.name!r}"
            try:
                async with asyncio.timeout(self.timeout):
                    self._connection = await Connection.open(self._launch_config)
            except TimeoutError as exc:
                raise MCPError(f"{failure}: no handshake within {self.timeout} s") from exc
            except Exception as exc:
                raise MCPError(f"{failure}: {describe(exc)}") from exc
            return self._connection

    def __repr__(self) -> str:
        mode = "stateful" if self.is_stateful else "stateless"
        return f"MCPClient(name={self.name!r}, {mode}, {self.mcp_config.type})"


async def _list_all(client: Client) -> list[Tool]:
    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools
