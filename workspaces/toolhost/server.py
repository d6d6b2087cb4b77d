"""The tool host process: serves tool calls over stdin/stdout inside a workspace's boundary.

Started by a workspace backend inside its sandbox (`python -m workspaces.toolhost`), so that
every built-in tool's file access and every command it runs stay within that boundary. It
reads requests line by line, runs calls concurrently with a `WorkspaceToolRunner` and writes
their frames back; it exits when its stdin closes, cancelling what still runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys

from pydantic import ValidationError

from agent_core.tool.builtin.runner import WorkspaceToolRunner
from agent_core.tool.execution import ToolInvocation
from workspaces.toolhost.protocol import (
    MAX_LINE,
    REQUESTS,
    CallRequest,
    EndReply,
    OutputReply,
)

log = logging.getLogger(__name__)


class ToolHostServer:
    """Runs the calls that arrive on one request stream, replying on one writer."""

    def __init__(self, runner: WorkspaceToolRunner, writer: asyncio.StreamWriter) -> None:
        self._runner = runner
        self._writer = writer
        self._lock = asyncio.Lock()
        self._calls: dict[str, asyncio.Task[None]] = {}

    async def _send(self, frame: OutputReply | EndReply) -> None:
        async with self._lock:
            self._writer.write(frame.model_dump_json().encode() + b"\n")
            await self._writer.drain()

    async def _run(self, invocation: ToolInvocation) -> None:
        call_id = invocation.call_id
        error: str | None = None
        try:
            outputs = self._runner.execute(invocation)
            async with contextlib.aclosing(outputs):
                async for output in outputs:
                    await self._send(OutputReply(call_id=call_id, output=output))
        except asyncio.CancelledError:
            error = "cancelled"
            raise
        except Exception as exc:  # a tool bug must not take the other calls down
            log.exception("tool call %s failed", call_id)
            error = f"{type(exc).__name__}: {exc}"
        finally:
            self._calls.pop(call_id, None)
            with contextlib.suppress(ConnectionError):
                await self._send(EndReply(call_id=call_id, error=error))

    async def serve(self, reader: asyncio.StreamReader) -> None:
        """Serve requests until `reader` ends, then cancel the calls still running."""
        try:
            while line := await reader.readline():
                try:
                    request = REQUESTS.validate_json(line)
                except ValidationError as exc:
                    log.error("malformed request dropped: %s", exc)
                    continue
                if isinstance(request, CallRequest):
                    call_id = request.invocation.call_id
                    self._calls[call_id] = asyncio.create_task(self._run(request.invocation))
                elif (task := self._calls.get(request.call_id)) is not None:
                    task.cancel()
        finally:
            calls = list(self._calls.values())
            for task in calls:
                task.cancel()
            await asyncio.gather(*calls, return_exceptions=True)


async def main(runner: WorkspaceToolRunner) -> None:
    """Serve stdin/stdout; anything else this process prints goes to stderr."""
    loop = asyncio.get_running_loop()
    # Keep fd 1 for frames only: stray prints (ours or a library's) go to stderr instead.
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    out = os.fdopen(protocol_fd, "wb", buffering=0)
    reader = asyncio.StreamReader(limit=MAX_LINE)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), out
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    await ToolHostServer(runner, writer).serve(reader)
