"""`RedisStorage`: sessions, their state and transcripts, over the user records of `UserRecords`."""

from __future__ import annotations

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from actors.bus.commit import Commit, Committer, Op
from actors.bus.generation import UNFENCED
from actors.bus.grouped_calls import GroupedCalls
from actors.bus.keys import Keys
from actors.errors import InvalidRequest, NotFound, SessionNotFound
from actors.storage.records import SessionConfig, SessionRecord, TeamMembership
from actors.storage.stored_state import LOAD, assemble, whole
from actors.storage.user_records import UserRecords, owned_record, score_now
from agent_core._ids import now_iso
from agent_core.deferred_model import DeferredModel
from agent_core.message import Msg
from agent_core.state import AgentState


class _SessionOwner(DeferredModel):
    """What an ownership check reads of a session record (validating all of it costs more)."""

    user_id: str
    agent_id: str


class RedisStorage(UserRecords):
    """Typed access to Troupe's records in Redis, every read scoped by user id.

    Credentials' secret fields are encrypted with `secret_key` (see `actors.storage.crypto`).
    `RedisStorage(host=..., port=...)`, as the spec builds it, opens its own client (closed
    by `aclose()` or leaving `async with`) and uses the default key prefix; its `url` is what
    `create_app(storage=...)` connects every process to.

    Raises:
        SecretKeyError: `secret_key` is malformed.
    """

    def __init__(
        self,
        redis: Redis | None = None,
        keys: Keys | None = None,
        secret_key: str | None = None,
        *,
        host: str = "localhost",
        port: int = 6379,
        db: int = 0,
        password: str | None = None,
        generation: int = UNFENCED,
    ) -> None:
        """Use `redis` (None: connect to `host:port/db`) under the layout of `keys`.

        Args:
            redis: An open client; None opens one from `host`, `port`, `db` and `password`.
            keys: The deployment's key layout (default: the default prefix).
            secret_key: Encrypts credentials' secrets (default: the deployment's generated key).
            host: Redis host, when `redis` is None.
            port: Redis port, when `redis` is None.
            db: Redis database index, when `redis` is None.
            password: Redis password, when `redis` is None.
            generation: The cluster generation the owner's writes carry.
        """
        super().__init__(redis, keys, secret_key, host, port, db, password)
        self._committer = Committer(self.redis, self.keys, 0, generation)
        self._session_reads = GroupedCalls(self._read_sessions)
        self._load_state = self.redis.register_script(LOAD)

    async def _read_sessions(self, session_ids: list[str]) -> list[bytes | None]:
        return list(await self.redis.mget([self.keys.session(i) for i in session_ids]))

    # sessions
    async def create_session(
        self,
        user_id: str,
        agent_id: str,
        config: SessionConfig,
        membership: TeamMembership | None = None,
        state: AgentState | None = None,
        session_id: str | None = None,
    ) -> SessionRecord:
        """Store a new session of one of the user's agents (with an initial state if given).

        Raises:
            AgentNotFound: the agent is not the user's.
        """
        await self.get_agent(user_id, agent_id)
        record = SessionRecord(
            user_id=user_id,
            agent_id=agent_id,
            config=config,
            membership=membership,
            team_id=membership.team_id if membership else None,
            **({} if session_id is None else {"id": session_id}),
        )
        record.state = (state or AgentState()).model_copy(update={"session_id": record.id})
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(
                self.keys.session(record.id),
                record.model_copy(update={"state": None}).model_dump_json(),
            )
            self._queue_state(pipe, record.id, record.state)
            pipe.zadd(self.keys.user_index(user_id, "sessions"), {record.id: score_now()})
            await pipe.execute()
        return record

    async def load_session(
        self, user_id: str, session_id: str, with_state: bool = False
    ) -> SessionRecord:
        """Return one of the user's sessions (with its AgentState when asked).

        Raises:
            SessionNotFound: no such session for this user.
        """
        # Grouped: the chat path reads a session per request, many at once under load.
        raw = await self._session_reads(session_id)
        record = owned_record(raw, SessionRecord, user_id, SessionNotFound, session_id)
        if with_state:
            record.state = await self.load_state(session_id)
        return record

    async def session_agent(self, user_id: str, session_id: str) -> str:
        """The agent of one of the user's sessions (its record unread beyond the owner).

        Raises:
            SessionNotFound: no such session for this user.
        """
        raw = await self._session_reads(session_id)
        return owned_record(raw, _SessionOwner, user_id, SessionNotFound, session_id).agent_id

    async def get_session(
        self, user_id: str, agent_id: str, session_id: str
    ) -> SessionRecord | None:
        """The user's session of `agent_id` with its `state`, or None (the spec's hot path).

        Library use: restore an `Agent(state=record.state)`, then `update_session_state`.
        """
        try:
            record = await self.load_session(user_id, session_id, with_state=True)
        except SessionNotFound:
            return None
        return record if record.agent_id == agent_id else None

    async def update_session_state(
        self, user_id: str, agent_id: str, session_id: str, state: AgentState
    ) -> None:
        """Persist the state of an existing session after a reply (library use).

        Not for a session the service is running: its owner saves its own state.

        Raises:
            KeyError: the user has no such session of `agent_id` (create it with
                `upsert_session`).
        """
        if await self.get_session(user_id, agent_id, session_id) is None:
            raise KeyError(f"Session {session_id!r} not found.")
        await self.save_state(session_id, state)

    async def upsert_session(
        self,
        user_id: str,
        agent_id: str,
        config: SessionConfig | None = None,
        state: AgentState | None = None,
        session_id: str | None = None,
    ) -> SessionRecord:
        """Create a session of one of the user's agents, or update the one `session_id` names.

        An existing session gets `config` (when given) and `state` (when given); otherwise a
        new session is stored, under `session_id` when given.

        Raises:
            AgentNotFound: the agent is not the user's.
            InvalidRequest: `session_id` names another user's or agent's session.
        """
        existing = (
            None if session_id is None else await self.get_session(user_id, agent_id, session_id)
        )
        if existing is None:
            if session_id is not None and await self.redis.exists(self.keys.session(session_id)):
                raise InvalidRequest(f"session id {session_id!r} is taken")
            return await self.create_session(
                user_id, agent_id, config or SessionConfig(), state=state, session_id=session_id
            )
        if config is not None:
            existing = await self.update_session(existing.model_copy(update={"config": config}))
        if state is not None:
            await self.save_state(existing.id, state)
        existing.state = state or await self.load_state(existing.id)
        return existing

    async def get_session_any_user(self, session_id: str) -> SessionRecord:
        """Return a session by id alone (for the session's own actor).

        Raises:
            SessionNotFound: no such session.
        """
        raw = await self.redis.get(self.keys.session(session_id))
        if raw is None:
            raise SessionNotFound(session_id)
        return SessionRecord.model_validate_json(raw)

    async def list_sessions(self, user_id: str, agent_id: str | None = None) -> list[SessionRecord]:
        """Return the user's sessions (of one agent when given), oldest first."""
        sessions = await self._list(user_id, "sessions", "session", SessionRecord)
        return [s for s in sessions if agent_id is None or s.agent_id == agent_id]

    async def load_state(self, session_id: str) -> AgentState:
        """Return the session's AgentState (a fresh one if none was saved)."""
        state, _ = await self.load_state_version(session_id)
        return state

    async def load_state_version(self, session_id: str) -> tuple[AgentState, str]:
        """Return the session's AgentState and the version it is stored at ('' if none)."""
        keys = self.keys
        session_keys = [
            keys.state_head(session_id),
            keys.state_context(session_id),
            keys.state(session_id),
        ]
        return assemble(session_id, await self._load_state(keys=session_keys))

    async def load_state_heads(self, session_ids: list[str]) -> list[AgentState | None]:
        """Each session's AgentState without its context, read in one round trip.

        None for a session whose state is not stored as a head (none saved, or the older
        whole layout): `load_state` reads those.
        """
        async with self.redis.pipeline(transaction=False) as pipe:
            for session_id in session_ids:
                pipe.hget(self.keys.state_head(session_id), "state")
            heads = await pipe.execute()
        return [None if head is None else AgentState.model_validate_json(head) for head in heads]

    # transcript
    async def list_messages(
        self, session_id: str, before: str | None, limit: int, offset: int = 0
    ) -> tuple[list[Msg], bool]:
        """Return `limit` messages (chronological) and has_more.

        The page ends before `before` (or at the newest message), `offset` messages further back.

        Raises:
            NotFound: `before` is not a message of this session.
        """
        end = await self.redis.llen(self.keys.messages(session_id))
        if before is not None:
            position = await self.redis.hget(self.keys.message_index(session_id), before)
            if position is None:
                raise NotFound(before)
            end = int(position)
        end = max(0, end - offset)
        start = max(0, end - limit)
        raws = (
            await self.redis.lrange(self.keys.messages(session_id), start, end - 1) if end else []
        )
        return [Msg.model_validate_json(raw) for raw in raws], start > 0

    async def commit_turn(
        self,
        session_id: str,
        state: AgentState,
        messages: list[Msg],
        consumed_inbox_ids: list[str],
        fence: int,
    ) -> None:
        """Atomically save the state, upsert `messages` and drop the consumed inbox items.

        Only the session's owner calls this; the write checks the lease, so an owner that was
        replaced cannot overwrite its successor's data (a lost connection is not fencing).

        Raises:
            SessionFenced: `fence` is not the session's current lease (`StaleGeneration`: a
                newer server started on this Redis).
        """
        commit = Commit(
            Op.TURN, state=whole(state), messages=messages, inbox_ids=consumed_inbox_ids
        )
        await self._committer.commit(session_id, fence, commit)

    async def delete_session(self, user_id: str, session_id: str, missing_ok: bool = False) -> None:
        """Delete a session and everything it owns (record, state, transcript, logs, inbox).

        Raises:
            SessionNotFound: no such session for this user (unless `missing_ok`).
        """
        try:
            await self.load_session(user_id, session_id)
        except SessionNotFound:
            if missing_ok:
                return
            raise
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zrem(self.keys.user_index(user_id, "sessions"), session_id)
            self._queue_purge(pipe, session_id)
            await pipe.execute()

    async def purge_session(self, session_id: str) -> None:
        """Delete what a deleted session's id still holds (a delivery that came after)."""
        async with self.redis.pipeline(transaction=True) as pipe:
            self._queue_purge(pipe, session_id)
            await pipe.execute()

    def _queue_purge(self, pipe: Pipeline, session_id: str) -> None:
        """Queue the writes deleting every key of the session and its entries in shared sets."""
        pipe.delete(*self.keys.session_keys(session_id))
        pipe.srem(self.keys.inboxes(), session_id)
        pipe.zrem(self.keys.live(), session_id)
        pipe.hdel(self.keys.session_placement(), session_id)

    async def update_session(self, record: SessionRecord) -> SessionRecord:
        """Store a changed session record (its state is saved separately)."""
        record = record.model_copy(update={"state": None, "updated_at": now_iso()})
        await self.redis.set(self.keys.session(record.id), record.model_dump_json())
        return record

    async def save_state(self, session_id: str, state: AgentState) -> None:
        """Overwrite the session's state (only while no owner runs it)."""
        async with self.redis.pipeline(transaction=True) as pipe:
            self._queue_state(pipe, session_id, state)
            await pipe.execute()

    def _queue_state(self, pipe: Pipeline, session_id: str, state: AgentState) -> None:
        """Queue the writes replacing the session's stored state with `state`."""
        write = whole(state)
        keys = self.keys
        context = keys.state_context(session_id)
        pipe.delete(keys.state(session_id), context)
        pipe.hset(
            keys.state_head(session_id), mapping={"state": write.head, "version": write.version}
        )
        if write.appended:
            pipe.rpush(context, *write.appended)
