"""How a drain cuts the items waiting in a session's inbox into replies."""

from __future__ import annotations

from actors.bus.items import ChatItem, HintItem, InboxItem
from agent_core.agent import ResumeEvent


def first_batch(pending: list[tuple[str, InboxItem]]) -> list[tuple[str, InboxItem]]:
    """The items one reply consumes.

    Messages that queued up become one reply's input. A confirmation, an external result or a
    bare continue is a reply of its own. Hints that precede the first chat item start a reply
    of their own (injected by the hint source), and are not part of the batch.
    """
    first_id, first = pending[0]
    if isinstance(first, HintItem):
        return []
    if not isinstance(first.input, list):
        return [(first_id, first)]
    batch: list[tuple[str, InboxItem]] = [(first_id, first)]
    for entry in pending[1:]:
        item = entry[1]
        if isinstance(item, HintItem):
            continue
        if not isinstance(item.input, list):
            break
        batch.append(entry)
    return batch


def resume_input(batch: list[tuple[str, InboxItem]]) -> ResumeEvent | None:
    """The confirmation, external result or interrupt a batch carries, if any."""
    if len(batch) == 1 and isinstance(batch[0][1], ChatItem):
        value = batch[0][1].input
        if isinstance(value, ResumeEvent):
            return value
    return None
