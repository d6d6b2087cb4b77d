"""`E2BWorkspace`: a workspace living in an E2B sandbox (`e2b.AsyncSandbox`).

The sandbox's filesystem is the persistence layer — there is no host directory. The sandbox
is tagged with the metadata `workspace_id` and `user_id`; `initialize()` looks it up with
`AsyncSandbox.list(...)` and reconnects with `connect(sandbox_id=...)` (which resumes a paused
one), or creates it. `close()` pauses it (disk kept; `on_close="kill"` deletes it instead).

Inside the sandbox run two background commands (`commands.run(..., background=True,
stdin=True)`): the tool host (`python -m workspaces.toolhost`), spoken to through `send_stdin`
and the command's stdout callback, and the MCP gateway (`python -m workspaces.gateway.app
--port N`), whose bearer token is its first stdin line. The host reaches the gateway's port
the way the SDK reaches envd: the sandbox URL the connection resolves (`https://<port>-<id>.
<domain>` for a custom domain, E2B's shared sandbox host otherwise) with the `E2b-Sandbox-Id`
/ `E2b-Sandbox-Port` routing headers and, for a sandbox with restricted public traffic, its
traffic token.

Protecting the bookkeeping: the workspace lives at `/workspace`, created by `root` with mode
1777 (sticky) under the root-owned `/`; `.mcp`, `skills/`, `sessions/` and `data/` are written
as `root` through the filesystem API. The tool host and the gateway (hence every command and
MCP server) run as the sandbox's unprivileged `user`: they may create files in the workspace
and read the bookkeeping, but neither change, delete nor rename it, nor move the workspace
away. That is as far as E2B allows: root inside the sandbox is E2B's, and the sandbox as a
whole is the isolation boundary (one sandbox per workspace).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import posixpath
import secrets
import shlex
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import httpx
from e2b import (
    ApiParams,
    AsyncSandbox,
    AuthenticationException,
    SandboxException,
    SandboxQuery,
    ServiceBusyException,
)

from agent_core.mcp import MCPClient, MCPClientConfig
from agent_core.message import Msg, ToolResultBlock
from agent_core.tool import ToolBase
from agent_core.tool.builtin.runner import workspace_tools
from agent_core.tool.execution import ToolExecutor
from workspaces._env import agent_environment
from workspaces._mcps import MCPRegistry
from workspaces._remote_tools import RemoteTools
from workspaces.base import InstalledSkill, WorkspaceBase
from workspaces.e2b._channel import CommandChannel
from workspaces.e2b._store import (
    OWNER,
    SandboxArrayDocument,
    SandboxFiles,
    SandboxOffload,
    SandboxSkills,
)
from workspaces.errors import E2BUnavailable, WorkspaceClosed, WorkspaceError
from workspaces.gateway.client import GatewayConnection
from workspaces.local import DATA_DIR, MCP_FILE, SESSIONS_DIR, SKILLS_DIR
from workspaces.toolhost import ToolHost, ToolHostChannel, toolhost_command

log = logging.getLogger(__name__)

SANDBOX_WORKDIR = PurePosixPath("/workspace")
"""The workspace directory inside the sandbox, and how the agent names it."""

AGENT_USER = "user"
"""The sandbox user the tool host and the gateway run as (E2B's unprivileged default)."""

DEFAULT_TEMPLATE = "base"
DEFAULT_GATEWAY_PORT = 5600

WORKSPACE_TAG = "workspace_id"
USER_TAG = "user_id"

# What marks the workspace's own processes, to stop a previous owner's on reconnect.
_OWN_PROCESSES = ("workspaces.toolhost", "workspaces.gateway.app")
# The SDK's failures of a request that never got an answer, besides its own exceptions.
_SDK_ERRORS = (
    SandboxException,
    AuthenticationException,
    ServiceBusyException,
    httpx.HTTPError,
    OSError,
)


class E2BWorkspace(WorkspaceBase):
    """A workspace whose files, tools and MCP servers live in its own E2B sandbox."""

    def __init__(
        self,
        workspace_id: str | None = None,
        *,
        user_id: str = "",
        template: str = DEFAULT_TEMPLATE,
        timeout_seconds: int = 300,
        on_close: Literal["pause", "kill"] = "pause",
        default_mcps: Sequence[MCPClientConfig] = (),
        skill_paths: Sequence[str | Path] = (),
        python: str = "python3",
        gateway_port: int = DEFAULT_GATEWAY_PORT,
        sandbox_env: Mapping[str, str] | None = None,
        metadata: Mapping[str, str] | None = None,
        api_key: str | None = None,
        domain: str | None = None,
        api_params: ApiParams | None = None,
    ) -> None:
        """Describe the workspace; nothing is contacted until `initialize()`.

        Args:
            workspace_id: Its identifier, tagged on the sandbox (default: a fresh one).
            user_id: The owning user, tagged on the sandbox; a lookup matches it too, so a
                workspace id never reaches another user's sandbox.
            template: The E2B template: Python >= 3.11 with Troupe importable by `python`.
            timeout_seconds: The sandbox's keep-alive, renewed at each `initialize()`.
            on_close: What `close()` does to the sandbox: `pause` (disk kept, found again by
                its tags) or `kill` (deleted).
            default_mcps: MCP servers registered in a brand-new workspace.
            skill_paths: Host skill directories uploaded into a brand-new workspace.
            python: The sandbox's interpreter that runs the tool host and the gateway.
            gateway_port: The sandbox port the MCP gateway listens on.
            sandbox_env: Environment of the sandbox's own processes (set at creation); the
                agent's shell commands get a scrubbed one regardless.
            metadata: More metadata for a new sandbox (the tags win over these keys).
            api_key: The E2B API key (default: `E2B_API_KEY`).
            domain: The E2B domain (default: `E2B_DOMAIN` or E2B's).
            api_params: Further SDK connection options (`request_timeout`, `proxy`, ...).
        """
        self.workspace_id = workspace_id or uuid.uuid4().hex
        self.user_id = user_id
        self.workdir = Path(SANDBOX_WORKDIR)
        self.template = template
        self.timeout_seconds = timeout_seconds
        self.on_close = on_close
        self.default_mcps = list(default_mcps)
        self.skill_paths = [Path(p) for p in skill_paths]
        self.python = python
        self.gateway_port = gateway_port
        self.sandbox_env = dict(sandbox_env or {})
        self.metadata = dict(metadata or {})
        self.env = agent_environment(str(SANDBOX_WORKDIR))
        self._api: ApiParams = dict(api_params or {})  # type: ignore[assignment]
        if api_key is not None:
            self._api["api_key"] = api_key
        if domain is not None:
            self._api["domain"] = domain
        self.start_seconds: float | None = None
        """How long the last `initialize()` took (sandbox, tool host and gateway up)."""
        self._sandbox: AsyncSandbox | None = None
        self._mcps: MCPRegistry | None = None
        self._skills: SandboxSkills | None = None
        self._offload: SandboxOffload | None = None
        self._remote = RemoteTools(self.workspace_id)
        self._open = False

    @property
    def tags(self) -> dict[str, str]:
        """The metadata the sandbox is found by."""
        return {WORKSPACE_TAG: self.workspace_id, USER_TAG: self.user_id}

    @property
    def sandbox_id(self) -> str | None:
        """The attached sandbox's id, while the workspace is open."""
        return None if self._sandbox is None else self._sandbox.sandbox_id

    @property
    def is_open(self) -> bool:
        """Whether the workspace is initialized and not closed."""
        return self._open

    async def initialize(self) -> None:
        """Attach (or create) the sandbox, lay out and seed it, start the tool host and gateway.

        Raises:
            E2BUnavailable: The API or the sandbox cannot be reached, or a process fails to
                start in it.
            CorruptWorkspace: `.mcp` or the skill index is unreadable.
        """
        if self._open:
            return
        started = time.monotonic()
        try:
            sandbox = self._sandbox = await self._attach()
            files, lock = SandboxFiles(sandbox), asyncio.Lock()
            self._mcps = MCPRegistry(
                SandboxArrayDocument(files, SANDBOX_WORKDIR / MCP_FILE, lock), self._mcp_client
            )
            self._skills = SandboxSkills(files, SANDBOX_WORKDIR / SKILLS_DIR, lock)
            self._offload = SandboxOffload(files, SANDBOX_WORKDIR, lock)
            await self._stop_previous_processes()
            await self._lay_out()
            await self._mcps.seed(self.default_mcps)
            await self._skills.seed(self.skill_paths)
            tool_host = self._remote.tool_host = ToolHost(self._open_tool_host)
            try:
                await tool_host.start()
            except WorkspaceError as exc:
                raise E2BUnavailable(f"cannot start the tool host: {exc}") from exc
            await self._start_gateway()
            await self._mcps.sync()
        except BaseException:
            await self._teardown()
            raise
        self._open = True
        self.start_seconds = time.monotonic() - started

    async def _attach(self) -> AsyncSandbox:
        """Connect to the sandbox tagged with this workspace, or create it."""
        try:
            found = []
            paginator = AsyncSandbox.list(query=SandboxQuery(metadata=self.tags), **self._api)
            while paginator.has_next:
                found.extend(await paginator.next_items())
            if found:
                latest = max(found, key=lambda info: info.started_at)
                if len(found) > 1:
                    log.warning(
                        "%d sandboxes are tagged with workspace %r; using %s",
                        len(found),
                        self.workspace_id,
                        latest.sandbox_id,
                    )
                return await AsyncSandbox.connect(
                    latest.sandbox_id, timeout=self.timeout_seconds, **self._api
                )
            return await AsyncSandbox.create(
                self.template,
                timeout=self.timeout_seconds,
                metadata={**self.metadata, **self.tags},
                envs=self.sandbox_env,
                **self._api,
            )
        except _SDK_ERRORS as exc:
            raise E2BUnavailable(
                f"cannot get workspace {self.workspace_id!r}'s sandbox: {exc}"
            ) from exc

    async def _run_as_root(self, command: str) -> None:
        sandbox = self._require_sandbox()
        try:
            await sandbox.commands.run(command, user=OWNER, timeout=60)
        except _SDK_ERRORS as exc:
            raise E2BUnavailable(f"cannot prepare the sandbox ({command!r}): {exc}") from exc

    async def _stop_previous_processes(self) -> None:
        """Stop tool hosts and gateways a previous owner left running (e.g. before a restart)."""
        sandbox = self._require_sandbox()
        try:
            processes = await sandbox.commands.list()
        except _SDK_ERRORS as exc:
            raise E2BUnavailable(f"cannot list the sandbox's processes: {exc}") from exc
        for process in processes:
            line = " ".join([process.cmd, *process.args])
            if any(marker in line for marker in _OWN_PROCESSES):
                log.info("stopping a previous %r in %s", line[:80], sandbox.sandbox_id)
                with contextlib.suppress(*_SDK_ERRORS):
                    await sandbox.commands.kill(process.pid)

    async def _lay_out(self) -> None:
        """The root-owned workspace (sticky, world-writable) and bookkeeping directories."""
        root = shlex.quote(str(SANDBOX_WORKDIR))
        dirs = " ".join(shlex.quote(str(SANDBOX_WORKDIR / d)) for d in (DATA_DIR, SESSIONS_DIR))
        await self._run_as_root(
            f"mkdir -p {root} {dirs} && chown 0:0 {root} {dirs} "
            f"&& chmod 1777 {root} && chmod 755 {dirs}"
        )

    def _port_route(self, port: int) -> tuple[str, dict[str, str]]:
        """The URL and headers that reach `port` of the sandbox (as the SDK reaches envd)."""
        sandbox = self._require_sandbox()
        config = sandbox.connection_config
        url = config.get_sandbox_url(sandbox.sandbox_id, sandbox.sandbox_domain, port)
        headers = {"E2b-Sandbox-Id": sandbox.sandbox_id, "E2b-Sandbox-Port": str(port)}
        if sandbox.traffic_access_token:
            headers["e2b-traffic-access-token"] = sandbox.traffic_access_token
        return url, headers

    async def _start_gateway(self) -> None:
        sandbox = self._require_sandbox()
        token = secrets.token_urlsafe(32)
        argv = [self.python, "-m", "workspaces.gateway.app", "--port", str(self.gateway_port)]
        try:
            process = await CommandChannel.start(
                sandbox,
                "exec " + shlex.join(argv),
                cwd=str(SANDBOX_WORKDIR),
                user=AGENT_USER,
                envs={},
            )
        except WorkspaceError as exc:
            raise E2BUnavailable(str(exc)) from exc
        self._remote.watch_gateway(process)
        try:
            await process.write(token.encode() + b"\n")
        except ConnectionError as exc:
            raise E2BUnavailable(f"cannot hand the MCP gateway its token: {exc}") from exc
        url, headers = self._port_route(self.gateway_port)
        gateway = GatewayConnection(None, token, url=url, headers=headers)
        await self._remote.wait_for_gateway(gateway, lambda: process.exited, 0.1, E2BUnavailable)

    async def _open_tool_host(self) -> ToolHostChannel:
        sandbox = self._sandbox
        if sandbox is None:
            raise WorkspaceClosed(f"workspace {self.workspace_id!r} is not open")
        argv = toolhost_command(self.python, agent_env=self.env)
        return await CommandChannel.start(
            sandbox, "exec " + shlex.join(argv), cwd=str(SANDBOX_WORKDIR), user=AGENT_USER, envs={}
        )

    def _mcp_client(self, config: MCPClientConfig) -> MCPClient:
        """A client of the server as the sandbox's gateway runs it."""
        return self._remote.mcp_client(config)

    def _require_sandbox(self) -> AsyncSandbox:
        if self._sandbox is None:
            raise WorkspaceClosed(f"workspace {self.workspace_id!r} is not open")
        return self._sandbox

    def _check_open(self) -> None:
        if not self._open:
            raise WorkspaceClosed(f"workspace {self.workspace_id!r} is not open")

    async def close(self) -> None:
        """Stop the MCP servers and processes, then pause (or kill) the sandbox. Idempotent."""
        self._open = False
        if self._mcps is not None:
            await self._mcps.close()
        await self._teardown()

    async def _teardown(self) -> None:
        """Release whatever `initialize()` started, then the sandbox; never raises."""
        await self._remote.aclose()
        sandbox, self._sandbox = self._sandbox, None
        if sandbox is None:
            return
        try:
            if self.on_close == "kill":
                await sandbox.kill()
            else:
                await sandbox.pause()
        except _SDK_ERRORS as exc:
            log.warning("cannot %s sandbox %s: %s", self.on_close, sandbox.sandbox_id, exc)

    @property
    def mcp_errors(self) -> dict[str, str]:
        """Why `.mcp` entries failed to load or connect at the last reconciliation."""
        return {} if self._mcps is None else self._mcps.errors

    def working_directory(self, cwd: str | Path | None = None) -> Path:
        """`cwd` made absolute against `/workspace` (inside the sandbox)."""
        self._check_open()
        if cwd is None or str(cwd) == "":
            return self.workdir
        return Path(posixpath.normpath(PurePosixPath(self.workdir, cwd)))

    def tool_executor(self) -> ToolExecutor:
        """Calls run in the sandbox's tool host.

        Raises:
            WorkspaceClosed: The workspace is not open.
        """
        if self._remote.tool_host is None:
            raise WorkspaceClosed(f"workspace {self.workspace_id!r} is not open")
        return self._remote.tool_host

    def builtin_tools(self, cwd: str | Path | None = None) -> list[ToolBase]:
        """The built-in tools bound to `working_directory(cwd)`, run inside the sandbox."""
        where = self.working_directory(cwd)
        return [tool.bind(self.tool_executor()) for tool in workspace_tools(where)]

    async def list_mcps(self) -> list[MCPClient]:
        """The MCP clients registered in the sandbox's `.mcp`, in its order."""
        mcps = self._stores()[0]
        await mcps.sync()
        return mcps.clients

    async def add_mcp(self, config: MCPClientConfig) -> MCPClient:
        """Register the server with the gateway (when stateful) and append it to `.mcp`."""
        return await self._stores()[0].add(config)

    async def remove_mcp(self, name: str) -> None:
        """Drop the server from `.mcp` and the gateway."""
        await self._stores()[0].remove(name)

    async def installed_skills(self) -> list[InstalledSkill]:
        """The skills under `skills/` in the sandbox."""
        return await self._stores()[1].installed()

    async def add_skill(self, skill_path: str | Path) -> InstalledSkill:
        """Upload the host skill directory to `skills/<name>/` and index its hash."""
        return await self._stores()[1].add(Path(skill_path))

    async def remove_skill(self, name: str) -> None:
        """Delete `skills/<name>/` and its index entry."""
        await self._stores()[1].remove(name)

    async def offload_context(self, session_id: str, msgs: list[Msg], **kwargs: Any) -> str:
        """Append `msgs` to `sessions/<session_id>/context.jsonl`; return its sandbox path."""
        return str(await self._stores()[2].context(session_id, msgs))

    async def offload_tool_result(
        self, session_id: str, tool_result: ToolResultBlock, **kwargs: Any
    ) -> str:
        """Write `sessions/<session_id>/tool_result-<id>.txt`; return its sandbox path."""
        return str(await self._stores()[2].tool_result(session_id, tool_result))

    async def clear_session(self, session_id: str) -> None:
        """Delete `sessions/<session_id>/`."""
        await self._stores()[2].clear(session_id)

    def _stores(self) -> tuple[MCPRegistry, SandboxSkills, SandboxOffload]:
        self._check_open()
        assert self._mcps is not None
        assert self._skills is not None
        assert self._offload is not None
        return self._mcps, self._skills, self._offload

    def __repr__(self) -> str:
        return f"E2BWorkspace(workspace_id={self.workspace_id!r}, sandbox={self.sandbox_id!r})"
