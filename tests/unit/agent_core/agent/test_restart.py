"""Continuing a reply after the host restarted: read-only calls run again, others are reported
as interrupted, unfinished calls are not run, and the reply ends on the same stream."""

from __future__ import annotations

import asyncio

import pytest

from agent_core.agent import Agent, Restarted
from agent_core.agent._restart import INTERRUPTED, NOT_WRITTEN, RUNNING_AGAIN
from agent_core.event import (
    AgentEvent,
    ReplyEndEvent,
    ReplyStartEvent,
    ToolCallDeltaEvent,
    ToolCallStartEvent,
    ToolResultStartEvent,
)
from agent_core.message import AssistantMsg, Msg, ToolResultBlock, ToolResultState, UserMsg
from agent_core.permission import PermissionContext, PermissionMode
from agent_core.state import AgentState, ReplyContext
from agent_core.testing import ScriptedChatModel, ScriptedResponse, ScriptedToolCall
from agent_core.tool import FunctionTool, Toolkit

calls: list[str] = []
release = asyncio.Event()
started = asyncio.Event()


async def lookup(key: str) -> str:
    """Look a key up (blocks until released).

    Args:
        key: The key.
    """
    calls.append(f"lookup {key}")
    started.set()
    await release.wait()
    return f"value of {key}"


async def launch(target: str) -> str:
    """Launch something (blocks until released).

    Args:
        target: What to launch.
    """
    calls.append(f"launch {target}")
    started.set()
    await release.wait()
    return "launched"


def toolkit() -> Toolkit:
    kit = Toolkit()
    kit.register(FunctionTool(lookup, is_read_only=True))
    kit.register(FunctionTool(launch))
    return kit


def bypass() -> AgentState:
    return AgentState(permission_context=PermissionContext(mode=PermissionMode.BYPASS))


async def cut_while_running(tool: str) -> tuple[AgentState, str]:
    """Run a reply until its tool call is running, then drop it as a crash would."""
    release.clear()
    started.clear()
    calls.clear()
    model = ScriptedChatModel(
        [
            ScriptedResponse(
                tool_calls=[
                    ScriptedToolCall(tool, {"key": "k"} if tool == "lookup" else {"target": "t"})
                ]
            )
        ]
    )
    agent = Agent("bot", "sys", model, toolkit(), state=bypass())
    events: list[AgentEvent] = []
    stream = agent.reply_stream(UserMsg("user", "go"))
    async for event in stream:
        events.append(event)
        if isinstance(event, ToolResultStartEvent):
            break
    # The call runs while the host waits for its next event; then the process dies.
    pending = asyncio.ensure_future(anext(stream))
    await asyncio.wait_for(started.wait(), 10)
    pending.cancel()
    start = events[0]
    assert isinstance(start, ReplyStartEvent)
    # What the log holds, folded: the successor's state.
    msg = AssistantMsg("bot", [], id=start.reply_id, created_at=start.created_at)
    for event in events:
        msg.append_event(event)
    state = bypass()
    state.context = [UserMsg("user", "go"), msg]
    state.reply_context = ReplyContext(reply_id=msg.id, cur_iter=1)
    return state, msg.id


async def continue_reply(
    state: AgentState, reply_id: str, answer: str
) -> tuple[list[AgentEvent], Msg]:
    release.set()
    model = ScriptedChatModel([ScriptedResponse(text=answer)])
    agent = Agent("bot", "sys", model, toolkit(), state=state)
    events = [e async for e in agent.reply_stream(Restarted(reply_id))]
    reply = next(m for m in state.context if m.id == reply_id)
    return events, reply


def result_of(reply: Msg) -> ToolResultBlock:
    (result,) = reply.get_content_blocks("tool_result")
    return result


async def test_a_read_only_call_runs_again() -> None:
    state, reply_id = await cut_while_running("lookup")
    events, reply = await continue_reply(state, reply_id, "Found it.")

    assert not any(isinstance(e, ReplyStartEvent) for e in events)
    end = events[-1]
    assert isinstance(end, ReplyEndEvent)
    assert (end.reply_id, end.finished_reason) == (reply_id, "completed")
    result = result_of(reply)
    assert result.state is ToolResultState.SUCCESS
    text = "".join(b.text for b in result.output if b.type == "text")
    assert RUNNING_AGAIN.strip() in text
    assert "value of k" in text
    assert calls == ["lookup k", "lookup k"]
    assert reply.get_text_content() == "Found it."


async def test_a_call_with_side_effects_is_reported_interrupted() -> None:
    state, reply_id = await cut_while_running("launch")
    events, reply = await continue_reply(state, reply_id, "It was interrupted.")

    result = result_of(reply)
    assert result.state is ToolResultState.INTERRUPTED
    assert INTERRUPTED in "".join(b.text for b in result.output if b.type == "text")
    assert calls == ["launch t"]  # not run twice
    assert isinstance(events[-1], ReplyEndEvent)
    assert events[-1].finished_reason == "completed"


async def test_a_call_the_model_had_not_finished_is_not_run() -> None:
    calls.clear()
    msg = AssistantMsg("bot", [], id="r1")
    msg.append_event(ToolCallStartEvent(reply_id="r1", tool_call_id="c1", tool_call_name="launch"))
    msg.append_event(ToolCallDeltaEvent(reply_id="r1", tool_call_id="c1", delta='{"targ'))
    state = bypass()
    state.context = [UserMsg("user", "go"), msg]
    state.reply_context = ReplyContext(reply_id="r1", cur_iter=1)

    _, reply = await continue_reply(state, "r1", "Let me try again.")

    result = result_of(reply)
    assert result.state is ToolResultState.INTERRUPTED
    assert NOT_WRITTEN in "".join(b.text for b in result.output if b.type == "text")
    assert calls == []


async def test_restarting_a_reply_that_is_not_in_progress_fails() -> None:
    agent = Agent("bot", "sys", ScriptedChatModel([]), state=bypass())
    with pytest.raises(ValueError, match="not in progress"):
        _ = [e async for e in agent.reply_stream(Restarted("nope"))]
