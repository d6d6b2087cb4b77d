import json
from pathlib import Path

import pytest

from agent_core.agent._config import ContextConfig
from agent_core.agent._context import (
    OFFLOADED_CONTEXT_NOTE,
    SUMMARY_TOOL_NAME,
    compress_context,
)
from agent_core.agent._tokens import count_messages
from agent_core.errors import ModelResponseError
from agent_core.message import (
    AssistantMsg,
    Msg,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
    UserMsg,
)
from agent_core.ports import Offloader
from agent_core.state import AgentState, ReplyContext
from agent_core.testing import ScriptedChatModel, ScriptedResponse, ScriptedToolCall

# With a 1000-token model and the default ratios: compress past 800 tokens, keep <= 100.
CONTEXT_LENGTH = 1000
CONFIG = ContextConfig()
SUMMARY = {
    "task_overview": "List the repo files.",
    "current_state": "Ran ls in /srv/project.",
    "important_discoveries": "README.md exists.",
    "next_steps": "Answer the user.",
    "context_to_preserve": "The user prefers short answers.",
}


def _text(tokens: int, char: str = "x") -> str:
    return char * (tokens * 4)


def _call(call_id: str) -> ToolCallBlock:
    return ToolCallBlock(id=call_id, name="Bash", input="{}")


def _result(call_id: str, tokens: int = 1) -> ToolResultBlock:
    return ToolResultBlock(
        id=call_id, name="Bash", output=_text(tokens), state=ToolResultState.SUCCESS
    )


def _model(*steps: ScriptedResponse) -> ScriptedChatModel:
    script = steps or (ScriptedResponse(tool_calls=[ScriptedToolCall(SUMMARY_TOOL_NAME, SUMMARY)]),)
    return ScriptedChatModel(list(script), context_size=CONTEXT_LENGTH)


def _ids(msgs: list[Msg]) -> list[str]:
    return [m.id for m in msgs]


def _long_conversation() -> list[Msg]:
    return [
        UserMsg("user", _text(200)),
        AssistantMsg("agent", [_call("a"), _result("a", 500), TextBlock(text=_text(50))]),
        UserMsg("user", _text(30)),
        AssistantMsg("agent", _text(50)),
    ]


async def test_below_the_threshold_nothing_happens() -> None:
    model = _model()
    state = AgentState(context=[UserMsg("user", _text(100))])
    result = await compress_context(model, "sys", state, [], CONFIG)
    assert not result.compressed
    assert result.tokens_before == result.tokens_after
    assert model.calls == []
    assert len(state.context) == 1


async def test_older_messages_become_the_rendered_summary() -> None:
    model = _model()
    context = _long_conversation()
    state = AgentState(context=list(context))
    result = await compress_context(model, "You are helpful.", state, [], CONFIG)

    assert _ids(state.context) == _ids(context[2:])
    assert count_messages(state.context) <= CONFIG.reserve_ratio * CONTEXT_LENGTH
    assert isinstance(state.summary, str)
    assert state.summary.startswith("<system-info>Here is a summary of your previous work\n")
    assert "# Task Overview\nList the repo files.\n\n# Current State\nRan ls" in state.summary
    assert state.summary.endswith(
        "# Context to Preserve\nThe user prefers short answers.</system-info>"
    )
    assert result.compressed_msgs == 2
    assert result.kept_msgs == 2
    assert result.summarized
    assert result.tokens_before > 800 > result.tokens_after


async def test_the_summary_comes_from_a_forced_call_shaped_by_the_summary_schema() -> None:
    model = _model()
    context = _long_conversation()
    await compress_context(model, "You are helpful.", AgentState(context=context), [], CONFIG)

    [tools] = model.tool_schemas
    assert [(t.name, t.parameters) for t in tools] == [(SUMMARY_TOOL_NAME, CONFIG.summary_schema)]
    [prompt] = model.calls
    assert prompt[0].role == "system"
    assert prompt[0].get_text_content() == "You are helpful."
    assert _ids(prompt[1:3]) == _ids(context[:2])
    request = prompt[-1].get_text_content() or ""
    assert request.startswith("<system-hint>You have been working on the task described above.")
    assert "{current_time}" not in request
    assert "The current time is 20" in request


async def test_a_previous_summary_is_resummarized() -> None:
    model = _model()
    state = AgentState(
        summary="<system-info>old summary</system-info>", context=_long_conversation()
    )
    await compress_context(model, "sys", state, [], CONFIG)
    assert model.calls[0][1].get_text_content() == "<system-info>old summary</system-info>"
    assert "old summary" not in state.summary


async def test_a_call_is_never_separated_from_its_result_across_messages() -> None:
    call_msg = AssistantMsg("agent", [_call("x"), TextBlock(text=_text(70))])
    result_msg = AssistantMsg("agent", [_result("x", 20), TextBlock(text=_text(20))])
    state = AgentState(context=[UserMsg("user", _text(790)), call_msg, result_msg])
    model = _model()
    await compress_context(model, "sys", state, [], CONFIG)

    # Keeping the whole last message would fit, but would orphan result "x": it goes with its call.
    assert state.context == [result_msg]
    assert [b.type for b in result_msg.content] == ["text"]
    summarized = [b for m in model.calls[0] for b in m.content]
    assert ("tool_call", "x") in [(b.type, b.id) for b in summarized]
    assert ("tool_result", "x") in [(b.type, b.id) for b in summarized]


async def test_a_huge_reply_in_progress_is_split_between_steps_and_kept_in_place() -> None:
    live = AssistantMsg(
        "agent",
        [
            TextBlock(text=_text(5)),
            _call("a"),
            _result("a", 800),
            TextBlock(text=_text(5)),
            _call("b"),
            _call("c"),
            _result("b", 30),
            _result("c", 30),
            TextBlock(text=_text(5)),
        ],
    )
    first_steps = live.content[:3]
    state = AgentState(
        context=[UserMsg("user", _text(10)), live], reply_context=ReplyContext(reply_id=live.id)
    )
    model = _model()
    result = await compress_context(model, "sys", state, [], CONFIG)

    assert state.context == [live]
    assert state.context[0] is live
    assert [b.type for b in live.content] == [
        "text",
        "tool_call",
        "tool_call",
        "tool_result",
        "tool_result",
        "text",
    ]
    assert count_messages(state.context) <= 100
    summarized = model.calls[0][1:-1]
    assert summarized[-1].id == live.id
    assert summarized[-1].content == first_steps
    assert result.compressed_msgs == 2


async def test_an_unanswered_call_stays_in_the_context() -> None:
    waiting = _call("pending")  # e.g. parked for the user's confirmation
    text = TextBlock(text=_text(200))
    live = AssistantMsg("agent", [_call("a"), _result("a", 900), text, waiting])
    state = AgentState(context=[live], reply_context=ReplyContext(reply_id=live.id))
    await compress_context(_model(), "sys", state, [], CONFIG)
    # Over the reserve, but dropping the call would lose it for good.
    assert live.content == [text, waiting]


async def test_a_reply_in_progress_that_does_not_fit_is_emptied_not_removed() -> None:
    live = AssistantMsg("agent", [TextBlock(text=_text(900))])
    state = AgentState(context=[live], reply_context=ReplyContext(reply_id=live.id))
    await compress_context(_model(), "sys", state, [], CONFIG)
    assert state.context == [live]
    assert live.content == []


async def test_the_system_prompt_alone_over_the_threshold_is_an_error() -> None:
    model = _model()
    state = AgentState(context=[UserMsg("user", "hi")])
    with pytest.raises(RuntimeError, match="system prompt"):
        await compress_context(model, _text(801), state, [], CONFIG)
    assert model.calls == []


async def test_compressed_messages_are_offloaded_and_the_summary_points_there(
    offloader: Offloader, tmp_path: Path
) -> None:
    context = _long_conversation()
    state = AgentState(session_id="s1", context=list(context))
    result = await compress_context(_model(), "sys", state, [], CONFIG, offloader)

    path = tmp_path / "sessions" / "s1" / "context.jsonl"
    assert result.offload_ref == str(path)
    lines = path.read_text().splitlines()
    assert [Msg.model_validate_json(line) for line in lines] == context[:2]
    assert isinstance(state.summary, str)
    assert state.summary.endswith(OFFLOADED_CONTEXT_NOTE.format(path=path))


async def test_without_a_summary_the_oldest_messages_are_dropped(
    offloader: Offloader, tmp_path: Path
) -> None:
    context = _long_conversation()
    state = AgentState(session_id="s1", summary="earlier", context=list(context))
    result = await compress_context(
        _model(ScriptedResponse(text="I'd rather chat.")), "sys", state, [], CONFIG, offloader
    )
    assert _ids(state.context) == _ids(context[2:])
    assert not result.summarized
    assert result.error is not None
    assert SUMMARY_TOOL_NAME in result.error
    path = tmp_path / "sessions" / "s1" / "context.jsonl"
    assert len(path.read_text().splitlines()) == 2
    assert state.summary == "earlier\n" + OFFLOADED_CONTEXT_NOTE.format(path=path)


async def test_with_the_fallback_off_a_failed_summary_leaves_the_context_intact() -> None:
    context = _long_conversation()
    state = AgentState(context=list(context))
    config = ContextConfig(compression_fallback_to_truncation=False)
    model = _model(ScriptedResponse(text="no tool call"))
    with pytest.raises(ModelResponseError):
        await compress_context(model, "sys", state, [], config)
    assert _ids(state.context) == _ids(context)
    assert state.summary == ""


async def test_force_compresses_below_the_threshold() -> None:
    context = [UserMsg("user", _text(300)), AssistantMsg("agent", _text(50))]
    state = AgentState(context=list(context))
    result = await compress_context(_model(), "sys", state, [], CONFIG, force=True)
    assert result.compressed
    assert _ids(state.context) == _ids(context[1:])


async def test_missing_summary_fields_render_empty_and_extras_as_json() -> None:
    fields = {"task_overview": "T", "next_steps": ["a", "b"]}
    model = _model(ScriptedResponse(tool_calls=[ScriptedToolCall(SUMMARY_TOOL_NAME, fields)]))
    state = AgentState(context=_long_conversation())
    await compress_context(model, "sys", state, [], CONFIG)
    assert "# Task Overview\nT\n\n# Current State\n\n\n" in state.summary
    assert "# Next Steps\n" + json.dumps(["a", "b"]) in state.summary
