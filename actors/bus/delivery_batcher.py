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
from actors.bus.message_bus import Put, SessionOwner
from actors.ops.tracing import stamped

_Delivery = tuple[str, InboxItem, SessionOwner | None]


class DeliveryBatcher:
    """Delivers items through `mailbox` in rounds; items keep their order per session."""

    def __init__(self, mailbox: Mailbox) -> None:
        self._mailbox = mailbox
        self._rounds: GroupedCalls[_Delivery, Put] = GroupedCalls(self._round)

    async def _round(self, deliveries: list[_Delivery]) -> list[Put]:
        return await self._mailbox.deliver_many(
            [(session_id, item) for session_id, item, _ in deliveries],
            [owner for _, _, owner in deliveries],
        )

    async def deliver(
        self, session_id: str, item: InboxItem, owner: SessionOwner | None = None
    ) -> Put:
        """Append `item` to the session's inbox and wake the session, as `Mailbox.deliver`.

        With an `owner`, the item is written only if the session is that user's and agent's
        (checked in the same atomic write); otherwise the answer says which check failed.

        Raises:
            InboxFull: the inbox is at its bound; the item was not accepted.
            StorageUnavailable, StaleGeneration: as the round's write raised them.
        """
        # Stamped here: the round runs in a task of its own, outside the sender's trace.
        put = await self._rounds((session_id, stamped(item), owner))
        if put is Put.REFUSED:
            raise self._mailbox.bus.inbox_full(session_id)
        return put
