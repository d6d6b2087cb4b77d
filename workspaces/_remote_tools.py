"""`RemoteTools`: the tool host and MCP gateway a workspace runs elsewhere (a container, a sandbox).

The workspace starts each in its own way and hands them over: `tool_host`, the gateway's
process (`watch_gateway`, which keeps its output flowing, its last lines explaining a failure)
and its `gateway` connection. `aclose` stops whatever was started, in order, and never raises.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Callable
from typing import Any, Protocol

from agent_core.errors import MCPError
from agent_core.mcp import MCPClient, MCPClientConfig
from workspaces.errors import WorkspaceError
from workspaces.gateway.client import GatewayConnection, GatewayMCPClient
from workspaces.toolhost import ToolHost

log = logging.getLogger(__name__)

_GATEWAY_START_TIMEOUT = 60.0
# The gateway's last output lines, kept to explain a failure to start.
_GATEWAY_LOG_LINES = 20


class GatewayProcess(Protocol):
    """The gateway's running process, as its workspace sees it."""

    async def readline(self) -> bytes:
        """The next line of its stdout, b"" at the end."""
        ...

    async def read_stderr_line(self) -> bytes:
        """The next line of its stderr, b"" at the end."""
        ...

    async def aclose(self) -> None:
        """Stop it and release its stream."""
        ...


class RemoteTools:
    """The tool host and MCP gateway of one workspace, while it is open.

    Args:
        workspace_id: The workspace's id (for messages and logs).
    """

    def __init__(self, workspace_id: str) -> None:
        self.workspace_id = workspace_id
        self.tool_host: ToolHost | None = None
        self.gateway: GatewayConnection | None = None
        self.gateway_log: collections.deque[str] = collections.deque(maxlen=_GATEWAY_LOG_LINES)
        self._process: GatewayProcess | None = None
        self._drain: asyncio.Task[None] | None = None

    def watch_gateway(self, process: GatewayProcess) -> asyncio.Task[None]:
        """Own the gateway's `process`; return the task reading its output (done at its end)."""
        self._process = process
        self._drain = asyncio.create_task(self._drain_output(process))
        return self._drain

    async def wait_for_gateway(
        self,
        gateway: GatewayConnection,
        exited: Callable[[], bool],
        poll: float,
        unavailable: type[WorkspaceError],
    ) -> None:
        """Keep `gateway` once it answers its health check.

        Raises:
            WorkspaceError: `unavailable`, when the process `exited` first or it did not answer
                in time; its last output lines say why.
        """
        self.gateway = gateway
        deadline = asyncio.get_running_loop().time() + _GATEWAY_START_TIMEOUT
        while not await gateway.health():
            if exited() or asyncio.get_running_loop().time() > deadline:
                tail = "; ".join(self.gateway_log) or "no output"
                raise unavailable(f"the workspace's MCP gateway did not start: {tail}")
            await asyncio.sleep(poll)

    def mcp_client(self, config: MCPClientConfig) -> MCPClient:
        """A client of the server as the workspace's gateway runs it.

        Raises:
            MCPError: No gateway is running.
        """
        if self.gateway is None:
            raise MCPError(f"workspace {self.workspace_id!r} has no running MCP gateway")
        return GatewayMCPClient(config, self.gateway)

    async def aclose(self) -> None:
        """Stop the tool host, then the gateway and its process; never raises."""
        tool_host, self.tool_host = self.tool_host, None
        if tool_host is not None:
            await tool_host.aclose()
        gateway, self.gateway = self.gateway, None
        if gateway is not None:
            await gateway.aclose()
        process, self._process = self._process, None
        if process is not None:
            await process.aclose()
        drain, self._drain = self._drain, None
        if drain is not None:
            drain.cancel()
            await asyncio.gather(drain, return_exceptions=True)

    async def _drain_output(self, process: GatewayProcess) -> None:
        async def lines(read: Any) -> None:
            while line := await read():
                text = line.decode(errors="replace").rstrip()
                self.gateway_log.append(text)
                log.debug("gateway of %s: %s", self.workspace_id, text)

        await asyncio.gather(lines(process.readline), lines(process.read_stderr_line))
