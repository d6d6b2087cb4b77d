"""`AnthropicChatModel` against a real local server speaking the Messages API (SSE events split
at awkward byte boundaries, thinking with signatures, tool-input deltas, cache usage, errors)."""

import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from agent_core.credential import AnthropicCredential
from agent_core.errors import (
    ModelAuthError,
    ModelBadRequestError,
    ModelContextLengthError,
    ModelHTTPError,
    ModelRateLimitError,
    ModelResponseError,
    ModelServerError,
    ModelStreamInterruptedError,
)
from agent_core.event import ThinkingBlockEndEvent, event_to_json, parse_event
from agent_core.message import (
    AssistantMsg,
    SystemMsg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    UserMsg,
)
from agent_core.model import (
    AnthropicChatModel,
    AnthropicMultiAgentFormatter,
    ChatResponse,
    collect_response,
)
from tests.support.model_checks import WEATHER, weather_agent
from tests.support.wire_server import Answer, WireServer, anthropic_error, anthropic_events, sse

pytestmark = pytest.mark.integration

HELLO = [SystemMsg("system", "You are terse."), UserMsg("user", "Héllo?")]
CACHE_USAGE = {
    "input_tokens": 7,
    "cache_creation_input_tokens": 100,
    "cache_read_input_tokens": 50,
    "output_tokens": 30,
}


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer() as srv:
        yield srv


def model(server: WireServer, **kwargs: Any) -> AnthropicChatModel:
    cred = AnthropicCredential(api_key="sk-ant", base_url=server.base_url)
    kwargs.setdefault("max_retries", 0)
    return AnthropicChatModel(cred, "claude-test", **kwargs)


def shape(blocks: list[Any]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for b in blocks:
        if isinstance(b, TextBlock):
            out.append(("text", b.text))
        elif isinstance(b, ThinkingBlock):
            out.append(("thinking", b.thinking, b.signature, b.redacted_thinking_data))
        elif isinstance(b, ToolCallBlock):
            out.append(("tool_call", b.id, b.name, json.loads(b.input)))
    return out


@pytest.mark.parametrize("piece", [1, 7, 1 << 16])
async def test_stream_of_thinking_text_and_tool_use_split_anywhere(
    server: WireServer, piece: int
) -> None:
    events = anthropic_events(
        thinking="Let me think… ünïcode",
        text="Checking the weather.",
        tool_calls=[("toolu_1", "get_weather", {"city": "Zürich"})],
        usage=CACHE_USAGE,
    )
    server.push(Answer(sse(events), piece=piece))
    async with model(server, parameters={"thinking_enable": True}) as m:
        result = await m(HELLO, tools=[WEATHER])
        assert not isinstance(result, ChatResponse)
        chunks = [c async for c in result]
    *deltas, final = chunks
    assert all(not d.is_last for d in deltas)
    assert final.is_last
    assert len(deltas) > 5  # one per event carrying content, not one blob
    assert shape(final.content) == [
        ("thinking", "Let me think… ünïcode", "sig-abc", None),
        ("text", "Checking the weather."),
        ("tool_call", "toolu_1", "get_weather", {"city": "Zürich"}),
    ]
    assert final.id == "msg_01"
    usage = final.usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens) == (157, 30)
    assert (usage.cache_input_tokens, usage.cache_creation_input_tokens) == (50, 100)

    request = server.requests[0]
    assert request.path == "/messages"
    assert request.headers["x-api-key"] == "sk-ant"
    assert request.headers["anthropic-version"] == "2023-06-01"
    body = request.body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert body["system"] == [
        {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["tools"][0]["input_schema"] == WEATHER.parameters
    assert body["tools"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Héllo?", "cache_control": {"type": "ephemeral"}}],
        }
    ]


async def test_redacted_thinking_and_whole_answers(server: WireServer) -> None:
    whole = {
        "id": "msg_2",
        "type": "message",
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "s1"},
            {"type": "redacted_thinking", "data": "ENCRYPTED"},
            {"type": "text", "text": "Done."},
            {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Oslo"}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 3, "output_tokens": 4},
    }
    server.push(Answer(json.dumps(whole).encode()))
    async with model(server, stream=False) as m:
        result = await m(HELLO, tools=[WEATHER])
    assert isinstance(result, ChatResponse)
    assert shape(result.content) == [
        ("thinking", "hmm", "s1", None),
        ("thinking", "", None, "ENCRYPTED"),
        ("text", "Done."),
        ("tool_call", "toolu_2", "get_weather", {"city": "Oslo"}),
    ]
    assert result.id == "msg_2"
    assert server.requests[0].body["stream"] is False


async def test_history_sends_signed_thinking_tool_use_and_results_back(
    server: WireServer,
) -> None:
    reply = AssistantMsg(
        "bot",
        [
            ThinkingBlock(thinking="plan", signature="sig-1"),
            ThinkingBlock(thinking="unsigned, from elsewhere"),
            ThinkingBlock(thinking="", redacted_thinking_data="R"),
            ToolCallBlock(id="t1", name="get_weather", input='{"city": "Rome"}'),
            ToolResultBlock(id="t1", name="get_weather", output="sunny"),
            TextBlock(text="It is sunny."),
        ],
    )
    server.push(Answer(sse(anthropic_events(text="ok"))))
    async with model(server, parameters={"prompt_caching": False}) as m:
        await collect_response(await m([*HELLO, reply, UserMsg("user", "Thanks")]))
    assert server.requests[0].body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "plan", "signature": "sig-1"},
                {"type": "redacted_thinking", "data": "R"},
                {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Rome"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "It is sunny."}]},
        {"role": "user", "content": [{"type": "text", "text": "Thanks"}]},
    ]


async def test_multi_agent_formatter_folds_speakers_into_history() -> None:
    turns = await AnthropicMultiAgentFormatter().format(
        [
            SystemMsg("system", "Be brief."),
            UserMsg("alice", "Hi"),
            AssistantMsg("bob", [TextBlock(text="Hello")]),
        ]
    )
    assert turns == [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [{"type": "text", "text": "<history>\nalice: Hi\nbob: Hello\n</history>"}],
        },
    ]


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (400, anthropic_error(400), ModelBadRequestError),
        (
            400,
            b'{"type":"error","error":{"message":"prompt is too long: 210000 tokens"}}',
            ModelContextLengthError,
        ),
        (401, anthropic_error(401), ModelAuthError),
        (429, anthropic_error(429), ModelRateLimitError),
        (500, anthropic_error(500), ModelServerError),
        (529, anthropic_error(529), ModelServerError),
    ],
)
async def test_error_statuses_are_typed(
    server: WireServer, status: int, body: bytes, error: type[ModelHTTPError]
) -> None:
    server.push(Answer(body, status=status, headers={"retry-after": "3"}))
    async with model(server) as m:
        with pytest.raises(error) as info:
            await m(HELLO)
    assert info.value.status == status
    assert info.value.retry_after == 3.0


async def test_overloaded_then_success_is_retried_after_retry_after(server: WireServer) -> None:
    server.push(
        Answer(anthropic_error(529), status=529, headers={"retry-after": "0"}),
        Answer(sse(anthropic_events(text="fine"))),
    )
    async with model(server, max_retries=1, retry_delay=30) as m:
        final = await collect_response(await m(HELLO))
    assert shape(final.content) == [("text", "fine")]
    assert len(server.requests) == 2


async def test_connection_cut_mid_stream(server: WireServer) -> None:
    server.push(Answer(sse(anthropic_events(text="a long answer " * 5)), piece=16, cut=0.5))
    async with model(server) as m:
        with pytest.raises(ModelStreamInterruptedError):
            await collect_response(await m(HELLO))


async def test_stream_without_message_stop_is_interrupted(server: WireServer) -> None:
    server.push(Answer(sse(anthropic_events(text="half", stop=False))))
    async with model(server) as m:
        with pytest.raises(ModelStreamInterruptedError, match="message_stop"):
            await collect_response(await m(HELLO))


async def test_error_event_mid_stream(server: WireServer) -> None:
    events = anthropic_events(text="par", stop=False)[:4]
    events.append({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    server.push(Answer(sse(events)))
    async with model(server) as m:
        with pytest.raises(ModelResponseError, match="Overloaded"):
            await collect_response(await m(HELLO))


class City(BaseModel):
    name: str
    population: int


async def test_structured_output_by_a_forced_tool(server: WireServer) -> None:
    from agent_core.model import STRUCTURED_OUTPUT_TOOL_NAME

    args = {"name": "Lyon", "population": 520000}
    server.push(
        Answer(sse(anthropic_events(tool_calls=[("t", STRUCTURED_OUTPUT_TOOL_NAME, args)])))
    )
    async with model(server) as m:
        out = await m.generate_structured_output(HELLO, City)
    assert out.content == args
    assert server.requests[0].body["tool_choice"] == {
        "type": "tool",
        "name": STRUCTURED_OUTPUT_TOOL_NAME,
    }


@pytest.mark.parametrize(
    ("parameters", "thinking", "output_config"),
    [
        (
            {"thinking_mode": "adaptive", "thinking_display": "summarized"},
            {"type": "adaptive", "display": "summarized"},
            None,
        ),
        (
            {"thinking_mode": "adaptive", "reasoning_effort": "max"},
            {"type": "adaptive"},
            {"effort": "max"},
        ),
        (
            {"thinking_enable": True, "thinking_budget": 2048, "thinking_display": "omitted"},
            {"type": "enabled", "budget_tokens": 2048, "display": "omitted"},
            None,
        ),
        # The mode wins over the older switch; a disabled thinking takes no display.
        (
            {"thinking_enable": True, "thinking_mode": "disabled", "thinking_display": "omitted"},
            {"type": "disabled"},
            None,
        ),
        ({"reasoning_effort": "low"}, None, {"effort": "low"}),
    ],
)
async def test_thinking_mode_display_and_effort_on_the_wire(
    server: WireServer,
    parameters: dict[str, Any],
    thinking: dict[str, Any] | None,
    output_config: dict[str, Any] | None,
) -> None:
    server.push(Answer(sse(anthropic_events(thinking="hm", text="ok"))))
    async with model(server, parameters=parameters) as m:
        final = await collect_response(await m(HELLO))
    assert shape(final.content) == [("thinking", "hm", "sig-abc", None), ("text", "ok")]
    body = server.requests[0].body
    assert body.get("thinking") == thinking
    assert body.get("output_config") == output_config
    assert "reasoning_effort" not in body
    assert "thinking_display" not in body


@pytest.mark.parametrize(("mode", "forced"), [("adaptive", False), ("disabled", True)])
async def test_structured_output_forces_its_tool_only_without_thinking(
    server: WireServer, mode: str, forced: bool
) -> None:
    from agent_core.model import STRUCTURED_OUTPUT_TOOL_NAME

    args = {"name": "Lyon", "population": 520000}
    server.push(
        Answer(sse(anthropic_events(tool_calls=[("t", STRUCTURED_OUTPUT_TOOL_NAME, args)])))
    )
    async with model(server, parameters={"thinking_mode": mode}) as m:
        out = await m.generate_structured_output(HELLO, City)
    assert out.content == args
    choice = server.requests[0].body.get("tool_choice")
    # Thinking refuses a forced tool choice: the model is offered the tool and told to call it.
    assert (choice == {"type": "tool", "name": STRUCTURED_OUTPUT_TOOL_NAME}) is forced


def test_unknown_thinking_knobs_are_rejected() -> None:
    with pytest.raises(ValidationError):
        AnthropicChatModel.Parameters.model_validate({"thinking_mode": "always"})
    with pytest.raises(ValidationError):
        AnthropicChatModel.Parameters.model_validate({"reasoning_effort": "extreme"})


@pytest.mark.parametrize("piece", [5, 1 << 16])
async def test_agent_replays_signed_and_redacted_thinking_with_its_tool_use(
    server: WireServer, piece: int
) -> None:
    server.push(
        Answer(
            sse(
                anthropic_events(
                    thinking="Look it up.",
                    signature="SIG-1",
                    redacted="REDACTED-1",
                    tool_calls=[("toolu_1", "get_weather", {"city": "Oslo"})],
                )
            ),
            piece=piece,
        ),
        Answer(sse(anthropic_events(text="It is sunny in Oslo."))),
    )
    agent = weather_agent(
        model(server, parameters={"thinking_enable": True, "prompt_caching": False})
    )
    events = [e async for e in agent.reply_stream(UserMsg("user", "Weather in Oslo?"))]
    await agent.model.aclose()
    ends = [e for e in events if isinstance(e, ThinkingBlockEndEvent)]
    assert [(e.signature, e.redacted_thinking_data) for e in ends] == [
        ("SIG-1", None),
        (None, "REDACTED-1"),
    ]
    # A client folding the events off the wire (JSON) gets the proofs too.
    folded = AssistantMsg("weather", [], id=ends[0].reply_id)
    for event in events:
        folded.append_event(parse_event(event_to_json(event)))
    thinking = [b for b in folded.content if isinstance(b, ThinkingBlock)]
    assert [(b.thinking, b.signature, b.redacted_thinking_data) for b in thinking] == [
        ("Look it up.", "SIG-1", None),
        ("", None, "REDACTED-1"),
    ]
    assistant = server.requests[1].body["messages"][1]
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Look it up.", "signature": "SIG-1"},
            {"type": "redacted_thinking", "data": "REDACTED-1"},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}},
        ],
    }
    result = server.requests[1].body["messages"][2]["content"][0]
    assert result["type"] == "tool_result"
    assert result["tool_use_id"] == "toolu_1"
