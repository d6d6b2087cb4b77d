"""Parked replies: denial results, resuming after outside input, abandoning on new input."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from agent_core.agent._reply import ReplyBuilder
from agent_core.event import (
    AgentEvent,
    ExternalExecutionResultEvent,
    ReplyEndEvent,
    ToolResultEndEvent,
    ToolResultStartEvent,
    ToolResultTextDeltaEvent,
    UserConfirmResultEvent,
    UserInterruptEvent,
)
from agent_core.message import ReplyFinishedReason, ToolCallBlock, ToolCallState, ToolResultState
from agent_core.permission import PermissionDecision, PermissionEngine
from agent_core.state import AgentState, ReplyContext

ResumeEvent = UserConfirmResultEvent | ExternalExecutionResultEvent | UserInterruptEvent

USER_DENIED = "The user denied this tool call."
SUPERSEDED = "Not executed: the user sent a new message instead of answering."


def _result(
    reply: ReplyBuilder, call: ToolCallBlock, text: str, state: ToolResultState
) -> list[AgentEvent]:
    rid = reply.reply_id
    return [
        reply.emit(
            ToolResultStartEvent(reply_id=rid, tool_call_id=call.id, tool_call_name=call.name)
        ),
        reply.emit(ToolResultTextDeltaEvent(reply_id=rid, tool_call_id=call.id, delta=text)),
        reply.emit(ToolResultEndEvent(reply_id=rid, tool_call_id=call.id, state=state)),
    ]


def denied_results(
    reply: ReplyBuilder, denied: list[tuple[ToolCallBlock, PermissionDecision]]
) -> list[AgentEvent]:
    """DENIED results telling the model why each call was refused."""
    events: list[AgentEvent] = []
    for call, decision in denied:
        reason = decision.message or f"Permission to use {call.name} was denied."
        events += _result(reply, call, reason, ToolResultState.DENIED)
    return events


async def resume_calls(
    reply: ReplyBuilder,
    event: ResumeEvent,
    engine: PermissionEngine,
    run_call: Callable[..., AsyncIterator[AgentEvent]],
) -> AsyncIterator[AgentEvent]:
    """Carry out the user's verdicts (the resume event is already folded into the reply).

    Confirmed calls run with their possibly edited input and accepted rules are persisted;
    denied calls, and asked calls the user did not answer, get DENIED results. External
    results were appended by the fold itself.
    """
    if not isinstance(event, UserConfirmResultEvent):
        return
    verdicts = {v.tool_call.id: v for v in event.confirm_results}
    for call in reply.msg.get_content_blocks("tool_call"):
        if call.state not in (ToolCallState.ASKING, ToolCallState.ALLOWED):
            continue
        verdict = verdicts.get(call.id)
        if verdict is None or not verdict.confirmed:
            for denied in _result(reply, call, USER_DENIED, ToolResultState.DENIED):
                yield denied
            continue
        if verdict.rules:
            engine.add_rules(verdict.rules)
        async for result in run_call(tool_call=call):
            yield reply.emit(result)


def abandon_parked(reply: ReplyBuilder, state: AgentState) -> list[AgentEvent]:
    """Close a parked reply that new input supersedes: its open calls are interrupted."""
    events = reply.close_open_calls(SUPERSEDED, ToolResultState.INTERRUPTED)
    state.reply_context = ReplyContext()
    end = ReplyEndEvent(
        reply_id=reply.reply_id,
        session_id=reply.session_id,
        finished_reason=ReplyFinishedReason.INTERRUPTED,
    )
    return [*events, reply.emit(end)]
