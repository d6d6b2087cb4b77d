"""Server-Sent Events framing of a session's event log."""

from __future__ import annotations

from collections.abc import AsyncIterator

from actors.client import RuntimeClient
from actors.errors import StorageUnavailable

KEEPALIVE = ": keep-alive\n\n"


def frame(event_id: str, payload: str) -> str:
    """One SSE frame: the log id as `id:` and the event JSON as `data:`."""
    return f"id: {event_id}\ndata: {payload}\n\n"


async def event_frames(runtime: RuntimeClient, session_id: str, after: str) -> AsyncIterator[str]:
    """Frames of every event after `after`, then live ones; a comment on each idle period.

    Rides out short Redis outages; ends (so the client reconnects with `Last-Event-ID`) if
    Redis stays away longer than the runtime's grace period.
    """
    try:
        async for event_id, payload in runtime.events(session_id, after):
            yield frame(event_id, payload) if event_id else KEEPALIVE
    except StorageUnavailable:
        yield ": storage unavailable, reconnect\n\n"
