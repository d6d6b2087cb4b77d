"""Rebuilding a reply that a crash cut short: its last checkpoint plus what the log holds after.

The state saved at a checkpoint holds the reply exactly as far as the log's checkpoint event
(the write is atomic), so folding the reply's later events onto it gives what clients saw.
"""

from __future__ import annotations

from actors.bus.message_bus import RedisMessageBus, RunMarker
from agent_core.event import ReplyStartEvent, parse_event
from agent_core.message import AssistantMsg, Msg
from agent_core.state import AgentState, ReplyContext

_READ_BATCH = 1_000


async def rebuild_reply(
    bus: RedisMessageBus, session_id: str, state: AgentState, marker: RunMarker
) -> Msg:
    """Put the reply `marker` describes back into `state` as clients saw it; return its Msg.

    The reply becomes the state's reply in progress, ready for the agent to continue.
    """
    saved = state.current_reply()
    if saved is not None and saved.id == marker.reply_id:
        msg, after = saved, marker.checkpoint or marker.cursor
    else:
        # Not in the saved state (a run begun before checkpoints were kept): the log only.
        msg, after = AssistantMsg("assistant", [], id=marker.reply_id), marker.cursor
    while True:
        entries = await bus.read_events(session_id, after, count=_READ_BATCH)
        for _, payload in entries:
            event = parse_event(payload)
            if getattr(event, "reply_id", None) != marker.reply_id:
                continue
            if isinstance(event, ReplyStartEvent) and not msg.content and saved is not msg:
                msg.name, msg.created_at = event.name, event.created_at
            msg.append_event(event)
        if len(entries) < _READ_BATCH:
            break
        after = entries[-1][0]
    state.context = [m for m in state.context if m.id != msg.id] + [msg]
    if state.reply_context.reply_id != msg.id:
        state.reply_context = ReplyContext(reply_id=msg.id)
    return msg
