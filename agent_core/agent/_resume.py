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
# FINISHED without a result: the fold's mark of a call the user denied.
_AWAITING_VERDICT = (ToolCallState.ASKING, ToolCallState.ALLOWED, ToolCallState.FINISHED)


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
    """Carry out the outside input (the resume event is already folded into the reply).

    The fold moved each asked call the user answered to ALLOWED or FINISHED. Confirmed calls
    run with their possibly edited input and accepted rules are persisted; denied calls, and
    asked calls the user did not answer, get DENIED results. External results were appended by
    the fold; each is closed with a `TOOL_RESULT_END`, which finishes its call.
    """
    if isinstance(event, ExternalExecutionResultEvent):
        for closing in _close_external_results(reply, event):
            yield closing
        return
    if not isinstance(event, UserConfirmResultEvent):
        return
    verdicts = {v.tool_call.id: v for v in event.confirm_results}
    answered = {b.id for b in reply.msg.get_content_blocks("tool_result")}
    for call in reply.msg.get_content_blocks("tool_call"):
        if call.id in answered or call.state not in _AWAITING_VERDICT:
            continue
        verdict = verdicts.get(call.id)
        if verdict is None or not verdict.confirmed or call.state is not ToolCallState.ALLOWED:
            for denied in _result(reply, call, USER_DENIED, ToolResultState.DENIED):
                yield denied
            continue
        # The fold leaves the input alone; the user's edit applies to the call that runs.
        call.input = verdict.tool_call.input
        if verdict.rules:
            engine.add_rules(verdict.rules)
        async for result in run_call(tool_call=call):
            yield reply.emit(result)


def _close_external_results(
    reply: ReplyBuilder, event: ExternalExecutionResultEvent
) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    for result in event.execution_results:
        call = reply.msg.find_block(result.id, ToolCallBlock)
        if call is None or call.state is not ToolCallState.SUBMITTED:
            continue
        end = ToolResultEndEvent(
            reply_id=reply.reply_id,
            tool_call_id=result.id,
            state=result.state,
            metadata=result.metadata,
        )
        events.append(reply.emit(end))
    return events


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
