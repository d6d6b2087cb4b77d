"""The mailbox path: `deliver` = append to the session's inbox, then wake its owner."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from actors.bus.items import InboxItem
from actors.bus.message_bus import Put, RedisMessageBus, SessionOwner
from actors.errors import SessionUnavailable
from actors.ops.metrics import delivered
from actors.ops.tracing import stamped

log = logging.getLogger(__name__)


class SessionDispatcher(Protocol):
    """Reaches the owner of a session (activating it when needed)."""

    async def wake(self, session_id: str) -> None:
        """Activate the session's owner if needed and make it drain its inbox.

        Raises:
            SessionUnavailable: the owner could not be reached.
        """
        ...

    async def wake_many(self, session_ids: list[str]) -> None:
        """`wake` each session, in as few round trips as the dispatcher can.

        Raises:
            SessionUnavailable: an owner could not be reached.
        """
        ...

    async def interrupt(self, session_id: str) -> bool:
        """Interrupt the session's running reply; return whether one was running."""
        ...

    async def stop(self, session_id: str) -> None:
        """Stop the session's owner if it is live (the session is being deleted)."""
        ...

    async def maintain(self) -> None:
        """Periodic upkeep (placement after cluster changes); called by the sweeper."""
        ...

    async def close(self) -> None:
        """Release what the dispatcher holds."""
        ...

    def health_checks(self) -> dict[str, Callable[[], Awaitable[str]]]:
        """Checks of the components reaching sessions relies on, by name (for `/health`).

        Each returns a status text (`ok ...`) or raises when its component is down.
        """
        ...


class Mailbox:
    """Delivers items to sessions: the inbox is the truth, the wake is the fast path."""

    def __init__(self, bus: RedisMessageBus, dispatcher: SessionDispatcher) -> None:
        self.bus = bus
        self.dispatcher = dispatcher

    async def deliver(self, session_id: str, item: InboxItem) -> None:
        """Append `item` to the session's inbox, then wake the session.

        A failed wake is not an error for the sender: the item is durable and the sweeper
        re-wakes sessions whose inbox holds items. The item carries the sender's trace context
        (`actors.ops.tracing`), so the reply handling it continues the sender's trace.

        Raises:
            InboxFull: the inbox is at its bound; the item was not accepted.
        """
        (put,) = await self.deliver_many([(session_id, item)])
        if not put.accepted:
            raise self.bus.inbox_full(session_id)

    async def deliver_many(
        self,
        deliveries: Sequence[tuple[str, InboxItem]],
        owners: Sequence[SessionOwner | None] = (),
    ) -> list[Put]:
        """Deliver items (to one or many sessions): one pipelined write, then one batch of wakes.

        Returns what became of each item, in order (`Put`: an item whose inbox was full, or
        whose session is not its owner's, was not accepted; see `RedisMessageBus.put_many` for
        `owners`); the accepted ones were delivered and woken as `deliver` does. A session whose
        host was signalled by the write itself is not woken again.
        """
        deliveries = [(session_id, stamped(item)) for session_id, item in deliveries]
        puts = await self.bus.put_many(deliveries, owners)
        woken: list[str] = []
        for (session_id, item), put in zip(deliveries, puts, strict=True):
            if put.accepted:
                delivered(item.type)
            if put is Put.QUEUED:
                woken.append(session_id)
        if woken:
            try:
                await self.dispatcher.wake_many(woken)
            except SessionUnavailable:
                log.warning(
                    "%d session(s) not reachable now; the sweeper will wake them", len(woken)
                )
        return puts

    async def sweep(self) -> int:
        """Wake every session whose inbox may hold items; return how many were woken."""
        sessions = await self.bus.sessions_with_inbox()
        await self.dispatcher.wake_many(sessions)
        return len(sessions)
