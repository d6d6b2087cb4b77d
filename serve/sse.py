"""Server-Sent Events framing of a session's event log, and the stream cursor it resumes from."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from pydantic import AfterValidator

from actors.client import RuntimeApi, StreamId
from actors.errors import StorageUnavailable

KEEPALIVE = ": keep-alive\n\n"


def _check_cursor(value: str | None) -> str | None:
    if value is not None:
        StreamId.parse(value)  # ValueError: a 422 naming the parameter
    return value


Cursor = Annotated[str | None, AfterValidator(_check_cursor)]
"""A stream id (`<ms>-<seq>` or `<ms>`, ASCII digits, each part < 2**64), when given."""


def frame(event_id: str, payload: str) -> str:
    """One SSE frame: the log id as `id:` and the event JSON as `data:`."""
    return f"id: {event_id}\ndata: {payload}\n\n"


async def event_frames(runtime: RuntimeApi, session_id: str, after: StreamId) -> AsyncIterator[str]:
    """Frames of every event after `after`, then live ones; a comment on each idle period.

    The start is settled when this returns. Rides out short Redis outages; ends (so the
    client reconnects with `Last-Event-ID`) if Redis stays away longer than the runtime's
    grace period.
    """
    return _frames(await runtime.chat.events(session_id, after))


async def _frames(events: AsyncIterator[tuple[str, str]]) -> AsyncIterator[str]:
    try:
        async for event_id, payload in events:
            if event_id:
                yield frame(event_id, payload)
            else:  # an idle period, or a notice that keeps the client's last id
                yield f"data: {payload}\n\n" if payload else KEEPALIVE
    except StorageUnavailable:
        yield ": storage unavailable, reconnect\n\n"
