"""A per-workspace disk quota, enforced around the tool calls that write.

A bind-mounted workspace directory shares the host's filesystem, and a real quota (a
filesystem per workspace, project quotas) needs more than an unprivileged sandbox can set up.
So the quota is kept around the calls instead: while a call that may write runs, a watcher
measures the workspace and stops the call once the workspace is over its budget and still
growing; a call that ends over budget turns into an error; and while the workspace is over
budget, `Write` and `Edit` are refused. The shell stays usable so the agent can delete files.

The per-file limit (`RLIMIT_FSIZE`) and the size of `/tmp` still bound each write in between
two measurements.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from agent_core.tool.execution import ToolExecutor, ToolInvocation, ToolOutput, final_error

WRITING_TOOLS = frozenset({"Bash", "Write", "Edit"})
"""The workspace tools that can grow the workspace; the others pass through unwatched."""

REFUSED_WHEN_FULL = frozenset({"Write", "Edit"})

_MIN_INTERVAL = 0.2
# Measuring takes a walk of the whole tree: keep it to a small share of the time.
_WALK_SHARE = 10


def disk_usage(root: Path) -> int:
    """Bytes of disk the tree at `root` occupies (allocated blocks; symlinks not followed).

    Blocking: call it from a worker thread. Files vanishing during the walk are skipped.
    """
    total = 0
    seen: set[tuple[int, int]] = set()
    pending = [str(root)]
    while pending:
        directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_nlink > 1:
                key = (info.st_dev, info.st_ino)
                if key in seen:
                    continue
                seen.add(key)
            total += info.st_blocks * 512
            if entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
    return total


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


class DiskQuota:
    """A `ToolExecutor` that keeps the workspace at `root` within `limit` bytes of disk."""

    def __init__(self, inner: ToolExecutor, root: Path, limit: int) -> None:
        """Watch the calls `inner` runs.

        Args:
            inner: Where the calls run.
            root: The workspace directory (measured host-side).
            limit: Bytes of disk the workspace may occupy.
        """
        self.inner = inner
        self.root = root
        self.limit = limit
        self._interval = _MIN_INTERVAL

    async def usage(self) -> int:
        """The workspace's disk usage now, in bytes."""
        start = time.monotonic()
        used = await asyncio.to_thread(disk_usage, self.root)
        self._interval = max(_MIN_INTERVAL, _WALK_SHARE * (time.monotonic() - start))
        return used

    def _over(self, used: int) -> str:
        return (
            f"The workspace is over its disk quota ({_mib(used)} used of {_mib(self.limit)}). "
            "Delete files to free space before writing more."
        )

    async def execute(self, invocation: ToolInvocation) -> AsyncGenerator[ToolOutput, None]:
        """Run the call through `inner`, stopping it if it grows the workspace past the quota."""
        if invocation.tool not in WRITING_TOOLS:
            async with contextlib.aclosing(self.inner.execute(invocation)) as outputs:
                async for output in outputs:
                    yield output
            return
        before = await self.usage()
        if before > self.limit and invocation.tool in REFUSED_WHEN_FULL:
            yield final_error(self._over(before))
            return
        outputs = self.inner.execute(invocation)
        watcher = asyncio.ensure_future(self._watch(before))
        try:
            async with contextlib.aclosing(self._until_over(outputs, before, watcher)) as watched:
                async for output in watched:
                    yield output
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
            await outputs.aclose()

    async def _watch(self, before: int) -> int:
        """Return the usage once the workspace is over the quota and larger than `before`."""
        while True:
            await asyncio.sleep(self._interval)
            used = await self.usage()
            if used > max(before, self.limit):
                return used

    async def _until_over(
        self, outputs: AsyncGenerator[ToolOutput, None], before: int, watcher: asyncio.Future[int]
    ) -> AsyncGenerator[ToolOutput, None]:
        """`outputs`, with the final chunk an error if the call ended over the quota.

        Should `watcher` fire first, the call is stopped and ends with an error instead.
        """
        while True:
            step = asyncio.ensure_future(anext(outputs))
            racing: set[asyncio.Future[Any]] = {step, watcher}
            await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
            if not step.done():
                # Cancelling the pending read closes the stream, which stops the call.
                step.cancel()
                with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                    await step
                used = watcher.result()
                yield final_error(f"The call was stopped: {self._over(used)}")
                return
            try:
                output = step.result()
            except StopAsyncIteration:
                return
            if output.chunk is not None and output.chunk.is_final:
                used = await self.usage()
                if used > max(before, self.limit):
                    output = final_error(self._over(used))
            yield output
