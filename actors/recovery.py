"""Closing a reply that a crash cut short, from what its event log recorded."""

from __future__ import annotations

from actors.bus import RedisMessageBus, RunMarker
from actors.storage import RedisStorage
from agent_core.agent import ReplyBuilder
from agent_core.event import ReplyEndEvent, ReplyStartEvent, parse_event
from agent_core.message import AssistantMsg, ErrorInfo, ErrorType, ReplyFinishedReason
from agent_core.state import AgentState, ReplyContext

CRASH_MESSAGE = "The session restarted while this reply was running; the reply was closed."


async def close_interrupted_reply(
    storage: RedisStorage,
    bus: RedisMessageBus,
    session_id: str,
    state: AgentState,
    marker: RunMarker,
    fence: int,
) -> None:
    """End the reply `marker` describes with `REPLY_END(error)` and persist it.

    The reply's Msg is rebuilt by folding its logged events (the log is what clients saw), open
    tool calls get error results, and the inbox items it consumed are acknowledged: the user
    sees one failed reply to their input, not a silent loss or a duplicate.
    """
    events = []
    for _, payload in await bus.read_events(session_id, marker.cursor, count=100_000):
        event = parse_event(payload)
        if getattr(event, "reply_id", None) == marker.reply_id:
            events.append(event)
    start = next((e for e in events if isinstance(e, ReplyStartEvent)), None)
    name = start.name if start is not None else "assistant"
    msg = AssistantMsg(name, [], id=marker.reply_id)
    if start is not None:
        msg.created_at = start.created_at
    for event in events:
        msg.append_event(event)
    builder = ReplyBuilder(msg, session_id)
    if start is None:
        start = ReplyStartEvent(reply_id=marker.reply_id, session_id=session_id, name=name)
        await bus.append_event(session_id, start, fence)
    for event in builder.close_open_calls(CRASH_MESSAGE):
        await bus.append_event(session_id, event, fence)
    end = ReplyEndEvent(
        reply_id=marker.reply_id,
        session_id=session_id,
        finished_reason=ReplyFinishedReason.ERROR,
        error=ErrorInfo(type=ErrorType.INTERNAL, message=CRASH_MESSAGE),
    )
    builder.emit(end)
    state.context = [m for m in state.context if m.id != msg.id] + [msg]
    state.reply_context = ReplyContext()
    await storage.commit_turn(session_id, state, [msg], marker.item_ids, fence)
    await bus.append_event(session_id, end, fence)
    await bus.clear_running(session_id, fence)
