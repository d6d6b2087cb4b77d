"""Opening MCP sessions with the `mcp` SDK, and keeping a stateful one alive in its own task."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import AsyncIterator
from typing import Any, cast

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client import Transport
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError as ProtocolError
from mcp.types import CONNECTION_CLOSED, Implementation

import agent_core
from agent_core.mcp.config import HttpMCPConfig, StdioMCPConfig

logger = logging.getLogger(__name__)

_CLIENT_INFO = Implementation(name="troupe", version=agent_core.__version__)
# How long a graceful close may take before the session task is cancelled. The SDK's stdio
# shutdown alone waits up to 2 s for the server to exit before killing it.
_CLOSE_GRACE = 5.0


def _transport(config: StdioMCPConfig | HttpMCPConfig) -> Transport:
    if isinstance(config, StdioMCPConfig):
        params = StdioServerParameters(
            command=config.command, args=config.args, env=config.env, cwd=config.cwd
        )
        return stdio_client(params, errlog=sys.stderr)
    if config.transport == "sse":
        # The SDK leaves `sse_client`'s return unannotated; it yields the same stream pair.
        transport = sse_client(
            config.url,
            headers=config.headers,
            timeout=config.timeout,
            sse_read_timeout=config.sse_read_timeout,
        )
        return cast(Transport, transport)
    http = httpx2.AsyncClient(
        headers=config.headers,
        timeout=httpx2.Timeout(config.timeout, read=config.sse_read_timeout),
    )
    return _owning(http, streamable_http_client(config.url, http_client=http))


@contextlib.asynccontextmanager
async def _owning(http: httpx2.AsyncClient, transport: Transport) -> AsyncIterator[tuple[Any, Any]]:
    # The SDK does not close an httpx client it was handed, so the transport's lifetime owns it.
    async with http, transport as streams:
        yield streams


def open_client(config: StdioMCPConfig | HttpMCPConfig) -> Client:
    """Return an un-entered SDK client for `config` (enter it to open a session)."""
    # Response caching is off: a listing must reflect the server as it is now.
    return Client(_transport(config), client_info=_CLIENT_INFO, cache=None)


def describe(exc: BaseException) -> str:
    """A one-line account of a failure, digging the cause out of anyio's exception groups."""
    while isinstance(exc, BaseExceptionGroup):
        leaves = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = (leaves or list(exc.exceptions))[0]
    if isinstance(exc, ProtocolError):
        return f"MCP error {exc.code}: {exc.message}"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def connection_lost(exc: BaseException) -> bool:
    """Whether `exc` means the session is gone (rather than one request having failed)."""
    if isinstance(exc, ProtocolError):
        return exc.code == CONNECTION_CLOSED
    return not isinstance(exc, TimeoutError)


class Connection:
    """One open session, entered and exited by a task of its own.

    The SDK's transports are anyio task groups, which must be exited by the task that entered
    them; a dedicated task lets `connect()` and `close()` come from different tasks, and keeps a
    transport crash from cancelling whoever happens to be calling a tool at the time.
    """

    def __init__(self, config: StdioMCPConfig | HttpMCPConfig) -> None:
        self._config = config
        self._stop = asyncio.Event()
        self._broken = False
        self._client: Client | None = None
        self._ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, config: StdioMCPConfig | HttpMCPConfig) -> Connection:
        """Open a session and wait until it is initialised (bound it with `asyncio.timeout`).

        Raises:
            Exception: Whatever the transport or the handshake raised.
        """
        conn = cls(config)
        conn._task = asyncio.create_task(conn._run(), name=f"mcp-session:{config.type}")
        try:
            await conn._ready
        except BaseException:
            await conn.close()
            raise
        return conn

    @property
    def client(self) -> Client:
        """The entered SDK client.

        Raises:
            ProtocolError: CONNECTION_CLOSED, when the session has ended.
        """
        if self._client is None:
            raise ProtocolError(code=CONNECTION_CLOSED, message="the session has ended")
        return self._client

    @property
    def alive(self) -> bool:
        """Whether the session is still usable."""
        return not self._broken and self._task is not None and not self._task.done()

    def mark_broken(self) -> None:
        """Record that a request found the connection gone; the next user reconnects."""
        self._broken = True

    async def close(self) -> None:
        """End the session (stopping a stdio server), waiting a bounded time."""
        self._stop.set()
        if self._task is None:
            return
        # A session still in its handshake is not waiting for the stop signal: cancel it.
        grace = _CLOSE_GRACE if self._client is not None else 0
        _, pending = await asyncio.wait({self._task}, timeout=grace)
        if pending:
            self._task.cancel()
            await asyncio.wait({self._task})

    async def _run(self) -> None:
        try:
            async with open_client(self._config) as client:
                self._client = client
                if not self._ready.done():
                    self._ready.set_result(None)
                await self._stop.wait()
        except Exception as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            else:
                logger.debug("MCP session ended: %s", describe(exc))
        finally:
            self._broken = True
            self._client = None
