"""Human in the loop: ASK parks the reply; confirmations and external results resume it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agent_core.agent import Agent
from agent_core.event import (
    AgentEvent,
    ConfirmResult,
    ExternalExecutionResultEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    UserConfirmResultEvent,
    UserInterruptEvent,
)
from agent_core.message import TextBlock, ToolResultBlock, ToolResultState, UserMsg
from agent_core.permission import PermissionMode
from agent_core.state import AgentState
from agent_core.testing import ScriptedChatModel, ScriptedResponse, ScriptedToolCall
from agent_core.tool import ToolBase, ToolChunk, Toolkit

WRITTEN: list[str] = []


def note(text: str) -> str:
    """Write a note.

    Args:
        text: The note.
    """
    WRITTEN.append(text)
    return f"noted {text}"


class Deploy(ToolBase):
    """A tool executed outside the agent."""

    name = "Deploy"
    description = "Deploy a service (done by the operator)."
    input_schema: dict[str, Any] = {  # noqa: RUF012
        "type": "object",
        "properties": {"service": {"type": "string"}},
    }
    is_external_tool = True

    async def __call__(self, *args: Any, **kwargs: Any) -> AsyncIterator[ToolChunk]:
        raise AssertionError("external tools are not called by the agent")
        yield ToolChunk()  # pragma: no cover


def call_note(text: str, call_id: str = "c1") -> ScriptedResponse:
    return ScriptedResponse(tool_calls=[ScriptedToolCall("note", {"text": text}, id=call_id)])


async def run(agent: Agent, inputs: object) -> list[AgentEvent]:
    return [e async for e in agent.reply_stream(inputs)]  # type: ignore[arg-type]


async def test_ask_parks_then_confirm_resumes_the_same_reply() -> None:
    WRITTEN.clear()
    agent = Agent("bot", "x", ScriptedChatModel([call_note("a"), "done"]), Toolkit([note]))
    first = await run(agent, UserMsg("u", "note a"))
    assert first[-1].type == "REQUIRE_USER_CONFIRM"
    assert "REPLY_END" not in [e.type for e in first]
    ask = first[-1]
    assert isinstance(ask, RequireUserConfirmEvent)
    assert ask.tool_calls[0].state == "asking"
    assert ask.tool_calls[0].suggested_rules
    assert WRITTEN == []
    parked = agent.state.current_reply()
    assert parked is not None
    assert parked.get_content_blocks("tool_call")[0].state == "asking"

    confirm = UserConfirmResultEvent(
        reply_id=ask.reply_id,
        confirm_results=[ConfirmResult(confirmed=True, tool_call=ask.tool_calls[0])],
    )
    second = await run(agent, confirm)
    assert [e.type for e in second][:2] == ["USER_CONFIRM_RESULT", "REPLY_START"]
    assert second[1].reply_id == ask.reply_id  # type: ignore[union-attr]
    assert second[-1].type == "REPLY_END"
    assert WRITTEN == ["a"]
    reply = agent.state.context[-1]
    assert reply.id == ask.reply_id
    assert reply.get_content_blocks("tool_result")[0].output_text() == "noted a"
    assert agent.state.current_reply() is None


async def test_edited_input_and_accepted_rules() -> None:
    WRITTEN.clear()
    model = ScriptedChatModel([call_note("draft"), "ok", call_note("draft", "c2"), "ok again"])
    agent = Agent("bot", "x", model, Toolkit([note]))
    ask = (await run(agent, UserMsg("u", "note")))[-1]
    assert isinstance(ask, RequireUserConfirmEvent)
    edited = ask.tool_calls[0].model_copy(update={"input": json.dumps({"text": "final"})})
    rules = ask.tool_calls[0].suggested_rules
    confirm = UserConfirmResultEvent(
        reply_id=ask.reply_id,
        confirm_results=[ConfirmResult(confirmed=True, tool_call=edited, rules=rules)],
    )
    await run(agent, confirm)
    assert WRITTEN == ["final"]
    assert agent.state.permission_context.allow_rules["note"]
    # The accepted rule allows the identical call next time, without asking.
    events = await run(agent, UserMsg("u", "again"))
    assert events[-1].type == "REPLY_END"
    assert WRITTEN == ["final", "draft"]


async def test_denied_call_gets_a_denied_result_the_model_reads() -> None:
    WRITTEN.clear()
    model = ScriptedChatModel([call_note("x"), "I will not."])
    agent = Agent("bot", "x", model, Toolkit([note]))
    ask = (await run(agent, UserMsg("u", "note")))[-1]
    assert isinstance(ask, RequireUserConfirmEvent)
    deny = UserConfirmResultEvent(
        reply_id=ask.reply_id,
        confirm_results=[ConfirmResult(confirmed=False, tool_call=ask.tool_calls[0])],
    )
    events = await run(agent, deny)
    assert events[-1].type == "REPLY_END"
    result = agent.state.context[-1].get_content_blocks("tool_result")[0]
    assert result.state == ToolResultState.DENIED
    assert agent.state.context[-1].get_content_blocks("tool_call")[0].state == "finished"
    assert WRITTEN == []
    assert model.calls[-1][-1].get_content_blocks("tool_result")[0].state == "denied"


async def test_dont_ask_mode_denies_instead_of_parking() -> None:
    state = AgentState()
    state.permission_context.mode = PermissionMode.DONT_ASK
    agent = Agent("bot", "x", ScriptedChatModel([call_note("x"), "ok"]), Toolkit([note]), state)
    events = await run(agent, UserMsg("u", "note"))
    assert events[-1].type == "REPLY_END"
    assert agent.state.context[-1].get_content_blocks("tool_result")[0].state == "denied"


async def test_external_tool_round_trip() -> None:
    script = [
        ScriptedResponse(tool_calls=[ScriptedToolCall("Deploy", {"service": "api"}, id="d1")]),
        "deployed",
    ]
    agent = Agent("bot", "x", ScriptedChatModel(script), Toolkit([Deploy()]))
    events = await run(agent, UserMsg("u", "deploy"))
    ask = events[-1]
    assert isinstance(ask, RequireExternalExecutionEvent)
    result = ToolResultBlock(
        id="d1", name="Deploy", output=[TextBlock(text="v2 live")], state=ToolResultState.SUCCESS
    )
    resumed = await run(
        agent, ExternalExecutionResultEvent(reply_id=ask.reply_id, execution_results=[result])
    )
    assert resumed[-1].type == "REPLY_END"
    # The fold leaves the call submitted; the agent closes the result, which finishes it.
    assert [e.type for e in resumed][:3] == [
        "EXTERNAL_EXECUTION_RESULT",
        "REPLY_START",
        "TOOL_RESULT_END",
    ]
    reply = agent.state.context[-1]
    assert reply.get_content_blocks("tool_result")[0].output_text() == "v2 live"
    assert reply.get_content_blocks("tool_call")[0].state == "finished"
    assert reply.get_text_content() == "deployed"


async def test_interrupt_and_new_message_close_a_parked_reply() -> None:
    model = ScriptedChatModel([call_note("x"), call_note("y", "c2"), "fresh"])
    agent = Agent("bot", "x", model, Toolkit([note]))
    ask = (await run(agent, UserMsg("u", "note")))[-1]
    events = await run(agent, UserInterruptEvent(reply_id=ask.reply_id))
    assert events[-1].finished_reason == "interrupted"  # type: ignore[union-attr]
    assert agent.state.current_reply() is None

    await run(agent, UserMsg("u", "note y"))
    events = await run(agent, UserMsg("u", "never mind"))
    types = [e.type for e in events]
    assert types.count("REPLY_END") == 2  # the abandoned parked reply, then the new one
    assert events[-1].finished_reason == "completed"  # type: ignore[union-attr]


async def test_resume_for_unknown_reply_is_rejected() -> None:
    agent = Agent("bot", "x", ScriptedChatModel(["hi"]))
    bogus = UserConfirmResultEvent(reply_id="nope", confirm_results=[])
    with pytest.raises(ValueError, match="not awaiting"):
        await run(agent, bogus)
