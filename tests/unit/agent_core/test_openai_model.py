"""`OpenAIChatModel` against a real local server speaking the Chat Completions protocol (SSE,
tool-call deltas, errors), and its parsing details against recorded bodies."""

import inspect
import json
import pickle
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from agent_core.credential import OpenAICredential
from agent_core.errors import ModelConnectionError, ModelHTTPError, ModelResponseError
from agent_core.formatter import OpenAIMultiAgentFormatter
from agent_core.message import (
    AssistantMsg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    UserMsg,
)
from agent_core.model import (
    ChatResponse,
    OpenAIChatModel,
    ToolChoice,
    ToolSchema,
    collect_response,
)
from agent_core.model.openai import parse_retry_after
from tests.support.model_checks import HELLO, WEATHER
from tests.support.openai_server import OpenAIWireServer, ScriptedReply

WEATHER_DICT = WEATHER.to_dict()


@pytest.fixture
def server() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer() as srv:
        yield srv


def credential(server: OpenAIWireServer, **fields: Any) -> OpenAICredential:
    return OpenAICredential(api_key="sk-test", base_url=server.base_url, **fields)


@pytest.fixture
async def model(server: OpenAIWireServer) -> AsyncIterator[OpenAIChatModel]:
    cred = credential(server, organization="org")
    async with OpenAIChatModel(cred, "gpt-test", max_retries=0, timeout=10) as m:
        yield m


async def stream_of(model: OpenAIChatModel, *args: Any, **kwargs: Any) -> list[ChatResponse]:
    result = await model(*args, **kwargs)
    assert inspect.isasyncgen(result)
    return [chunk async for chunk in result]


async def answer(model: OpenAIChatModel, *args: Any, **kwargs: Any) -> ChatResponse:
    return await collect_response(await model(*args, **kwargs))


def shape(blocks: list[Any]) -> list[tuple[str, ...]]:
    """Blocks without their generated ids and timestamps."""
    out: list[tuple[str, ...]] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            out.append(("text", block.text))
        elif isinstance(block, ThinkingBlock):
            out.append(("thinking", block.thinking))
        else:
            out.append(("tool_call", block.id, block.name, block.input))
    return out


@pytest.mark.integration
async def test_stream_yields_deltas_then_one_final_response_with_everything(
    server: OpenAIWireServer, model: OpenAIChatModel
) -> None:
    server.push(
        ScriptedReply(
            text="Hello, streaming world!",
            reasoning="think first",
            prompt_tokens=42,
            completion_tokens=7,
            cached_tokens=30,
        )
    )

    chunks = await stream_of(model, HELLO)

    *deltas, final = chunks
    assert all(not c.is_last for c in deltas)
    assert final.is_last
    # Each delta carries only its own piece; one id per block across its deltas.
    texts = [b for d in deltas for b in d.content if isinstance(b, TextBlock)]
    assert len(texts) > 1
    assert "".join(b.text for b in texts) == "Hello, streaming world!"
    assert len({b.id for b in texts}) == 1
    assert all(len(b.text) <= 4 for b in texts)
    assert isinstance(deltas[0].content[0], ThinkingBlock)
    # The final response carries the accumulated content, under the same block ids.
    assert shape(final.content) == [
        ("thinking", "think first"),
        ("text", "Hello, streaming world!"),
    ]
    assert final.content[1].id == texts[0].id
    assert final.usage is not None
    assert (final.usage.input_tokens, final.usage.output_tokens) == (42, 7)
    assert final.usage.cache_input_tokens == 30
    assert final.usage.time > 0
    assert all(c.id == final.id for c in chunks)
    assert final.id.startswith("chatcmpl-")


@pytest.mark.integration
async def test_parallel_tool_calls_stream_as_argument_deltas(
    server: OpenAIWireServer, model: OpenAIChatModel
) -> None:
    server.push(
        ScriptedReply(
            text="Checking.",
            tool_calls=[
                ("call_a", "get_weather", {"city": "Paris"}),
                ("call_b", "get_weather", {"city": "Tokyo"}),
            ],
        )
    )

    *deltas, final = await stream_of(model, HELLO, tools=[WEATHER])

    calls = [b for d in deltas for b in d.content if isinstance(b, ToolCallBlock)]
    for call_id, city in [("call_a", "Paris"), ("call_b", "Tokyo")]:
        pieces = [b for b in calls if b.id == call_id]
        assert len(pieces) > 1
        assert {b.name for b in pieces} == {"get_weather"}
        assert json.loads("".join(b.input for b in pieces)) == {"city": city}
    assert shape(final.content) == [
        ("text", "Checking."),
        ("tool_call", "call_a", "get_weather", '{"city": "Paris"}'),
        ("tool_call", "call_b", "get_weather", '{"city": "Tokyo"}'),
    ]


@pytest.mark.integration
async def test_without_streaming_one_whole_response_is_returned(server: OpenAIWireServer) -> None:
    server.push(
        ScriptedReply(
            text="Sure.",
            reasoning="why not",
            tool_calls=[("call_a", "get_weather", {"city": "Rome"})],
            prompt_tokens=3,
        )
    )
    async with OpenAIChatModel(credential(server), "gpt-test", stream=False) as model:
        response = await model(HELLO, tools=[WEATHER])

    assert isinstance(response, ChatResponse)
    assert response.is_last
    assert shape(response.content) == [
        ("thinking", "why not"),
        ("text", "Sure."),
        ("tool_call", "call_a", "get_weather", '{"city": "Rome"}'),
    ]
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (3, 5)
    body = server.requests[-1].body
    assert body["stream"] is False
    assert "stream_options" not in body


@pytest.mark.integration
async def test_request_carries_names_tools_choice_parameters_and_auth(
    server: OpenAIWireServer,
) -> None:
    cred = credential(server, organization="o1")
    params = {"temperature": 0.2, "max_tokens": 64}
    async with OpenAIChatModel(cred, "gpt-test", parameters=params) as model:
        await answer(model, HELLO, tools=[WEATHER], tool_choice="get_weather")
        await answer(model, HELLO, tools=[WEATHER], tool_choice=ToolChoice(mode="required"))
        await answer(model, HELLO, tool_choice="auto")
    first, second, third = server.requests
    assert first.path == "/v1/chat/completions"
    assert first.headers["authorization"] == "Bearer sk-test"
    assert first.headers["openai-organization"] == "o1"
    body = first.body
    assert body["model"] == "gpt-test"
    assert body["temperature"] == 0.2
    assert body["max_tokens"] == 64
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "name": "system", "content": "You are terse."},
        {"role": "user", "name": "user", "content": "Hello?"},
    ]
    assert body["tools"] == [WEATHER_DICT]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert second.body["tool_choice"] == "required"
    # Without tools there is nothing to choose from: OpenAI rejects a lone tool_choice.
    assert "tools" not in third.body
    assert "tool_choice" not in third.body


@pytest.mark.integration
async def test_each_message_carries_its_senders_name(
    server: OpenAIWireServer, model: OpenAIChatModel
) -> None:
    call = ToolCallBlock(id="c1", name="get_weather", input='{"city": "Oslo"}')
    turn = AssistantMsg(
        "Weather Bot",
        [
            call,
            ToolResultBlock(id="c1", name="get_weather", output="rain"),
            TextBlock(text="Rain."),
        ],
    )

    await answer(model, [*HELLO, turn, UserMsg("alice", "Thanks!")], tools=[WEATHER])

    messages = server.requests[-1].body["messages"]
    assert [(m["role"], m.get("name")) for m in messages] == [
        ("system", "system"),
        ("user", "user"),
        # OpenAI rejects whitespace in a name: it is replaced, not dropped.
        ("assistant", "Weather_Bot"),
        ("tool", "get_weather"),
        ("assistant", "Weather_Bot"),
        ("user", "alice"),
    ]


@pytest.mark.integration
async def test_tools_may_be_json_schema_dicts(
    server: OpenAIWireServer, model: OpenAIChatModel
) -> None:
    server.push(ScriptedReply(tool_calls=[("call_c", "get_weather", {"city": "Oslo"})]))

    response = await answer(
        model, HELLO, tools=[WEATHER_DICT], tool_choice=ToolChoice(mode="get_weather")
    )

    assert shape(response.content) == [("tool_call", "call_c", "get_weather", '{"city": "Oslo"}')]
    body = server.requests[-1].body
    assert body["tools"] == [WEATHER_DICT]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}


async def test_malformed_tools_and_choices_are_clear_errors(model: OpenAIChatModel) -> None:
    with pytest.raises(ValueError, match=r"tools\[0\]\.function\.name"):
        await model(HELLO, tools=[{"type": "function", "function": {"description": "x"}}])
    with pytest.raises(ValueError, match=r"tools\[1\] must be"):
        await model(HELLO, tools=[WEATHER_DICT, {"name": "bare"}])
    with pytest.raises(ValueError, match="'get_time', which is not among"):
        await model(HELLO, tools=[WEATHER], tool_choice="get_time")
    with pytest.raises(ValueError, match="unknown tools"):
        await model(HELLO, tools=[WEATHER], tool_choice=ToolChoice(mode="auto", tools=["x"]))


@pytest.mark.integration
async def test_tool_choice_tools_narrow_the_offered_tools(
    server: OpenAIWireServer, model: OpenAIChatModel
) -> None:
    clock = ToolSchema(name="now", description="The time.", parameters={"type": "object"})

    await answer(
        model, HELLO, tools=[WEATHER, clock], tool_choice=ToolChoice(mode="auto", tools=["now"])
    )

    body = server.requests[-1].body
    assert [t["function"]["name"] for t in body["tools"]] == ["now"]
    assert body["tool_choice"] == "auto"


@pytest.mark.integration
async def test_provider_specific_parameters_are_mapped_not_leaked(
    server: OpenAIWireServer,
) -> None:
    thinking = OpenAIChatModel.Parameters(
        thinking_enable=True, reasoning_effort="high", parallel_tool_calls=False
    )
    off = OpenAIChatModel.Parameters(thinking_enable=False, reasoning_effort="high")
    async with (
        OpenAIChatModel(credential(server), "o3", parameters=thinking) as on_model,
        OpenAIChatModel(credential(server), "o3", parameters=off) as off_model,
    ):
        await answer(on_model, HELLO)
        await answer(on_model, HELLO, tools=[WEATHER])
        await answer(off_model, HELLO)
    plain, with_tools, disabled = (r.body for r in server.requests)

    assert "thinking_enable" not in plain
    assert plain["reasoning_effort"] == "high"
    # parallel_tool_calls is only valid alongside tools.
    assert "parallel_tool_calls" not in plain
    assert with_tools["parallel_tool_calls"] is False
    assert "thinking_enable" not in disabled
    assert "reasoning_effort" not in disabled


@pytest.mark.integration
async def test_constructor_arguments_of_the_spec(server: OpenAIWireServer) -> None:
    server.push(ScriptedReply(status=503), ScriptedReply(text="recovered"))
    model = OpenAIChatModel(
        credential=credential(server),
        model="gpt-test",
        parameters=OpenAIChatModel.Parameters(temperature=0.5),
        stream=False,
        max_retries=1,
        retry_delay=0,
        context_size=64_000,
        formatter=OpenAIMultiAgentFormatter(),
    )
    async with model:
        response = await model([UserMsg("alice", "Hi"), AssistantMsg("bob", "Hello")])

    assert (model.model, model.stream, model.max_retries) == ("gpt-test", False, 1)
    assert model.context_size == model.context_length == 64_000
    assert isinstance(response, ChatResponse)
    assert shape(response.content) == [("text", "recovered")]
    # The 503 was retried once; the multi-agent formatter shaped the request.
    assert len(server.requests) == 2
    assert server.requests[-1].body["messages"] == [
        {"role": "user", "content": "<history>\nalice: Hi\nbob: Hello\n</history>"}
    ]
    assert server.requests[-1].body["temperature"] == 0.5


@pytest.mark.integration
async def test_retries_stop_at_max_retries_and_skip_client_errors(
    server: OpenAIWireServer,
) -> None:
    async with OpenAIChatModel(
        credential(server), "gpt-test", max_retries=2, retry_delay=0
    ) as model:
        server.push(*[ScriptedReply(status=429)] * 3)
        with pytest.raises(ModelHTTPError) as info:
            await model(HELLO)
        assert info.value.status == 429
        assert len(server.requests) == 3

        server.push(ScriptedReply(status=400))
        with pytest.raises(ModelHTTPError):
            await model(HELLO)
        assert len(server.requests) == 4


def test_parameters_given_as_a_dict_are_validated() -> None:
    with pytest.raises(ValidationError, match="temperature"):
        OpenAIChatModel(OpenAICredential(api_key="k"), "m", parameters={"temperature": 9})
    with pytest.raises(ValueError, match="max_retries"):
        OpenAIChatModel(OpenAICredential(api_key="k"), "m", max_retries=-1)


@pytest.mark.integration
@pytest.mark.parametrize(
    ("status", "headers", "retry_after"),
    [
        (500, {}, None),
        (401, {"x-ratelimit-reset-requests": "1s"}, None),
        (429, {"retry-after": "2", "x-ratelimit-remaining-requests": "0"}, 2.0),
        (429, {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1m30s"}, 90.0),
    ],
)
async def test_http_errors_carry_status_body_and_retry_after(
    server: OpenAIWireServer,
    model: OpenAIChatModel,
    status: int,
    headers: dict[str, str],
    retry_after: float | None,
) -> None:
    server.push(ScriptedReply(status=status, headers=headers))
    with pytest.raises(ModelHTTPError) as info:
        await model(HELLO)
    assert info.value.status == status
    assert info.value.model == "gpt-test"
    assert json.loads(info.value.body)["error"]["message"].startswith(f"Scripted HTTP {status}")
    assert info.value.retry_after == retry_after


@pytest.mark.integration
async def test_garbage_frame_is_a_response_error(
    server: OpenAIWireServer, model: OpenAIChatModel
) -> None:
    server.push(ScriptedReply(garbage=True))
    with pytest.raises(ModelResponseError, match="not JSON"):
        await answer(model, HELLO)


@pytest.mark.integration
async def test_stream_cut_mid_way_is_a_connection_error(
    server: OpenAIWireServer, model: OpenAIChatModel
) -> None:
    server.push(ScriptedReply(text="this answer will not finish", truncate=True))
    with pytest.raises(ModelConnectionError) as info:
        await answer(model, HELLO)
    url = f"{server.base_url}/chat/completions"
    assert (info.value.provider, info.value.url) == ("openai_chat", url)
    assert f"model 'gpt-test' (openai_chat POST {url}): " in str(info.value)


@pytest.mark.integration
async def test_a_stalled_server_times_out_as_a_connection_error(server: OpenAIWireServer) -> None:
    server.push(ScriptedReply(text="slow", delay=2.0))
    async with OpenAIChatModel(credential(server), "gpt-test", max_retries=0, timeout=0.2) as model:
        with pytest.raises(ModelConnectionError) as info:
            await model(HELLO)
    assert isinstance(info.value.__cause__, httpx.TimeoutException)
    assert f"(openai_chat POST {server.base_url}/chat/completions): ReadTimeout" in str(info.value)


@pytest.mark.integration
async def test_unreachable_server_is_a_connection_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cred = OpenAICredential(api_key="k", base_url=f"http://127.0.0.1:{port}/v1")
    async with OpenAIChatModel(cred, "gpt-test", max_retries=0) as model:
        with pytest.raises(ModelConnectionError) as info:
            await model(HELLO)
    assert isinstance(info.value.__cause__, httpx.ConnectError)
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    assert str(info.value).startswith(f"model 'gpt-test' (openai_chat POST {url}): ConnectError")
    # Ray re-raises it in another process: the provider and URL survive pickling.
    assert str(pickle.loads(pickle.dumps(info.value))) == str(info.value)


@pytest.mark.integration
async def test_reply_func_answers_from_the_conversation(server: OpenAIWireServer) -> None:
    def reply(body: dict[str, Any]) -> ScriptedReply:
        if body["messages"][-1]["role"] == "tool":
            return ScriptedReply(text=f"It is {body['messages'][-1]['content']}.")
        return ScriptedReply(tool_calls=[("c1", "get_weather", {"city": "Paris"})])

    server.reply_func = reply
    async with OpenAIChatModel(credential(server), "gpt-test") as model:
        first = await answer(model, HELLO, tools=[WEATHER])
        call = first.content[0]
        assert isinstance(call, ToolCallBlock)
        turn = AssistantMsg(
            "bot", [call, ToolResultBlock(id=call.id, name=call.name, output="sunny")]
        )
        second = await answer(model, [*HELLO, turn], tools=[WEATHER])
    text = second.content[0]
    assert isinstance(text, TextBlock)
    assert text.text == "It is sunny."


# --- parsing details against recorded bodies (httpx.MockTransport) ---


def sse(*events: Any) -> bytes:
    return b"".join(
        f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n".encode() for e in events
    )


def delta(finish: str | None = None, **fields: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": fields, "finish_reason": finish}]}


def mock_client(body: bytes) -> httpx.AsyncClient:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def run(body: bytes) -> list[tuple[str, ...]]:
    """The blocks of every delta, in order (the final accumulated response left out)."""
    async with mock_client(body) as client:
        model = OpenAIChatModel(OpenAICredential(api_key="k"), "m", client=client)
        *deltas, final = await stream_of(model, HELLO)
    assert final.is_last
    return [piece for d in deltas for piece in shape(d.content)]


async def test_name_split_across_fragments_and_args_before_the_name_ends() -> None:
    body = sse(
        delta(tool_calls=[{"index": 1, "id": "c2", "function": {"name": "get_"}}]),
        delta(tool_calls=[{"index": 0, "id": "c1", "function": {"name": "read", "arguments": ""}}]),
        delta(tool_calls=[{"index": 1, "function": {"name": "weather"}}]),
        delta(tool_calls=[{"index": 1, "function": {"arguments": '{"ci'}}]),
        delta(tool_calls=[{"index": 0, "function": {"arguments": "{}"}}]),
        delta(tool_calls=[{"index": 1, "function": {"arguments": 'ty": "Rome"}'}}]),
        delta("tool_calls"),
        "[DONE]",
    )
    assert await run(body) == [
        ("tool_call", "c2", "get_weather", '{"ci'),
        ("tool_call", "c1", "read", "{}"),
        ("tool_call", "c2", "get_weather", 'ty": "Rome"}'),
    ]


async def test_name_repeated_in_every_fragment_is_not_doubled() -> None:
    head = {"index": 0, "id": "c1", "function": {"name": "ls", "arguments": ""}}
    body = sse(
        delta(tool_calls=[head]),
        delta(tool_calls=[{**head, "function": {"name": "ls", "arguments": "{}"}}]),
        delta("tool_calls"),
        "[DONE]",
    )
    assert await run(body) == [("tool_call", "c1", "ls", "{}")]


async def test_call_without_arguments_is_announced_at_finish() -> None:
    body = sse(
        delta(tool_calls=[{"index": 0, "id": "c1", "function": {"name": "now", "arguments": ""}}]),
        delta("tool_calls"),
    )
    assert await run(body) == [("tool_call", "c1", "now", "")]


async def test_error_object_inside_the_stream_is_a_response_error() -> None:
    body = sse(delta(content="par"), {"error": {"message": "overloaded", "type": "server_error"}})
    with pytest.raises(ModelResponseError, match="overloaded"):
        await run(body)


async def test_text_after_a_tool_call_is_a_new_block() -> None:
    call = {"index": 0, "id": "c1", "function": {"name": "ls", "arguments": "{}"}}
    body = sse(
        delta(content="Let me look."),
        delta(tool_calls=[call]),
        delta(content="Done"),
        delta(content="."),
        delta("tool_calls"),
        "[DONE]",
    )
    async with mock_client(body) as client:
        model = OpenAIChatModel(OpenAICredential(api_key="k"), "m", client=client)
        *deltas, final = await stream_of(model, HELLO)

    texts = [b for d in deltas for b in d.content if isinstance(b, TextBlock)]
    assert len({b.id for b in texts}) == 2
    assert shape(final.content) == [
        ("text", "Let me look."),
        ("tool_call", "c1", "ls", "{}"),
        ("text", "Done."),
    ]


async def test_unexpected_chunk_shape_is_a_response_error() -> None:
    with pytest.raises(ModelResponseError):
        await run(sse({"choices": "nope"}))


async def test_stream_ending_without_finish_or_done_is_a_connection_error() -> None:
    with pytest.raises(ModelConnectionError, match="DONE"):
        await run(sse(delta(content="half")))


async def test_a_supplied_client_is_left_open() -> None:
    async with mock_client(sse(delta("stop", content="x"), "[DONE]")) as client:
        model = OpenAIChatModel(OpenAICredential(api_key="k"), "m", client=client)
        assert shape((await answer(model, HELLO)).content) == [("text", "x")]
        await model.aclose()
        assert not client.is_closed


def test_retry_after_header_forms() -> None:
    assert parse_retry_after(httpx.Headers({"retry-after-ms": "1500"})) == 1.5
    assert parse_retry_after(httpx.Headers({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0
    reset = {"x-ratelimit-reset-tokens": "6m0s", "x-ratelimit-reset-requests": "20ms"}
    assert parse_retry_after(httpx.Headers(reset)) is None
    assert parse_retry_after(httpx.Headers(reset), rate_limited=True) == 360.0
    exhausted = {**reset, "x-ratelimit-remaining-requests": "0"}
    assert parse_retry_after(httpx.Headers(exhausted), rate_limited=True) == 0.02
