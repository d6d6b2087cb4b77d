"""`CommandChannel`: a process started in an E2B sandbox as a background command, stdin open.

E2B streams a command's output to callbacks (decoded as UTF-8) and takes its input as
separate `send_stdin` requests; the channel turns that into the byte streams the tool host's
client reads, and keeps a short tail of stderr for the error that explains a death.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping

from e2b import AsyncSandbox, CommandExitException, SandboxException
from e2b.sandbox_async.commands.command_handle import AsyncCommandHandle

from workspaces.errors import WorkspaceError
from workspaces.toolhost.protocol import MAX_LINE

log = logging.getLogger(__name__)


class CommandChannel:
    """A `ToolHostChannel` over one E2B background command (also the gateway's)."""

    def __init__(self, sandbox: AsyncSandbox, handle: AsyncCommandHandle[None]) -> None:
        self._sandbox = sandbox
        self._handle = handle
        self._stdout = asyncio.StreamReader(limit=MAX_LINE)
        self._stderr = asyncio.StreamReader(limit=MAX_LINE)
        self._watch = asyncio.create_task(self._watch_exit(), name="e2b-command-exit")

    @classmethod
    async def start(
        cls,
        sandbox: AsyncSandbox,
        command: str,
        *,
        cwd: str,
        user: str,
        envs: Mapping[str, str],
    ) -> CommandChannel:
        """Run the shell `command` in the background with its stdin open.

        Raises:
            WorkspaceError: The sandbox refused to start it.
        """
        channel: CommandChannel | None = None
        pending: list[tuple[bool, str]] = []

        def feed(is_err: bool, text: str) -> None:
            # Output may arrive before `start` returns the channel: hold it until then.
            if channel is None:
                pending.append((is_err, text))
            else:
                channel._feed(is_err, text)

        try:
            handle = await sandbox.commands.run(
                command,
                background=True,
                stdin=True,
                cwd=cwd,
                user=user,
                envs=dict(envs),
                on_stdout=lambda text: feed(False, text),
                on_stderr=lambda text: feed(True, text),
                timeout=0,  # the process lives as long as the workspace
                retain_output=False,
            )
        except SandboxException as exc:
            raise WorkspaceError(
                f"cannot start {command.split()[0]!r} in the sandbox: {exc}"
            ) from exc
        channel = cls(sandbox, handle)
        for is_err, text in pending:
            channel._feed(is_err, text)
        return channel

    def _feed(self, is_err: bool, text: str) -> None:
        (self._stderr if is_err else self._stdout).feed_data(text.encode())

    async def _watch_exit(self) -> str:
        try:
            result = await self._handle.wait()
            how = f"exit code {result.exit_code}"
        except CommandExitException as exc:
            how = f"exit code {exc.exit_code}" + (f" ({exc.error})" if exc.error else "")
        except Exception as exc:  # the sandbox went away: the stream broke
            how = f"lost ({type(exc).__name__}: {exc})"
        finally:
            self._stdout.feed_eof()
            self._stderr.feed_eof()
        return how

    @property
    def pid(self) -> int | None:
        """Unknown here: the process lives in the sandbox's pid namespace."""
        return None

    @property
    def sandbox_pid(self) -> int:
        """The process's pid inside the sandbox."""
        return int(self._handle.pid)

    @property
    def exited(self) -> bool:
        """Whether the process is known to have ended."""
        return self._watch.done()

    async def write(self, data: bytes) -> None:
        """Send `data` to the process's stdin."""
        try:
            await self._sandbox.commands.send_stdin(self._handle.pid, data)
        except SandboxException as exc:
            raise ConnectionError(str(exc)) from exc

    async def readline(self) -> bytes:
        """The next stdout line."""
        try:
            return await self._stdout.readline()
        except asyncio.LimitOverrunError as exc:
            raise ValueError(f"a frame exceeds {MAX_LINE} bytes") from exc

    async def read_stderr_line(self) -> bytes:
        """The next stderr line."""
        return await self._stderr.readline()

    async def close_input(self) -> None:
        """Close the process's stdin (the tool host and the gateway then exit)."""
        try:
            await self._sandbox.commands.close_stdin(self._handle.pid)
        except SandboxException as exc:
            raise ConnectionError(str(exc)) from exc

    async def kill(self) -> None:
        """SIGKILL the process in the sandbox."""
        with contextlib.suppress(SandboxException):
            await self._sandbox.commands.kill(self._handle.pid)

    async def wait(self) -> str:
        """Wait for the process to end; say how."""
        return await asyncio.shield(self._watch)

    async def aclose(self) -> None:
        """Kill the process and stop following its output."""
        if not self._watch.done():
            await self.kill()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(5):
                    await asyncio.shield(self._watch)
        if not self._watch.done():
            await self._handle.disconnect()
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
