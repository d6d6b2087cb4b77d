"""`DeliveryBatcher`: group commit of the deliveries concurrent requests make.

A request handler that delivers one chat input pays a Redis round trip and a wake. Under load
many handlers of one process deliver at the same moment: the batcher sends the first at once
and gathers the ones that arrive while it is in flight into the next round, so each round is
one pipelined inbox write and one batch of wakes (`Mailbox.deliver_many`) whatever its size.
An idle process pays nothing extra: a lone delivery is a round of one.
"""

from __future__ import annotations

import asyncio

from actors.bus.items import InboxItem
from actors.bus.mailbox import Mailbox
from actors.errors import InboxFull
from actors.ops.tracing import stamped

_Pending = tuple[str, InboxItem, "asyncio.Future[bool]"]


class DeliveryBatcher:
    """Delivers items through `mailbox` in rounds; items keep their order per session."""

    def __init__(self, mailbox: Mailbox) -> None:
        self._mailbox = mailbox
        self._waiting: list[_Pending] = []
        self._rounds: asyncio.Task[None] | None = None

    async def deliver(self, session_id: str, item: InboxItem) -> None:
        """Append `item` to the session's inbox and wake the session, as `Mailbox.deliver`.

        Raises:
            InboxFull: the inbox is at its bound; the item was not accepted.
            StorageUnavailable, StaleGeneration: as the round's write raised them.
        """
        loop = asyncio.get_running_loop()
        accepted: asyncio.Future[bool] = loop.create_future()
        # Stamped here: the round runs in its own task, outside the sender's trace.
        self._waiting.append((session_id, stamped(item), accepted))
        if self._rounds is None:
            self._rounds = loop.create_task(self._run_rounds())
        if not await accepted:
            bound = self._mailbox.bus.inbox_maxlen
            raise InboxFull(f"inbox of session {session_id} is full ({bound} unconsumed items)")

    async def _run_rounds(self) -> None:
        batch: list[_Pending] = []
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, []
                try:
                    results = await self._mailbox.deliver_many([(s, item) for s, item, _ in batch])
                except Exception as exc:  # each sender gets the round's failure
                    _settle(batch, exc)
                    continue
                for (_, _, accepted), ok in zip(batch, results, strict=True):
                    if not accepted.done():  # its sender may have gone (cancelled)
                        accepted.set_result(ok)
        except asyncio.CancelledError:  # the loop is closing: nobody is left hanging
            _settle([*batch, *self._waiting], None)
            self._waiting = []
            raise
        finally:
            self._rounds = None


def _settle(pending: list[_Pending], error: Exception | None) -> None:
    """Fail the senders still waiting with `error` (None: cancel them)."""
    for _, _, accepted in pending:
        if accepted.done():
            continue
        if error is None:
            accepted.cancel()
        else:
            accepted.set_exception(error)
