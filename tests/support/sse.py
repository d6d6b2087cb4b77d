"""A small SSE client for tests: reads `id:`/`data:` frames from a streaming HTTP response."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass
class Frame:
    """One SSE frame: the log id and the parsed event."""

    id: str
    data: dict[str, Any]
    raw: str

    @property
    def type(self) -> str:
        return str(self.data["type"])


async def read_frames(
    client: httpx.AsyncClient,
    path: str,
    headers: dict[str, str],
    until: Callable[[Frame], bool],
    params: dict[str, str] | None = None,
    on_open: Callable[[], None] | None = None,
) -> list[Frame]:
    """Open the stream at `path` and collect frames up to and including the first `until`."""
    frames: list[Frame] = []
    async with client.stream("GET", path, headers=headers, params=params) as response:
        response.raise_for_status()
        if on_open is not None:
            on_open()
        event_id, data = "", []
        async for line in response.aiter_lines():
            if line.startswith("id: "):
                event_id = line[4:]
            elif line.startswith("data: "):
                data.append(line[6:])
            elif line == "" and data:
                raw = "\n".join(data)
                frame = Frame(event_id, json.loads(raw), raw)
                frames.append(frame)
                event_id, data = "", []
                if until(frame):
                    return frames
    return frames


def is_reply_end(frame: Frame) -> bool:
    """Stop condition: the reply ended."""
    return frame.type == "REPLY_END"


def reply_end_after_text(phrase: str) -> Callable[[Frame], bool]:
    """Stop condition: the end of the reply whose streamed text contained `phrase`."""
    seen: list[str] = []

    def until(frame: Frame) -> bool:
        if frame.type == "TEXT_BLOCK_DELTA":
            seen.append(frame.data["delta"])
        return frame.type == "REPLY_END" and phrase in "".join(seen)

    return until
