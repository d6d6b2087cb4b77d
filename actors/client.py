"""`RuntimeClient`: the one door from the HTTP layer into the runtime.

It owns the Redis connection, exposes typed operations (records, chat delivery, transcript,
event log), and reaches session actors through a `SessionDispatcher` — Ray actors in production
(`ray_dispatcher`), or runtimes in this process (`InProcessDispatcher`) for a single-process host.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import RedisError

from actors.bus import RedisMessageBus
from actors.dispatch import Mailbox, SessionDispatcher
from actors.errors import InvalidRequest, NotFound, StorageUnavailable
from actors.inprocess import InProcessDispatcher
from actors.items import ChatInput, ChatItem
from actors.keys import Keys
from actors.records import (
    AgentData,
    AgentRecord,
    CredentialRecord,
    SessionConfig,
    SessionRecord,
)
from actors.settings import RuntimeSettings
from actors.storage import RedisStorage
from agent_core.credential import Credential
from agent_core.message import Msg


@dataclass(frozen=True)
class MessagesPage:
    """One page of a session's transcript."""

    messages: list[Msg]
    has_more: bool
    is_running: bool
    event_cursor: str


class RuntimeClient:
    """Typed access to Troupe's runtime for one deployment."""

    def __init__(self, settings: RuntimeSettings, dispatcher: SessionDispatcher) -> None:
        self.settings = settings
        self.redis: Redis = Redis.from_url(settings.redis_url, health_check_interval=10)
        keys = Keys(settings.key_prefix)
        self.storage = RedisStorage(self.redis, keys)
        self.bus = RedisMessageBus(
            self.redis, keys, settings.inbox_maxlen, settings.event_log_maxlen
        )
        self.dispatcher = dispatcher
        self.mailbox = Mailbox(self.bus, dispatcher)

    async def aclose(self) -> None:
        """Close the dispatcher and the Redis connection pool."""
        await self.dispatcher.close()
        await self.redis.aclose()

    async def health(self) -> dict[str, str]:
        """Return each component's status ("ok" or a short error)."""
        try:
            await asyncio.wait_for(self.redis.ping(), timeout=2)
            redis_status = "ok"
        except (RedisError, OSError, TimeoutError) as exc:
            redis_status = f"unavailable: {type(exc).__name__}"
        return {"redis": redis_status}

    # records
    async def create_agent(self, user_id: str, data: AgentData) -> AgentRecord:
        """Store a new agent."""
        return await self.storage.create_agent(user_id, data)

    async def list_agents(self, user_id: str) -> list[AgentRecord]:
        """Return the user's agents."""
        return await self.storage.list_agents(user_id)

    async def create_credential(self, user_id: str, data: Credential) -> CredentialRecord:
        """Store a new credential."""
        return await self.storage.create_credential(user_id, data)

    async def list_credentials(self, user_id: str) -> list[CredentialRecord]:
        """Return the user's credentials."""
        return await self.storage.list_credentials(user_id)

    async def create_session(
        self, user_id: str, agent_id: str, config: SessionConfig
    ) -> SessionRecord:
        """Store a new session after checking its agent and model credential.

        Raises:
            AgentNotFound: the agent is not the user's.
            CredentialNotFound: the model config names a credential the user does not have.
            InvalidRequest: the model config's type does not match its credential.
        """
        for model_config in (config.chat_model_config, config.fallback_chat_model_config):
            if model_config is None:
                continue
            credential = await self.storage.get_credential(user_id, model_config.credential_id)
            if credential.data.type != model_config.type:
                raise InvalidRequest(
                    f"chat_model_config.type {model_config.type!r} does not match credential "
                    f"{credential.id!r} of type {credential.data.type!r}"
                )
        return await self.storage.create_session(user_id, agent_id, config)

    async def list_sessions(self, user_id: str, agent_id: str | None) -> list[SessionRecord]:
        """Return the user's sessions (of one agent when given)."""
        return await self.storage.list_sessions(user_id, agent_id)

    async def get_session(self, user_id: str, session_id: str) -> SessionRecord:
        """Return one of the user's sessions with its state.

        Raises:
            SessionNotFound: no such session for this user.
        """
        return await self.storage.get_session(user_id, session_id, with_state=True)

    # chat
    async def chat(
        self, user_id: str, agent_id: str, session_id: str, chat_input: ChatInput
    ) -> None:
        """Deliver a chat input to the session's inbox and wake the session.

        Raises:
            SessionNotFound: no such session for this user.
            AgentNotFound: the session does not belong to `agent_id`.
            InvalidRequest: the input answers a pause the session is not in.
            InboxFull: the session's inbox is full.
        """
        session = await self.storage.get_session(user_id, session_id)
        if session.agent_id != agent_id:
            raise NotFound(agent_id) from None
        if chat_input is not None and not isinstance(chat_input, list):
            raise InvalidRequest(
                f"session {session_id} is not awaiting a {chat_input.type} "
                "(no reply of this session is parked)"
            )
        await self.mailbox.deliver(session_id, ChatItem(input=chat_input))

    async def messages(
        self, user_id: str, session_id: str, before: str | None, limit: int
    ) -> MessagesPage:
        """Return a page of the transcript and the cursor to stream from without loss.

        Raises:
            SessionNotFound: no such session for this user.
            NotFound: `before` is not a message of this session.
        """
        await self.storage.get_session(user_id, session_id)
        is_running, cursor = await self.bus.cursor_snapshot(session_id)
        messages, has_more = await self.storage.list_messages(session_id, before, limit)
        return MessagesPage(messages, has_more, is_running, cursor)

    async def check_session(self, user_id: str, session_id: str) -> None:
        """Raise SessionNotFound unless the session is the user's."""
        await self.storage.get_session(user_id, session_id)

    async def events(self, session_id: str, after: str) -> AsyncIterator[tuple[str, str]]:
        """Yield (id, event JSON) after `after`, then tail the log; never ends by itself.

        Yields ("", "") when a blocking read times out, so the caller can send a keep-alive.

        Raises:
            StorageUnavailable: Redis went away.
        """
        cursor = after
        block = self.settings.stream_block_ms
        while True:
            try:
                batch = await self.bus.read_events(session_id, cursor, block_ms=block)
            except (RedisError, OSError) as exc:
                raise StorageUnavailable(str(exc)) from exc
            if not batch:
                yield "", ""
                continue
            for event_id, payload in batch:
                yield event_id, payload
            cursor = batch[-1][0]


def ray_dispatcher(settings: RuntimeSettings) -> SessionDispatcher:
    """Return a dispatcher that hosts sessions in named Ray actors (Ray must be initialised)."""
    from actors._remote import RayDispatcher

    return RayDispatcher(settings)


__all__ = [
    "InProcessDispatcher",
    "MessagesPage",
    "RuntimeClient",
    "SessionDispatcher",
    "ray_dispatcher",
]
