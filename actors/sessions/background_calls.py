"""Durable records of a session's background tool calls, kept until their result is delivered.

A call moved to the background is recorded (under the session's `background` key, by the item
id its result will be delivered as) before anything can deliver its result; the inbox accept
of that result clears the record in the same Redis script (`RedisMessageBus.put`). A record
still present after its runner died is a call whose result will never come: the session's
next owner settles it (`actors.sessions.runtime`). Recording also puts the session in the
sweeper's set, so a crash that takes the whole server down still wakes it on restart.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from typing import TYPE_CHECKING, Literal

from pydantic import ConfigDict, Field
from redis.asyncio import Redis

from actors.bus.keys import Keys
from actors.bus.message_bus import RedisMessageBus
from actors.bus.outage import OUTAGE_ERRORS
from actors.sessions.hints import InboxBackgroundSink, background_item_id, completion_hint
from agent_core.agent import reads_only
from agent_core.deferred_model import DeferredModel
from agent_core.message import ToolCallBlock, ToolResultState
from agent_core.state import AgentState
from agent_core.tool import ToolBase, Toolkit

if TYPE_CHECKING:
    from actors.workspaces.session_workspaces import SessionKit

log = logging.getLogger(__name__)

Runner = Literal["session", "workspace"]

# KEYS: background hash, inboxes set; ARGV: item id, record JSON, session id
_RECORD = """
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
"""

# Update a record only if its result has not cleared it meanwhile.
# KEYS: background hash; ARGV: item id, record JSON
_UPDATE = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
"""


INTERRUPTED_BY_RESTART = (
    "Interrupted: the server restarted (or the process running this call crashed) while "
    "this call was running in the background. It was not run again because it may have "
    "side effects; check what it did before retrying it."
)
"""The result of a background call its crashed runner never finished (and may not re-run)."""


class BackgroundCall(DeferredModel):
    """A tool call running in the background whose result has not been delivered."""

    model_config = ConfigDict(extra="forbid")

    call_id: str = Field(description="The tool call id (the id the model reads).")
    tool: str = Field(description="The tool's name.")
    input: str = Field(description="The call's JSON arguments.")
    started_at: dt.datetime = Field(description="When it moved to the background (UTC).")
    runner: Runner = Field(description="Who finishes it: the session's owner or its workspace.")
    generation: int = Field(description="The cluster generation of the server that runs it.")

    def tool_call(self) -> ToolCallBlock:
        """The call as the model issued it."""
        return ToolCallBlock(id=self.call_id, name=self.tool, input=self.input)


class BackgroundCalls:
    """The background call records of one session."""

    def __init__(self, redis: Redis, keys: Keys, session_id: str, generation: int) -> None:
        self._redis = redis
        self._keys = keys
        self._session_id = session_id
        self._generation = generation
        self._record = redis.register_script(_RECORD)
        self._update = redis.register_script(_UPDATE)

    def _key(self) -> str:
        return self._keys.background(self._session_id)

    async def record(self, call: ToolCallBlock) -> BackgroundCall:
        """Record `call` as running in the session's owner; return the record."""
        record = BackgroundCall(
            call_id=call.id,
            tool=call.name,
            input=call.input,
            started_at=dt.datetime.now(dt.UTC),
            runner="session",
            generation=self._generation,
        )
        keys = [self._key(), self._keys.inboxes()]
        args = [background_item_id(call.id), record.model_dump_json(), self._session_id]
        await self._record(keys=keys, args=args)
        return record

    async def handed(self, record: BackgroundCall) -> None:
        """Note that the workspace now runs the call (unless its result already arrived)."""
        moved = record.model_copy(update={"runner": "workspace"})
        args = [background_item_id(record.call_id), moved.model_dump_json()]
        await self._update(keys=[self._key()], args=args)

    async def open(self) -> list[BackgroundCall]:
        """The recorded calls whose result has not been delivered, oldest first."""
        raw = await self._redis.hvals(self._key())
        records = [BackgroundCall.model_validate_json(value) for value in raw]
        return sorted(records, key=lambda record: record.started_at)

    async def runner_gone(self, record: BackgroundCall, kit: SessionKit | None) -> bool:
        """Whether `record`'s runner is gone, so its result will never be delivered.

        Asked by a new owner of the session about a call this process does not run: a call
        its previous owner ran died with it, and one of an older server generation died with
        that server. A call handed to the workspace is asked after there (`kit`; None: the
        workspace cannot be reached now, so the call is given the benefit of the doubt).
        """
        if record.runner == "session" or record.generation != self._generation:
            return True
        if kit is None:
            return False
        try:
            return not await kit.hand_over(record.tool_call())
        except OUTAGE_ERRORS:
            raise
        except Exception:  # the workspace's process died with the call
            log.warning("background call %s: its workspace is gone", record.call_id)
            return True


async def settle_orphans(
    orphans: list[BackgroundCall],
    tools: list[ToolBase],
    sink: InboxBackgroundSink,
    state: AgentState,
    bus: RedisMessageBus,
) -> None:
    """Give each orphaned call of `state`'s session the one result it is owed.

    A call that only reads runs again in `sink` with `tools` (the rule for calls a crash cut
    short within a reply: `agent_core.agent._restart`); any other gets a result saying the
    restart interrupted it. Either result goes to the inbox under the call's one item id, so
    a result that did arrive is never doubled.
    """
    toolkit = Toolkit()
    for tool in tools:
        toolkit.register(tool)
    for record in orphans:
        call = record.tool_call()
        if await reads_only(toolkit, call):
            log.info("session %s: running background call %s again", state.session_id, call.id)
            chunks = toolkit.call(call, state)
            sink.adopt(call, asyncio.ensure_future(anext(chunks)), chunks)
            continue
        hint = completion_hint(call, INTERRUPTED_BY_RESTART, ToolResultState.INTERRUPTED)
        await bus.put(state.session_id, hint)
