"""`ReplyWriter`: the one owner of a session's reply write order.

Every write is one atomic commit (`actors.bus.commit`), fenced by the owner's lease:

* **begin** — the run marker is set, the reply's inputs join the transcript and the state, and
  the inbox items they came from are deleted, all at once: an input is never lost or doubled.
* **append** — an event of the running reply.
* **checkpoint** — a model call's or tool result's end, with the state it leads to. The saved
  reply is the fold of the events logged so far, so a crash resumes from exactly what
  clients saw (`actors.sessions.recovery`).
* **park** / **end** — the reply's Msg and state are saved with its last event and the marker
  is cleared: a client that sees `REPLY_END` can read the reply, and every `REPLY_START` gets
  exactly one `REPLY_END`.
* **acknowledge** — inbox hints the reply took in are deleted with the next commit.

A write saves only what changed of the state since the writer's last one
(`actors.storage.stored_state`).

Each write of a run is numbered; the number is kept in the run marker, so retrying a write
whose answer a Redis outage lost applies it once. Writes ride out outages up to `outage_grace`.
"""

from __future__ import annotations

from dataclasses import dataclass

from actors.bus.commit import Commit, Committer, Op
from actors.bus.message_bus import RedisMessageBus
from actors.bus.outage import ride_out
from actors.errors import StateDiverged
from actors.sessions.recovery import rebuild_reply
from actors.storage.redis_storage import RedisStorage
from actors.storage.stored_state import StoredState
from agent_core.event import (
    AgentEvent,
    CustomEvent,
    ExternalExecutionResultEvent,
    ModelCallEndEvent,
    ReplyEndEvent,
    ReplyStartEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    ToolResultEndEvent,
    UserConfirmResultEvent,
    UserInterruptEvent,
    event_to_json,
)
from agent_core.message import AssistantMsg, Msg
from agent_core.state import AgentState

_CHECKPOINTS = (ModelCallEndEvent, ToolResultEndEvent)
_PARKING = (RequireUserConfirmEvent, RequireExternalExecutionEvent)
# The first event of a run that answers the batch's items (a new reply, or a resumed one).
_ANSWERS = (
    ReplyStartEvent,
    UserConfirmResultEvent,
    ExternalExecutionResultEvent,
    UserInterruptEvent,
)
SESSION_UPDATED = "session_updated"


@dataclass(frozen=True)
class Recovered:
    """A reply a crash cut short, back in the state: the agent continues it."""

    reply_id: str
    hint_ids: list[str]
    """Inbox items already injected into the reply (not to be injected again)."""


class ReplyWriter:
    """Writes the replies of one session for its owner (fencing token `fence`)."""

    def __init__(
        self,
        storage: RedisStorage,
        bus: RedisMessageBus,
        session_id: str,
        fence: int,
        outage_grace: float = 60.0,
    ) -> None:
        self._bus = bus
        self._storage = storage
        self._committer = Committer(
            storage.redis, storage.keys, bus.event_log_maxlen, bus.generation
        )
        self.session_id = session_id
        self.fence = fence
        self._grace = outage_grace
        self._reply_id: str | None = None
        self._seq = 0
        self._shadow: Msg | None = None
        self._parked: Msg | None = None
        self._inputs: list[Msg] = []
        self._input_ids: list[str] = []
        self._acked: set[str] = set()
        self._to_ack: list[str] = []
        self._stored = StoredState(fence)

    @property
    def running(self) -> str | None:
        """The reply being written, if any."""
        return self._reply_id

    async def load(self) -> AgentState:
        """Load the session's state: this writer's first commit writes only what changed of it."""
        state, version = await ride_out(
            lambda: self._storage.load_state_version(self.session_id), self._grace
        )
        self._stored.loaded(state, version)
        return state

    async def recover(self, state: AgentState) -> Recovered | None:
        """Load what a previous owner left: a parked reply, or a run a crash cut short.

        A cut run is rebuilt into `state` (see `actors.sessions.recovery`) and becomes this writer's
        running reply; the inbox hints it already took in are acknowledged with its next write.
        """
        marker = await ride_out(lambda: self._bus.running(self.session_id), self._grace)
        if marker is None:
            parked = state.current_reply()
            self._parked = None if parked is None else parked.model_copy(deep=True)
            return None
        msg = await ride_out(
            lambda: rebuild_reply(self._bus, self.session_id, state, marker), self._grace
        )
        self._reply_id, self._seq = marker.reply_id, marker.seq + 1
        self._shadow = msg.model_copy(deep=True)
        injected = {b.id for b in msg.get_content_blocks("hint")}
        pending = await ride_out(lambda: self._bus.pending(self.session_id), self._grace)
        hint_ids = [sid for sid, item in pending if item.item_id in injected]
        self.acknowledge(hint_ids)
        return Recovered(marker.reply_id, hint_ids)

    def expect_inputs(self, inputs: list[Msg], item_ids: list[str]) -> None:
        """The next reply answers `inputs`, delivered as inbox items `item_ids`."""
        self._inputs, self._input_ids = inputs, item_ids

    def acknowledge(self, item_ids: list[str]) -> None:
        """Delete these inbox items with the next commit (ids already acknowledged are skipped)."""
        for item_id in item_ids:
            if item_id not in self._acked:
                self._acked.add(item_id)
                self._to_ack.append(item_id)

    async def write(self, event: AgentEvent, state: AgentState) -> None:
        """Write one event of the agent's stream in its place in the write order.

        `state` is the agent's state after `event` (it may run a few events ahead of the log;
        checkpoints save the reply as the log has it).

        Raises:
            SessionFenced: a newer owner holds the session.
            StorageUnavailable: Redis stayed unreachable for the outage grace.
        """
        await self.write_many([event], state)

    async def write_many(self, events: list[AgentEvent], state: AgentState) -> None:
        """Write events the agent produced in a row, as `write` does each, in fewer commits.

        A reply's first event and the plain events that follow it in `events` (e.g. the hints
        it opens with) are one commit: the one that begins the run. Plain events in a row are
        one append. Checkpoints and the reply's end or parking stay commits of their own.

        Raises:
            SessionFenced: a newer owner holds the session.
            StorageUnavailable: Redis stayed unreachable for the outage grace.
        """
        batch: list[AgentEvent] = []
        begun: tuple[list[Msg], list[str]] | None = None
        for event in events:
            reply_id = getattr(event, "reply_id", None)
            if reply_id is None and self._reply_id is None:
                await self._flush(batch, begun, state)
                batch, begun = [], None
                await self._append_outside(event)
                continue
            if reply_id is not None and reply_id != self._reply_id:
                await self._flush(batch, begun, state)
                batch, begun = [], self._begin(event, reply_id, state)
            closes = isinstance(event, (ReplyEndEvent, *_PARKING))
            if closes or isinstance(event, _CHECKPOINTS):
                await self._flush(batch, begun, state)
                batch, begun = [], None
            assert self._shadow is not None
            self._shadow.append_event(event)
            if closes:
                await self._close(event, state)
            elif isinstance(event, _CHECKPOINTS):
                await self._commit(Op.CHECKPOINT, [event], state, self._shadow)
            else:
                batch.append(event)
        await self._flush(batch, begun, state)

    async def _append_outside(self, event: AgentEvent) -> None:
        """Log an event that belongs to no reply (none is running)."""
        await ride_out(
            lambda: self._bus.append_event(self.session_id, event, self.fence), self._grace
        )

    async def _flush(
        self,
        batch: list[AgentEvent],
        begun: tuple[list[Msg], list[str]] | None,
        state: AgentState,
    ) -> None:
        """Commit the run's events held in `batch`: with its begin if `begun` (inputs, items)."""
        if begun is not None:
            inputs, items = begun
            await self._commit(Op.BEGIN, batch, state, self._shadow, inputs, items)
        elif batch:
            await self._commit(Op.APPEND, batch)

    def _begin(
        self, event: AgentEvent, reply_id: str, state: AgentState
    ) -> tuple[list[Msg], list[str]]:
        """Start writing reply `reply_id` at `event`; return the inputs and items it answers."""
        if self._reply_id is not None:
            raise RuntimeError(f"reply {reply_id} began while {self._reply_id} is running")
        if isinstance(event, ReplyStartEvent):
            base = AssistantMsg(event.name, [], id=reply_id, created_at=event.created_at)
        elif self._parked is not None and self._parked.id == reply_id:
            base = self._parked
        else:
            live = next(m for m in reversed(state.context) if m.id == reply_id)
            base = live.model_copy(deep=True)
        self._reply_id, self._seq, self._shadow = reply_id, 0, base
        if not isinstance(event, _ANSWERS):
            return [], []
        inputs, items = self._inputs, self._input_ids
        self._inputs, self._input_ids = [], []
        self.acknowledge(items)
        return inputs, items

    async def _close(self, event: AgentEvent, state: AgentState) -> None:
        reply = next(m for m in reversed(state.context) if m.id == self._reply_id)
        events: list[AgentEvent] = [event]
        if isinstance(event, ReplyEndEvent):
            events.append(CustomEvent(name=SESSION_UPDATED))
            self._parked = None
        else:
            self._parked = reply.model_copy(deep=True)
        await self._commit(Op.CLOSE, events, state, messages=[reply])
        self._reply_id, self._shadow = None, None

    async def _commit(
        self,
        op: Op,
        events: list[AgentEvent],
        state: AgentState | None = None,
        running: Msg | None = None,
        messages: list[Msg] | None = None,
        items: list[str] | None = None,
    ) -> None:
        """Commit `events` (and `state`, with the running reply as the log has it: `running`)."""
        commit = Commit(
            op,
            reply_id=self._reply_id or "",
            seq=self._seq,
            state=None if state is None else self._stored.change(state, running),
            messages=messages or [],
            inbox_ids=list(self._to_ack) if op is not Op.APPEND else [],
            events=[event_to_json(e) for e in events],
            items=items or [],
        )
        try:
            await self._apply(commit)
        except StateDiverged:  # another writer replaced the stored state: write it whole
            assert state is not None
            commit.state = self._stored.change(state, running)
            await self._apply(commit)
        if state is not None:
            self._stored.written()
        if op is not Op.APPEND:
            self._to_ack.clear()
        self._seq += 1

    async def _apply(self, commit: Commit) -> None:
        try:
            await ride_out(
                lambda: self._committer.commit(self.session_id, self.fence, commit), self._grace
            )
        except BaseException:
            self._stored.forget()  # the write may or may not have been applied
            raise
