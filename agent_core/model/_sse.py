"""Incremental Server-Sent-Events parsing for provider streams.

Only the `data` field matters to chat-completion streams, so events are reduced to their data
string. Parsing follows the WHATWG event-stream rules: lines end with CRLF, LF or CR; a line
starting with `:` is a comment; consecutive `data` lines join with LF; a blank line dispatches the
event; an event cut off by the end of the stream is discarded.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import AsyncGenerator, AsyncIterable

_LINE_END = re.compile(r"\r\n|\r|\n")


class SSEDecoder:
    """Turns network chunks (bytes, split anywhere) into complete events' data strings."""

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._partial = ""
        self._data: list[str] = []
        self._first = True
        # A chunk ending in CR may be the first half of a CRLF split across chunks.
        self._skip_lf = False

    def feed(self, chunk: bytes) -> list[str]:
        """Consume one chunk and return the data of every event it completes, in order."""
        return self._consume(self._utf8.decode(chunk))

    def close(self) -> list[str]:
        """Flush the stream's end; returns events still completed, drops an unfinished one."""
        events = self._consume(self._utf8.decode(b"", final=True))
        # An unterminated last line cannot be blank, so it could never dispatch anything.
        self._partial = ""
        self._data = []
        return events

    def _consume(self, text: str) -> list[str]:
        if not text:
            return []
        if self._first:
            self._first = False
            text = text.removeprefix("\ufeff")
        if self._skip_lf:
            self._skip_lf = False
            if text.startswith("\n"):
                text = text[1:]
        if text.endswith("\r"):
            self._skip_lf = True
        *lines, self._partial = _LINE_END.split(self._partial + text)
        events = []
        for line in lines:
            event = self._line(line)
            if event is not None:
                events.append(event)
        return events

    def _line(self, line: str) -> str | None:
        if not line:
            if not self._data:
                return None
            data, self._data = "\n".join(self._data), []
            return data
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if name == "data":
            self._data.append(value.removeprefix(" "))
        return None


async def aiter_sse_data(chunks: AsyncIterable[bytes]) -> AsyncGenerator[str, None]:
    """Yield the data string of each event of an SSE byte stream (e.g. `Response.aiter_bytes()`).

    Args:
        chunks: The raw body, split at arbitrary points.

    Yields:
        Each complete event's data, multi-line data joined with LF.
    """
    decoder = SSEDecoder()
    async for chunk in chunks:
        for data in decoder.feed(chunk):
            yield data
    for data in decoder.close():
        yield data
