"""`DeliveryBatcher`: group commit of the deliveries concurrent requests make.

A request handler that delivers one chat input pays a Redis round trip and a wake. Under load
many handlers of one process deliver at the same moment: their deliveries are folded into
rounds (`GroupedCalls`), each one pipelined inbox write and one batch of wakes
(`Mailbox.deliver_many`) whatever its size.
"""

from __future__ import annotations

from actors.bus.grouped_calls import GroupedCalls
from actors.bus.items import InboxItem
from actors.bus.mailbox import Mailbox
from actors.ops.tracing import stamped


class DeliveryBatcher:
    """Delivers items through `mailbox` in rounds; items keep their order per session."""

    def __init__(self, mailbox: Mailbox) -> None:
        self._mailbox = mailbox
        self._rounds: GroupedCalls[tuple[str, InboxItem], bool] = GroupedCalls(mailbox.deliver_many)

    async def deliver(self, session_id: str, item: InboxItem) -> None:
        """Append `item` to the session's inbox and wake the session, as `Mailbox.deliver`.

        Raises:
            InboxFull: the inbox is at its bound; the item was not accepted.
            StorageUnavailable, StaleGeneration: as the round's write raised them.
        """
        # Stamped here: the round runs in a task of its own, outside the sender's trace.
        if not await self._rounds((session_id, stamped(item))):
            raise self._mailbox.bus.inbox_full(session_id)
