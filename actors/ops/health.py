"""`Probe`: one component's health check, answering within a deadline whatever the component does.

A check of a component that is down may hang (a Redis host that drops packets, a Ray GCS being
restarted). `/health` must still answer at once, and name that component: a probe reports
`unavailable: no answer within ...` when its check is late, and never starts a second check
while one is still running, so a hung component does not pile up checks.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

HEALTH_DEADLINE = 0.8
"""Seconds a component has to answer a `/health` check."""


class Probe:
    """Checks one component: `await probe(deadline)` is its status (`ok ...` or why not)."""

    def __init__(self, check: Callable[[], Awaitable[str]]) -> None:
        """Wrap `check`, which returns a status text or raises when the component is down."""
        self._check = check
        self._running: asyncio.Task[str] | None = None

    async def __call__(self, deadline: float = HEALTH_DEADLINE) -> str:
        """The component's status, or `unavailable: ...` when its check fails or is late."""
        if self._running is None or self._running.done():
            self._running = asyncio.get_running_loop().create_task(self._status())
        try:
            return await asyncio.wait_for(asyncio.shield(self._running), deadline)
        except TimeoutError:
            return f"unavailable: no answer within {deadline:g} s"

    async def _status(self) -> str:
        try:
            return await self._check()
        except Exception as exc:  # a failed check is the answer, not an error
            log.debug("health check failed", exc_info=True)
            return f"unavailable: {type(exc).__name__}: {exc}"[:300]


async def check_all(probes: dict[str, Probe], deadline: float = HEALTH_DEADLINE) -> dict[str, str]:
    """Every component's status, checked concurrently (so within about one `deadline`)."""
    statuses = await asyncio.gather(*(probe(deadline) for probe in probes.values()))
    return dict(zip(probes, statuses, strict=True))
