"""`BlockIndex`: finding the blocks of one long reply's message without scanning it per event."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from agent_core.message import Msg

B = TypeVar("B", bound=BaseModel)


class BlockIndex:
    """Finds the blocks of one message without scanning it, for the folds of a long reply.

    Blocks are indexed as they are appended, each (class, id) at its first occurrence; a hit is
    checked against the message (the block is still where it was indexed), and anything else —
    a message changed in place, a block never seen — falls back to a scan and a fresh index.
    """

    def __init__(self) -> None:
        self._first: dict[tuple[type, str], tuple[int, BaseModel]] = {}
        self._indexed = 0

    def __call__(self, msg: Msg, block_id: str, kind: type[B]) -> B | None:
        content = msg.content
        size = len(content)
        if size != self._indexed:
            self._reindex(content, 0 if size < self._indexed else self._indexed)
        hit = self._first.get((kind, block_id))
        if hit is not None and hit[0] < size and content[hit[0]] is hit[1]:
            return hit[1]  # type: ignore[return-value]
        self._reindex(content, 0)
        return msg.find_block(block_id, kind)

    def _reindex(self, content: list[Any], start: int) -> None:
        if start == 0:
            self._first.clear()
        for position in range(start, len(content)):
            block = content[position]
            self._first.setdefault((type(block), block.id), (position, block))
        self._indexed = len(content)


__all__ = ["BlockIndex"]
