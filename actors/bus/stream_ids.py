"""Redis Stream ids (`<ms>-<seq>`) as values: parsed strictly, compared as numbers."""

from __future__ import annotations

import re
from typing import NamedTuple

_MAX_PART = 2**64 - 1
# ASCII digits only: `\d` would also match other scripts' digits (e.g. fullwidth ones).
_SHAPE = re.compile(r"([0-9]{1,20})(?:-([0-9]{1,20}))?")


class StreamId(NamedTuple):
    """A stream entry id; tuples order as Redis orders ids."""

    ms: int
    seq: int

    def __str__(self) -> str:
        return f"{self.ms}-{self.seq}"

    @classmethod
    def parse(cls, text: str | bytes) -> StreamId:
        """Parse `ms-seq` or `ms` (meaning `ms-0`, as XREAD reads it).

        Raises:
            ValueError: not two ASCII integers joined by `-`, or a part beyond 2**64-1.
        """
        raw = text.decode() if isinstance(text, bytes) else text
        match = _SHAPE.fullmatch(raw)
        if match is None:
            raise ValueError(f"{raw!r} is not a stream id (<ms>-<seq>, ASCII digits)")
        ms, seq = int(match[1]), int(match[2] or 0)
        if ms > _MAX_PART or seq > _MAX_PART:
            raise ValueError(f"{raw!r} is out of range (each part at most {_MAX_PART})")
        return cls(ms, seq)


ORIGIN = StreamId(0, 0)
"""The id before every entry (`0` / `0-0`: read from the start)."""
