"""`ChatClient`: talking to sessions — deliver inputs, interrupt, read transcripts and events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from actors.bus.delivery_batcher import DeliveryBatcher
from actors.bus.event_fanout import EventFanout
from actors.bus.items import ChatInput, ChatItem
from actors.bus.mailbox import SessionDispatcher
from actors.bus.message_bus import Put, SessionOwner
from actors.bus.redis_errors import storage_errors
from actors.bus.stream_ids import StreamId
from actors.errors import NotAwaiting, NotFound, SessionNotFound
from actors.sessions.status import parked_status
from actors.storage.records import SessionStatus
from actors.wiring import RuntimeParts
from agent_core.agent import ResumeEvent
from agent_core.event import UserInterruptEvent
from agent_core.message import Msg


@dataclass(frozen=True)
class MessagesPage:
    """One page of a session's transcript."""

    messages: list[Msg]
    has_more: bool
    is_running: bool
    event_cursor: str


@storage_errors
class ChatClient:
    """Chat with the user's sessions. Redis outages surface as `StorageUnavailable`."""

    def __init__(self, parts: RuntimeParts[SessionDispatcher]) -> None:
        self._parts = parts
        self._settings = parts.settings
        self._storage = parts.storage
        self._bus = parts.bus
        self._mailbox = parts.mailbox
        self._deliveries = DeliveryBatcher(parts.mailbox)
        self._dispatcher = parts.dispatcher
        self._fanout: EventFanout | None = None

    async def send(
        self,
        user_id: str,
        agent_id: str,
        session_id: str,
        chat_input: ChatInput,
        idempotency_key: str | None = None,
    ) -> None:
        """Deliver a chat input to the session's inbox and wake the session.

        With an `idempotency_key`, an input already accepted under that key for this session
        is not delivered again (a client retrying a POST whose answer it lost).

        Raises:
            SessionNotFound: no such session for this user.
            AgentNotFound: the session does not belong to `agent_id`.
            InvalidRequest: the input answers a pause the session is not in.
            InboxFull: the session's inbox is full.
        """
        if chat_input is not None and not isinstance(chat_input, list):
            # Read first: the check below reads the session's state, which is the owner's.
            if await self._storage.session_agent(user_id, session_id) != agent_id:
                raise NotFound(agent_id) from None
            await self._check_resume(session_id, chat_input)
        item = ChatItem(input=chat_input)
        if idempotency_key is not None:  # a namespace of its own: never a server-made id
            item = ChatItem(input=chat_input, item_id=f"client:{idempotency_key}")
        # The ownership check is part of the inbox write: one round trip, and no window in
        # which the session could be deleted between the check and the write.
        put = await self._deliveries.deliver(session_id, item, SessionOwner(user_id, agent_id))
        if put is Put.NOT_OWNED:
            raise SessionNotFound(session_id)
        if put is Put.OTHER_AGENT:
            raise NotFound(agent_id)

    async def _check_resume(self, session_id: str, event: ResumeEvent) -> None:
        """Refuse a resume event that does not answer the session's parked reply."""
        state = await self._storage.load_state(session_id)
        parked, status = state.current_reply(), parked_status(state)
        expected = {
            "USER_CONFIRM_RESULT": SessionStatus.AWAITING_PERMISSION,
            "EXTERNAL_EXECUTION_RESULT": SessionStatus.AWAITING_EXTERNAL_RESULT,
        }.get(event.type)
        if parked is None or status is SessionStatus.IDLE or (expected and status is not expected):
            raise NotAwaiting(
                f"session {session_id} is not awaiting a {event.type} (status: {status.value})"
            )
        if parked.id != event.reply_id:
            raise NotAwaiting(
                f"reply {event.reply_id!r} is not the parked reply of session {session_id}"
            )

    async def interrupt(self, user_id: str, session_id: str) -> None:
        """Interrupt the running reply, or close a parked one (idempotent; idle: no-op).

        Raises:
            SessionNotFound: no such session for this user.
        """
        await self._storage.session_agent(user_id, session_id)
        if await self._dispatcher.interrupt(session_id):
            return
        state = await self._storage.load_state(session_id)
        parked = state.current_reply()
        if parked is not None and parked_status(state) is not SessionStatus.IDLE:
            item = ChatItem(
                item_id=f"interrupt-{parked.id}", input=UserInterruptEvent(reply_id=parked.id)
            )
            await self._mailbox.deliver(session_id, item)

    async def messages(
        self, user_id: str, session_id: str, before: str | None, limit: int, offset: int = 0
    ) -> MessagesPage:
        """Return a page of the transcript and the cursor to stream from without loss.

        The page ends `offset` messages before `before` (or before the newest message's end).

        Raises:
            SessionNotFound: no such session for this user.
            NotFound: `before` is not a message of this session.
        """
        await self._storage.session_agent(user_id, session_id)
        is_running, cursor = await self._bus.cursor_snapshot(session_id)
        messages, has_more = await self._storage.list_messages(session_id, before, limit, offset)
        return MessagesPage(messages, has_more, is_running, cursor)

    async def live_cursor(self, session_id: str) -> str:
        """Where a new subscriber starts: the reply in progress, else the next event."""
        _, cursor = await self._bus.cursor_snapshot(session_id)
        return cursor

    async def events(self, session_id: str, after: StreamId) -> AsyncIterator[tuple[str, str]]:
        """Open the session's events after `after`: (id, event JSON), then the live tail.

        Where the stream starts is settled before this returns (a cursor past the newest event
        starts at the newest), so every event appended afterwards is delivered. Every
        subscriber of a session in this process shares one reader of its log (see
        `EventFanout`), on a connection pool apart from the one requests use. The iterator
        never ends by itself; it yields ("", "") on each idle period (send a keep-alive) and
        ("", JSON) for a `CUSTOM events_dropped` notice when `after` is older than what the
        log still holds. A Redis outage is ridden out for up to `stream_outage_grace`
        seconds, after which the iterator raises `StorageUnavailable`.

        Raises:
            StorageUnavailable: Redis stayed away longer than the grace period.
        """
        if self._fanout is None:
            self._fanout = EventFanout(
                self._parts.stream_pool(),
                self._bus.keys,
                block_ms=self._settings.stream_block_ms,
                outage_grace=self._settings.stream_outage_grace,
                log_maxlen=self._settings.event_log_maxlen,
            )
        return await self._fanout.subscribe(session_id, after)

    async def aclose(self) -> None:
        """Stop the event readers and close their connection pool."""
        if self._fanout is not None:
            await self._fanout.aclose()
