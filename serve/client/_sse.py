"""Server-Sent Events framing: lines in, `(id, data)` frames out."""

from __future__ import annotations

from collections.abc import AsyncIterator


async def sse_frames(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str, str]]:
    """Yield each frame's `id` and `data` (multi-line data joined); comments are skipped."""
    event_id, data = "", list[str]()
    async for line in lines:
        if line == "":
            if data:
                yield event_id, "\n".join(data)
            event_id, data = "", []
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "id":
                event_id = value
            elif field == "data":
                data.append(value)
