"""`ViewCache`: workspace views a process opened, reused while nothing can have changed them.

Opening a workspace for a reply (`WorkspaceHost.open`) costs a round trip to its host and a
probe of its MCP servers and skills. What it returns changes only when something changes the
workspace: a tool call runs in it, MCP servers or skills are added or removed, or its host
restarts. A host counts those changes (`WorkspaceHost.changed`). For each host it opened views
from, this process keeps one call pending that returns when the count moves, or fails when the
host dies; either drops the host's views. A call this process made itself drops them as soon
as it ends, so a session's next reply always sees what its own tools did. A change made from
another process is seen once that host's answer arrives (one hop, well before anything the
changing caller does next); a view older than `ttl` is opened again regardless (an MCP server
that went away or changed its tools, files changed from outside the workspace's tools).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from actors.workspaces.requests import WorkspaceView

log = logging.getLogger(__name__)

VIEW_TTL = 30.0
"""Seconds a cached view is reused at most."""
MAX_VIEWS = 4_096
"""Views kept at most; the oldest go first."""

Changed = Callable[[int], Awaitable[int]]
"""A host's `changed(seen)`: its change count, once that differs from `seen`."""


@dataclass
class _Watch:
    """The pending `changed` call of one host, and how often its views were dropped."""

    epoch: int = 0
    task: asyncio.Task[None] | None = None

    @property
    def live(self) -> bool:
        return self.task is not None and not self.task.done()


@dataclass(frozen=True)
class _Cached:
    host: str
    epoch: int
    at: float
    view: WorkspaceView


class ViewCache:
    """Views by (request, cwd), each valid while its host reports no change (module docstring).

    Hosts are named by the caller (the node a workspace actor runs on, say).
    """

    def __init__(
        self,
        ttl: float = VIEW_TTL,
        max_views: int = MAX_VIEWS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ttl = ttl
        self._max_views = max_views
        self._clock = clock
        self._views: dict[tuple[str, str | None], _Cached] = {}
        self._watches: dict[str, _Watch] = {}

    def get(self, host: str, request: str, cwd: str | None) -> WorkspaceView | None:
        """The view of `request` for `cwd` opened at `host`, if it is still valid."""
        cached = self._views.get((request, cwd))
        watch = self._watches.get(host)
        if (
            cached is None
            or watch is None
            or not watch.live
            or cached.host != host
            or cached.epoch != watch.epoch
            or self._clock() - cached.at >= self._ttl
        ):
            return None
        return cached.view.model_copy()

    def stamp(self, host: str, changed: Changed) -> int:
        """Start following `host`'s changes (if not yet); the stamp of a view opened from now.

        Take the stamp before opening: a change reported meanwhile then voids the view.
        """
        watch = self._watches.setdefault(host, _Watch())
        if not watch.live:
            watch.task = asyncio.get_running_loop().create_task(self._follow(host, changed))
        return watch.epoch

    def put(
        self, host: str, request: str, cwd: str | None, stamp: int, view: WorkspaceView
    ) -> None:
        """Keep `view`, opened at `host` after `stamp` was taken."""
        key = (request, cwd)
        self._views.pop(key, None)
        self._views[key] = _Cached(host, stamp, self._clock(), view.model_copy())
        while len(self._views) > self._max_views:
            del self._views[next(iter(self._views))]

    def drop(self, host: str) -> None:
        """Void every view opened at `host` (something changed there, or it died)."""
        self._watches.setdefault(host, _Watch()).epoch += 1

    async def _follow(self, host: str, changed: Changed) -> None:
        seen = -1
        try:
            while True:
                seen = await changed(seen)
                self.drop(host)
        except Exception as exc:  # the host died or cannot be reached: its views go
            log.info("workspace host %s stopped reporting changes: %r", host, exc)
        finally:
            self.drop(host)

    async def aclose(self) -> None:
        """Stop following hosts and forget every view."""
        tasks = [w.task for w in self._watches.values() if w.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._watches.clear()
        self._views.clear()
