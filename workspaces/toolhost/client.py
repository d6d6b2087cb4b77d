"""`ToolHostProcess`: starts a workspace's tool host and is the `ToolExecutor` for its tools."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field

from agent_core.tool.builtin.runner import final_error
from agent_core.tool.execution import ToolInvocation, ToolOutput
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


@dataclass(frozen=True)
class _Exited:
    """The process ended while a call was waiting for frames."""

    reason: str


_Item = OutputReply | EndReply | _Exited


@dataclass
class _Connection:
    process: asyncio.subprocess.Process
    calls: dict[str, asyncio.Queue[_Item]] = field(default_factory=dict)
    stderr: collections.deque[str] = field(
        default_factory=lambda: collections.deque(maxlen=_STDERR_LINES)
    )
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    exit_reason: str | None = None
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    async def send(self, frame: CallRequest | CancelRequest) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        async with self.lock:
            stdin.write(frame.model_dump_json().encode() + b"\n")
            await stdin.drain()


class ToolHostProcess:
    """One tool host process per workspace, started on first use and restarted after a death.

    Calls are multiplexed over the process's stdin/stdout. When the process dies, the calls
    in flight end with an ERROR result saying so and the next call starts a new process.
    """

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
        self._connection: _Connection | None = None
        self._starting = asyncio.Lock()
        self._closed = False

    @property
    def pid(self) -> int | None:
        """The live process's pid, if one runs."""
        connection = self._connection
        if connection is None or connection.exit_reason is not None:
            return None
        return connection.process.pid

    async def _connect(self) -> _Connection:
        async with self._starting:
            connection = self._connection
            if connection is not None and connection.exit_reason is None:
                return connection
            if self._closed:
                raise WorkspaceError("the workspace's tool host is closed")
            try:
                process = await asyncio.create_subprocess_exec(
                    *self.argv,
                    env=self.env,
                    cwd=self.cwd,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    limit=MAX_LINE,
                    start_new_session=True,
                )
            except OSError as exc:
                raise WorkspaceError(f"cannot start the tool host {self.argv[0]!r}: {exc}") from exc
            connection = _Connection(process)
            loop = asyncio.get_running_loop()
            connection.tasks = [
                loop.create_task(self._read_replies(connection)),
                loop.create_task(self._read_stderr(connection)),
            ]
            self._connection = connection
            return connection

    async def _read_stderr(self, connection: _Connection) -> None:
        stderr = connection.process.stderr
        assert stderr is not None
        while line := await stderr.readline():
            text = line.decode(errors="replace").rstrip()
            connection.stderr.append(text)
            log.debug("tool host %d: %s", connection.process.pid, text)

    async def _read_replies(self, connection: _Connection) -> None:
        stdout = connection.process.stdout
        assert stdout is not None
        stopped = ""
        try:
            while line := await stdout.readline():
                reply = REPLIES.validate_json(line)
                queue = connection.calls.get(reply.call_id)
                if queue is not None:
                    queue.put_nowait(reply)
        except (ValueError, asyncio.LimitOverrunError) as exc:
            log.error("tool host sent a malformed frame: %s", exc)
            stopped = "stopped after a malformed frame, "
            with contextlib.suppress(ProcessLookupError):
                connection.process.kill()
        code = await connection.process.wait()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(connection.tasks[1]), timeout=1)
        tail = "; ".join(list(connection.stderr)[-3:])
        connection.exit_reason = f"{stopped}exit code {code}" + (f": {tail}" if tail else "")
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


async def _stop(connection: _Connection) -> None:
    process = connection.process
    if process.returncode is None:
        if process.stdin is not None:
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), timeout=2)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    for task in connection.tasks:
        with contextlib.suppress(asyncio.CancelledError):
            await task
