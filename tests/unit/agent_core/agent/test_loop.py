"""The ReAct loop on the scripted model: events, folding, iterations, retries, hints."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_core.agent import RUNTIME_STATE_SOURCE, Agent, ModelConfig, ReActConfig
from agent_core.errors import ModelConnectionError, ModelHTTPError
from agent_core.event import AgentEvent, ReplyStartEvent
from agent_core.formatter import OpenAIChatFormatter
from agent_core.message import AssistantMsg, HintBlock, Msg, UserMsg
from agent_core.model import ChatResponse, ToolChoice
from agent_core.permission import PermissionContext, PermissionMode
from agent_core.state import AgentState
from agent_core.testing import ScriptedChatModel, ScriptedResponse, ScriptedToolCall
from agent_core.tool import FunctionTool, Toolkit


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


async def slow_echo(text: str) -> str:
    """Echo after a pause.

    Args:
        text: What to echo.
    """
    await asyncio.sleep(0.05)
    return text


async def collect(agent: Agent, msg: Msg | None) -> list[AgentEvent]:
    return [event async for event in agent.reply_stream(msg)]


def trusted() -> AgentState:
    """State whose permission mode runs every tool without asking."""
    return AgentState(permission_context=PermissionContext(mode=PermissionMode.BYPASS))


def fold(events: list[AgentEvent]) -> Msg:
    start = events[0]
    assert isinstance(start, ReplyStartEvent)
    msg = AssistantMsg(start.name, [], id=start.reply_id, created_at=start.created_at)
    for event in events[1:]:
        msg.append_event(event)
    return msg


async def test_tool_turn_event_order_and_fold_equals_state() -> None:
    model = ScriptedChatModel(
        [
            ScriptedResponse(
                text="Adding.", tool_calls=[ScriptedToolCall("add", {"a": 2, "b": 3})]
            ),
            "It is 5.",
        ]
    )
    agent = Agent("bot", "You add.", model, Toolkit([add]), state=trusted())
    events = await collect(agent, UserMsg("u", "2+3?"))
    types = [e.type for e in events]
    assert types[0] == "REPLY_START"
    assert types[-1] == "REPLY_END"
    assert types.index("TOOL_CALL_END") < types.index("TOOL_RESULT_START")
    reply = agent.state.context[-1]
    assert fold(events) == reply
    assert reply.get_content_blocks("tool_result")[0].output_text() == "5"
    assert reply.get_text_content() == "Adding.\nIt is 5."
    assert agent.state.reply_context.reply_id == ""
    # The second model call saw the tool result.
    assert model.calls[1][-1].get_content_blocks("tool_result")


async def test_reply_returns_the_final_message() -> None:
    agent = Agent("bot", "hi", ScriptedChatModel(["Hello!"]))
    msg = await agent.reply(UserMsg("u", "hi"))
    assert msg.get_text_content() == "Hello!"
    assert msg.finished_reason == "completed"
    assert [m.role for m in agent.state.context] == ["user", "assistant"]


async def test_max_iters_forces_a_text_only_call() -> None:
    loop_call = ScriptedResponse(tool_calls=[ScriptedToolCall("add", {"a": 1, "b": 1})])
    model = ScriptedChatModel([loop_call, loop_call, "Giving up."])
    agent = Agent(
        "bot", "x", model, Toolkit([add]), state=trusted(), react_config=ReActConfig(max_iters=2)
    )
    events = await collect(agent, UserMsg("u", "loop"))
    types = [e.type for e in events]
    assert "EXCEED_MAX_ITERS" in types
    assert events[-1].finished_reason == "exceed_max_iters"  # type: ignore[union-attr]
    assert agent.state.context[-1].get_text_content() == "Giving up."


class IgnoresToolChoice(ScriptedChatModel):
    """A provider that calls tools even when told not to (`tool_choice: none`)."""

    async def _call_api(
        self,
        model_name: str,
        messages: list[Msg],
        tools: list[dict[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> ChatResponse | AsyncGenerator[ChatResponse, None]:
        return await super()._call_api(model_name, messages, tools, None, **kwargs)


async def test_tool_calls_past_max_iters_are_answered_not_run() -> None:
    def loop_call() -> ScriptedResponse:
        return ScriptedResponse(tool_calls=[ScriptedToolCall("counted_add", {"a": 1, "b": 1})])

    model = IgnoresToolChoice([loop_call(), loop_call(), "Done."])
    ran: list[int] = []

    def counted_add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: The first.
            b: The second.
        """
        ran.append(a + b)
        return a + b

    agent = Agent(
        "bot",
        "x",
        model,
        Toolkit([FunctionTool(counted_add)]),
        state=trusted(),
        react_config=ReActConfig(max_iters=1),
    )
    events = await collect(agent, UserMsg("u", "loop"))

    assert events[-1].finished_reason == "exceed_max_iters"  # type: ignore[union-attr]
    assert ran == [2]  # the forced step's call was not run
    reply = agent.state.context[-1]
    calls = reply.get_content_blocks("tool_call")
    results = {r.id: r for r in reply.get_content_blocks("tool_result")}
    assert len(calls) == 2
    assert set(results) == {c.id for c in calls}
    last = results[calls[-1].id]
    assert last.state == "error"
    assert last.output_text().startswith("Not executed: this reply reached its limit of 1 ")
    assert fold(events) == reply
    # The next reply's model call sees every call answered.
    await collect(agent, UserMsg("u", "again"))
    formatted = await OpenAIChatFormatter().format(model.calls[-1])
    answered = {m["tool_call_id"] for m in formatted if m["role"] == "tool"}
    called = {c["id"] for m in formatted for c in m.get("tool_calls") or []}
    assert called == answered == {c.id for c in calls}


async def test_retryable_errors_are_retried_then_fallback_model_answers() -> None:
    failing = ScriptedChatModel(
        [
            ScriptedResponse(error=ModelHTTPError(503, "m", "busy")),
            ScriptedResponse(error=ModelConnectionError("reset")),
        ]
    )
    fallback = ScriptedChatModel(["from fallback"], model="fallback")
    config = ModelConfig(max_retries=1, retry_backoff=0, fallback_model=fallback)
    agent = Agent("bot", "x", failing, model_config=config)
    msg = await agent.reply(UserMsg("u", "hi"))
    assert msg.get_text_content() == "from fallback"
    assert len(failing.calls) == 2


async def test_a_model_answering_whole_responses_drives_the_loop_like_a_stream() -> None:
    def add(a: int, b: int) -> int:
        """Add.

        Args:
            a: The first.
            b: The second.
        """
        return a + b

    script = [
        ScriptedResponse(text="Adding.", tool_calls=[ScriptedToolCall("add", {"a": 2, "b": 3})]),
        "It is 5.",
    ]
    state = AgentState(permission_context=PermissionContext(mode=PermissionMode.BYPASS))
    replies = []
    for stream in (True, False):
        model = ScriptedChatModel(script, stream=stream)
        agent = Agent(
            "bot", "x", model, toolkit=Toolkit(tools=[add]), state=state.model_copy(deep=True)
        )
        events = [type(e).__name__ async for e in agent.reply_stream(UserMsg("u", "2+3?"))]
        reply = agent.state.context[-1]
        replies.append(([b.type for b in reply.content], reply.get_text_content(), events))

    (stream_blocks, stream_text, stream_events), (whole_blocks, whole_text, whole_events) = replies
    assert whole_blocks == stream_blocks == ["hint", "text", "tool_call", "tool_result", "text"]
    assert whole_text == stream_text == "Adding.\nIt is 5."
    # Same event kinds, fewer deltas: a whole response is one delta per block.
    assert sorted(set(whole_events)) == sorted(set(stream_events))
    assert len(whole_events) < len(stream_events)


async def test_non_retryable_error_ends_reply_with_error_info() -> None:
    model = ScriptedChatModel([ScriptedResponse(error=ModelHTTPError(401, "m", "bad key"))])
    agent = Agent("bot", "x", model, model_config=ModelConfig(retry_backoff=0))
    msg = await agent.reply(UserMsg("u", "hi"))
    assert msg.finished_reason == "error"
    assert msg.error is not None
    assert msg.error.type == "authentication"
    assert len(model.calls) == 1


async def test_concurrency_safe_calls_run_together() -> None:
    tool = FunctionTool(slow_echo, is_concurrency_safe=True)
    calls = [ScriptedToolCall("slow_echo", {"text": str(i)}) for i in range(5)]
    model = ScriptedChatModel([ScriptedResponse(tool_calls=calls), "done"])
    agent = Agent("bot", "x", model, Toolkit([tool]), state=trusted())
    events = await collect(agent, UserMsg("u", "go"))
    starts = [i for i, e in enumerate(events) if e.type == "TOOL_RESULT_START"]
    first_end = next(i for i, e in enumerate(events) if e.type == "TOOL_RESULT_END")
    assert len(starts) == 5
    assert all(s < first_end for s in starts)  # all started before any finished
    results = agent.state.context[-1].get_content_blocks("tool_result")
    assert sorted(r.output_text() for r in results) == ["0", "1", "2", "3", "4"]


class QueueHints:
    def __init__(self, *hints: str) -> None:
        self.pending = [HintBlock(hint=h, source='{"label": "team"}') for h in hints]

    async def drain(self) -> list[HintBlock]:
        taken, self.pending = self.pending, []
        return taken


async def test_hints_are_injected_before_reasoning() -> None:
    model = ScriptedChatModel(["ok"])
    agent = Agent("bot", "x", model, hint_source=QueueHints("<team-message>hi</team-message>"))
    events = await collect(agent, None)
    # the inbox hint, then the runtime state (first reply: the time), then reasoning
    assert [e.type for e in events][:4] == [
        "REPLY_START",
        "HINT_BLOCK",
        "HINT_BLOCK",
        "MODEL_CALL_START",
    ]
    inbox, runtime = agent.state.context[-1].get_content_blocks("hint")
    assert inbox.hint == "<team-message>hi</team-message>"
    assert runtime.source == RUNTIME_STATE_SOURCE


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(max_size=30),
            st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=3),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_folding_any_real_run_equals_the_persisted_message(
    steps: list[tuple[str, list[tuple[int, int]]]],
) -> None:
    script: list[ScriptedResponse | str] = [
        ScriptedResponse(
            text=text, tool_calls=[ScriptedToolCall("add", {"a": a, "b": b}) for a, b in calls]
        )
        for text, calls in steps
    ]
    script.append("final")
    agent = Agent(
        "bot",
        "x",
        ScriptedChatModel(script, chunk_size=3),
        Toolkit([add]),
        react_config=ReActConfig(max_iters=10),
    )
    events = asyncio.run(collect(agent, UserMsg("u", "go")))
    assert fold(events) == agent.state.context[-1]


async def test_cancelling_the_consumer_interrupts_with_interrupted_results() -> None:
    started = asyncio.Event()

    async def wait_forever() -> str:
        """Block until cancelled."""
        started.set()
        await asyncio.sleep(3600)
        return "never"

    model = ScriptedChatModel([ScriptedResponse(tool_calls=[ScriptedToolCall("wait_forever")])])
    agent = Agent("bot", "x", model, Toolkit([wait_forever]), state=trusted())
    events: list[AgentEvent] = []

    async def consume() -> None:
        events.extend([event async for event in agent.reply_stream(UserMsg("u", "go"))])

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    await task
    types = [e.type for e in events]
    assert "USER_INTERRUPT" in types
    assert events[-1].finished_reason == "interrupted"  # type: ignore[union-attr]
    result = agent.state.context[-1].get_content_blocks("tool_result")[0]
    assert result.state == "interrupted"
    assert agent.state.context[-1].get_text_content() == ReActConfig().interruption_message
    assert fold(events) == agent.state.context[-1]


class CollectingSink:
    def __init__(self) -> None:
        self.finished: asyncio.Queue[str] = asyncio.Queue()

    def adopt(self, call: object, next_chunk: asyncio.Future[object], rest: object) -> None:
        async def finish() -> None:
            chunks = [await next_chunk]
            chunks += [c async for c in rest]  # type: ignore[attr-defined]
            await self.finished.put("".join(b.text for c in chunks for b in c.content))

        asyncio.get_running_loop().create_task(finish())


async def test_slow_tool_moves_to_background_sink() -> None:
    async def slow() -> str:
        """Take a while."""
        await asyncio.sleep(0.3)
        return "slow result"

    model = ScriptedChatModel([ScriptedResponse(tool_calls=[ScriptedToolCall("slow")]), "ok"])
    sink = CollectingSink()
    agent = Agent(
        "bot", "x", model, Toolkit([slow]), state=trusted(), background_sink=sink, tool_timeout=0.05
    )
    msg = await agent.reply(UserMsg("u", "go"))
    result = msg.get_content_blocks("tool_result")[0]
    assert "running in background" in result.output_text()
    assert result.metadata == {"background": True}
    assert msg.finished_reason == "completed"
    assert await asyncio.wait_for(sink.finished.get(), 5) == "slow result"
