"""The workspace side of the tool host: `ToolHost` is the `ToolExecutor` of a workspace's tools.

The tool host process runs wherever the workspace lives; `ToolHost` reaches it through a
`ToolHostChannel` (its stdin, stdout and stderr) that an opener starts on demand: a local
subprocess (`ToolHostProcess`, e.g. under bubblewrap) or a `docker exec` attached stream.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from agent_core.tool.execution import ToolInvocation, ToolOutput, final_error
from workspaces.errors import WorkspaceError
from workspaces.toolhost.protocol import (
    MAX_LINE,
    REPLIES,
    CallRequest,
    CancelRequest,
    EndReply,
    OutputReply,
)

log = logging.getLogger(__name__)

_STDERR_LINES = 20
# How long a stopping tool host may take to exit after its stdin closed.
_STOP_GRACE = 2.0


class ToolHostChannel(Protocol):
    """A running tool host process, as its workspace side sees it."""

    @property
    def pid(self) -> int | None:
        """Its process id where the caller can signal it, if known."""
        ...

    async def write(self, data: bytes) -> None:
        """Write to its stdin (raises `ConnectionError` or `RuntimeError` once it is gone)."""
        ...

    async def readline(self) -> bytes:
        """The next line of its stdout, b"" at the end.

        Raises:
            ValueError: A line is longer than `MAX_LINE`.
        """
        ...

    async def read_stderr_line(self) -> bytes:
        """The next line of its stderr, b"" at the end."""
        ...

    async def close_input(self) -> None:
        """Close its stdin (the tool host exits when its stdin ends)."""
        ...

    async def kill(self) -> None:
        """Stop it now, as far as the transport can."""
        ...

    async def wait(self) -> str:
        """Wait until it has ended; say how (e.g. `exit code 1`)."""
        ...


ChannelOpener = Callable[[], Awaitable[ToolHostChannel]]
"""Starts a tool host process and returns its channel.

Raises:
    WorkspaceError: The process cannot be started.
"""


class SubprocessChannel:
    """A tool host running as a local subprocess."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(
        cls, argv: Sequence[str], env: Mapping[str, str], cwd: str | None
    ) -> SubprocessChannel:
        """Start `argv` in its own session with piped stdio.

        Raises:
            WorkspaceError: The program cannot be started.
        """
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                env=dict(env),
                cwd=cwd,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                limit=MAX_LINE,
                start_new_session=True,
            )
        except OSError as exc:
            raise WorkspaceError(f"cannot start the tool host {argv[0]!r}: {exc}") from exc
        return cls(process)

    @property
    def pid(self) -> int | None:
        """The subprocess's pid."""
        return self.process.pid

    async def write(self, data: bytes) -> None:
        """Write to the subprocess's stdin."""
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(data)
        await stdin.drain()

    async def readline(self) -> bytes:
        """The next stdout line."""
        stdout = self.process.stdout
        assert stdout is not None
        try:
            return await stdout.readline()
        except asyncio.LimitOverrunError as exc:
            raise ValueError(f"a frame exceeds {MAX_LINE} bytes") from exc

    async def read_stderr_line(self) -> bytes:
        """The next stderr line."""
        stderr = self.process.stderr
        assert stderr is not None
        return await stderr.readline()

    async def close_input(self) -> None:
        """Close the subprocess's stdin."""
        if self.process.stdin is not None:
            self.process.stdin.close()

    async def kill(self) -> None:
        """SIGKILL the subprocess."""
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()

    async def wait(self) -> str:
        """Wait for the exit; return `exit code N`."""
        return f"exit code {await self.process.wait()}"


@dataclass
class _Exited:
    """The process ended while a call was waiting for frames."""

    reason: str


_Item = OutputReply | EndReply | _Exited


@dataclass
class _Connection:
    channel: ToolHostChannel
    calls: dict[str, asyncio.Queue[_Item]] = field(default_factory=dict)
    stderr: collections.deque[str] = field(
        default_factory=lambda: collections.deque(maxlen=_STDERR_LINES)
    )
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    exit_reason: str | None = None
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    async def send(self, frame: CallRequest | CancelRequest) -> None:
        async with self.lock:
            await self.channel.write(frame.model_dump_json().encode() + b"\n")


class ToolHost:
    """One tool host per workspace, started on first use and restarted after a death.

    Calls are multiplexed over the channel's stdin/stdout. When the process dies, the calls
    in flight end with an ERROR result saying so and the next call starts a new process.
    """

    def __init__(self, opener: ChannelOpener) -> None:
        """Describe the tool host; nothing starts until the first call.

        Args:
            opener: Starts the process and returns its channel.
        """
        self._opener = opener
        self._connection: _Connection | None = None
        self._starting = asyncio.Lock()
        self._closed = False

    @property
    def pid(self) -> int | None:
        """The live process's pid, if one runs and the transport knows it."""
        connection = self._connection
        if connection is None or connection.exit_reason is not None:
            return None
        return connection.channel.pid

    @property
    def is_running(self) -> bool:
        """Whether a tool host process is up (started and not known to have ended)."""
        connection = self._connection
        return connection is not None and connection.exit_reason is None

    async def start(self) -> None:
        """Start the process now rather than on the first call (a no-op when it runs).

        Raises:
            WorkspaceError: The process cannot be started.
        """
        await self._connect()

    async def _connect(self) -> _Connection:
        async with self._starting:
            connection = self._connection
            if connection is not None and connection.exit_reason is None:
                return connection
            if self._closed:
                raise WorkspaceError("the workspace's tool host is closed")
            connection = _Connection(await self._opener())
            loop = asyncio.get_running_loop()
            connection.tasks = [
                loop.create_task(self._read_replies(connection)),
                loop.create_task(self._read_stderr(connection)),
            ]
            self._connection = connection
            return connection

    async def _read_stderr(self, connection: _Connection) -> None:
        while line := await connection.channel.read_stderr_line():
            text = line.decode(errors="replace").rstrip()
            connection.stderr.append(text)
            log.debug("tool host %s: %s", connection.channel.pid, text)

    async def _read_replies(self, connection: _Connection) -> None:
        channel = connection.channel
        stopped = ""
        try:
            while line := await channel.readline():
                reply = REPLIES.validate_json(line)
                queue = connection.calls.get(reply.call_id)
                if queue is not None:
                    queue.put_nowait(reply)
        except ValueError as exc:
            log.error("tool host sent a malformed frame: %s", exc)
            stopped = "stopped after a malformed frame, "
            await channel.kill()
        how = await channel.wait()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(connection.tasks[1]), timeout=1)
        tail = "; ".join(list(connection.stderr)[-3:])
        connection.exit_reason = stopped + how + (f": {tail}" if tail else "")
        for queue in connection.calls.values():
            queue.put_nowait(_Exited(connection.exit_reason))

    async def execute(self, invocation: ToolInvocation) -> AsyncGenerator[ToolOutput, None]:
        """Run one call in the tool host; closing the stream early cancels it there."""
        try:
            connection = await self._connect()
        except WorkspaceError as exc:
            yield final_error(f"The workspace cannot run tools right now: {exc}")
            return
        call_id = invocation.call_id
        queue: asyncio.Queue[_Item] = asyncio.Queue()
        connection.calls[call_id] = queue
        ended = finished = False
        try:
            try:
                await connection.send(CallRequest(invocation=invocation))
            except (ConnectionError, RuntimeError) as exc:
                ended = True
                yield final_error(f"The workspace's tool process is gone: {exc}")
                return
            while True:
                item = await queue.get()
                if isinstance(item, OutputReply):
                    chunk = item.output.chunk
                    finished = finished or (chunk is not None and chunk.is_final)
                    yield item.output
                    continue
                ended = True
                if isinstance(item, _Exited):
                    if not finished:
                        yield final_error(
                            f"The workspace's tool process died while the call ran "
                            f"({item.reason}); the call's effects may be incomplete."
                        )
                elif item.error is not None and not finished:
                    yield final_error(f"The tool failed in the workspace: {item.error}")
                return
        finally:
            connection.calls.pop(call_id, None)
            if not ended and connection.exit_reason is None:
                with contextlib.suppress(ConnectionError, RuntimeError):
                    await connection.send(CancelRequest(call_id=call_id))

    async def restart(self) -> None:
        """Stop the running process (its calls end in errors); the next call starts a new one."""
        connection, self._connection = self._connection, None
        if connection is not None:
            await _stop(connection)

    async def aclose(self) -> None:
        """Stop the process for good. Idempotent."""
        self._closed = True
        await self.restart()


class ToolHostProcess(ToolHost):
    """A tool host started as a local subprocess from a command line."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | None = None,
    ) -> None:
        """Describe the process; nothing starts until the first call.

        Args:
            argv: The whole command line (e.g. `bwrap ... python -m workspaces.toolhost`).
            env: The process's whole environment.
            cwd: Where it starts.
        """
        self.argv = list(argv)
        self.env = dict(env)
        self.cwd = cwd
        super().__init__(self._start)

    async def _start(self) -> ToolHostChannel:
        return await SubprocessChannel.start(self.argv, self.env, self.cwd)


async def _stop(connection: _Connection) -> None:
    reader = connection.tasks[0]
    if not reader.done():
        with contextlib.suppress(ConnectionError, RuntimeError, OSError):
            await connection.channel.close_input()
        try:
            await asyncio.wait_for(asyncio.shield(reader), timeout=_STOP_GRACE)
        except TimeoutError:
            await connection.channel.kill()
    for task in connection.tasks:
        with contextlib.suppress(asyncio.CancelledError):
            await task


def toolhost_command(
    python: str,
    *,
    agent_env: Mapping[str, str],
    limits: Mapping[str, int] | None = None,
    child_limits: Mapping[str, int] | None = None,
) -> list[str]:
    """The command line of a tool host run by `python` (see `python -m workspaces.toolhost`).

    Args:
        python: The interpreter, as named where the tool host runs.
        agent_env: The whole environment of the shell commands it starts.
        limits: Resource limits of the tool host itself, by name (`as`, `nproc`, ...).
        child_limits: Resource limits of each shell command, by name (`cpu`, ...).
    """
    command = [python, "-m", "workspaces.toolhost"]
    for name, value in (limits or {}).items():
        command += ["--limit", f"{name}={value}"]
    for name, value in (child_limits or {}).items():
        command += ["--child-limit", f"{name}={value}"]
    return [*command, "--agent-env", json.dumps(dict(agent_env))]
