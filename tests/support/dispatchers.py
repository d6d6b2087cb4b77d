"""`RecordingDispatcher`: stands in for session owners in tests of what wakes sessions."""

from __future__ import annotations

from collections.abc import Awaitable, Callable


class RecordingDispatcher:
    """Remembers each round of wakes, the sessions woken in order, and those stopped."""

    def __init__(self) -> None:
        self.rounds: list[list[str]] = []
        self.woken: list[str] = []
        self.stopped: list[str] = []

    async def wake(self, session_id: str) -> None:
        await self.wake_many([session_id])

    async def wake_many(self, session_ids: list[str]) -> None:
        self.rounds.append(list(session_ids))
        self.woken.extend(session_ids)

    async def interrupt(self, session_id: str) -> bool:
        return False

    async def stop(self, session_id: str) -> None:
        self.stopped.append(session_id)

    async def maintain(self) -> None:
        return None

    async def close(self) -> None:
        return None

    def health_checks(self) -> dict[str, Callable[[], Awaitable[str]]]:
        return {}
