"""`ExecChannel`: a process started in a container with `docker exec`, stdio attached."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Sequence

import aiohttp
from aiodocker.containers import DockerContainer
from aiodocker.exceptions import DockerError
from aiodocker.execs import Exec
from aiodocker.stream import Stream

from workspaces.errors import WorkspaceError
from workspaces.toolhost.protocol import MAX_LINE

log = logging.getLogger(__name__)

# How long an ended stream's process may take to be reported as exited.
_EXIT_GRACE = 5.0


class ExecChannel:
    """A `ToolHostChannel` over a `docker exec` whose stdin, stdout and stderr are attached.

    Docker multiplexes stdout and stderr on one connection; a pump task splits them into two
    readers. Docker cannot signal an exec'd process: closing the connection closes its stdin,
    which ends the tool host (and the gateway); whatever ignores that dies with the container.
    """

    def __init__(self, execution: Exec, stream: Stream) -> None:
        self._exec = execution
        self._stream = stream
        self._stdout = asyncio.StreamReader(limit=MAX_LINE)
        self._stderr = asyncio.StreamReader(limit=MAX_LINE)
        self._pump = asyncio.create_task(self._split(), name="docker-exec-pump")

    @classmethod
    async def start(
        cls,
        container: DockerContainer,
        argv: Sequence[str],
        *,
        workdir: str,
        user: str,
        env: Mapping[str, str] | None = None,
    ) -> ExecChannel:
        """Run `argv` in `container` with its stdio attached.

        Raises:
            WorkspaceError: Docker refused to start it (the container is gone, ...).
        """
        try:
            execution = await container.exec(
                list(argv),
                stdin=True,
                stdout=True,
                stderr=True,
                tty=False,
                user=user,
                workdir=workdir,
                environment=dict(env or {}),
            )
            stream = execution.start(detach=False)
            await stream.__aenter__()
        except (DockerError, aiohttp.ClientError) as exc:
            raise WorkspaceError(f"cannot start {argv[0]!r} in the container: {exc}") from exc
        return cls(execution, stream)

    async def _split(self) -> None:
        try:
            while (message := await self._stream.read_out()) is not None:
                target = self._stdout if message.stream == 1 else self._stderr
                target.feed_data(message.data)
        except (aiohttp.ClientError, DockerError, RuntimeError) as exc:
            log.debug("docker exec stream ended: %s", exc)
        finally:
            self._stdout.feed_eof()
            self._stderr.feed_eof()

    @property
    def pid(self) -> int | None:
        """Unknown: the process lives in the container's pid namespace."""
        return None

    async def write(self, data: bytes) -> None:
        """Write to the process's stdin."""
        try:
            await self._stream.write_in(data)
        except aiohttp.ClientError as exc:
            raise ConnectionError(str(exc)) from exc

    async def readline(self) -> bytes:
        """The next stdout line."""
        return await self._stdout.readline()

    async def read_stderr_line(self) -> bytes:
        """The next stderr line."""
        return await self._stderr.readline()

    async def close_input(self) -> None:
        """Close the connection (and so the process's stdin)."""
        await self._stream.close()

    async def kill(self) -> None:
        """Close the connection; the process ends when it sees its stdin closed."""
        await self._stream.close()

    async def wait(self) -> str:
        """Wait for the output to end and the process to exit; return how it exited."""
        await asyncio.shield(self._pump)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _EXIT_GRACE
        while True:
            try:
                state = await self._exec.inspect()
            except (DockerError, aiohttp.ClientError) as exc:
                return f"exit unknown ({exc})"
            if not state.get("Running"):
                return f"exit code {state.get('ExitCode')}"
            if loop.time() >= deadline:
                return "still running after its stream closed"
            await asyncio.sleep(0.05)

    async def aclose(self) -> None:
        """Close the connection and stop the pump."""
        await self._stream.close()
        self._pump.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._pump
