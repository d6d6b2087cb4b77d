"""Continuing a reply after its host restarted: settle the tool calls the crash left open.

The reply's Msg holds what was streamed before the crash. For each tool call without a
finished result:

* the model had not finished writing it — it is not run (the model can issue it again);
* it never started — it goes through the permission gate and runs like any new call;
* the user had confirmed it — it runs;
* it was running — it runs again only if it only reads; otherwise the model is told it was
  interrupted, since running it twice could repeat its side effects.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from agent_core.agent._reply import ReplyBuilder
from agent_core.event import (
    AgentEvent,
    ToolResultEndEvent,
    ToolResultStartEvent,
    ToolResultTextDeltaEvent,
)
from agent_core.message import ToolCallBlock, ToolCallState, ToolResultBlock, ToolResultState
from agent_core.tool import Toolkit


@dataclass(frozen=True)
class Restarted:
    """Agent input: continue the reply in progress (`reply_id`) after the host restarted."""

    reply_id: str


NOT_WRITTEN = "Not executed: the session restarted before this tool call was complete."
INTERRUPTED = (
    "Interrupted: the session restarted while this tool call was running. It was not run "
    "again because it may have side effects; check what it did before retrying it."
)
RUNNING_AGAIN = "\n[The session restarted while this call was running; running it again.]\n"


@dataclass
class OpenCalls:
    """The reply's unfinished tool calls, sorted by what happens to them."""

    unwritten: list[ToolCallBlock] = field(default_factory=list)
    unstarted: list[ToolCallBlock] = field(default_factory=list)
    confirmed: list[ToolCallBlock] = field(default_factory=list)
    running: list[ToolCallBlock] = field(default_factory=list)
    unanswered: list[ToolCallBlock] = field(default_factory=list)


def open_calls(reply: ReplyBuilder) -> OpenCalls:
    """Sort the reply's tool calls that have no finished result."""
    results = {b.id: b for b in reply.msg.content if isinstance(b, ToolResultBlock)}
    calls = OpenCalls()
    for call in reply.msg.get_content_blocks("tool_call"):
        result = results.get(call.id)
        if result is not None and result.state is not ToolResultState.RUNNING:
            continue
        if call.finished_at is None and call.state is ToolCallState.PENDING:
            calls.unwritten.append(call)
        elif result is not None:
            calls.running.append(call)
        elif call.state is ToolCallState.PENDING:
            calls.unstarted.append(call)
        elif call.state is ToolCallState.ALLOWED:
            calls.confirmed.append(call)
        else:
            calls.unanswered.append(call)
    return calls


def close_calls(
    reply: ReplyBuilder, calls: list[ToolCallBlock], text: str, started: bool = False
) -> list[AgentEvent]:
    """INTERRUPTED results for `calls` (`started`: their result block is already open)."""
    events: list[AgentEvent] = []
    rid = reply.reply_id
    for call in calls:
        if not started:
            events.append(
                reply.emit(
                    ToolResultStartEvent(
                        reply_id=rid, tool_call_id=call.id, tool_call_name=call.name
                    )
                )
            )
        events += [
            reply.emit(ToolResultTextDeltaEvent(reply_id=rid, tool_call_id=call.id, delta=text)),
            reply.emit(
                ToolResultEndEvent(
                    reply_id=rid, tool_call_id=call.id, state=ToolResultState.INTERRUPTED
                )
            ),
        ]
    return events


async def rerun_if_read_only(
    reply: ReplyBuilder,
    toolkit: Toolkit,
    calls: list[ToolCallBlock],
    run_call: Callable[..., AsyncIterator[AgentEvent]],
) -> AsyncIterator[AgentEvent]:
    """Run calls that were running again when they only read; close the others."""
    for call in calls:
        if not await reads_only(toolkit, call):
            for event in close_calls(reply, [call], INTERRUPTED, started=True):
                yield event
            continue
        rid = reply.reply_id
        note = ToolResultTextDeltaEvent(reply_id=rid, tool_call_id=call.id, delta=RUNNING_AGAIN)
        yield reply.emit(note)
        async for event in run_call(tool_call=call):
            if not isinstance(event, ToolResultStartEvent):  # its block is open already
                yield reply.emit(event)


async def reads_only(toolkit: Toolkit, call: ToolCallBlock) -> bool:
    """Whether `call` only reads, so running it again after a restart is safe."""
    tool = toolkit.get(call.name)
    if tool is None:
        return False
    try:
        arguments = json.loads(call.input or "{}")
    except json.JSONDecodeError:
        return False
    return isinstance(arguments, dict) and await tool.check_read_only(arguments)
