import json
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from agent_core.credential import OpenAICredential
from agent_core.errors import ModelConnectionError, ModelHTTPError, ModelResponseError
from agent_core.message import (
    AssistantMsg,
    SystemMsg,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    Usage,
    UserMsg,
)
from agent_core.model import (
    ModelChunk,
    OpenAIChatModel,
    TextChunk,
    ThinkingChunk,
    ToolCallArgsChunk,
    ToolCallStartChunk,
    ToolSchema,
    UsageChunk,
)
from agent_core.model.openai import parse_retry_after
from tests.support.openai_server import OpenAIWireServer, ScriptedReply

WEATHER = ToolSchema(
    name="get_weather",
    description="Weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
HELLO = [SystemMsg("system", "You are terse."), UserMsg("user", "Hello?")]


@pytest.fixture
def server() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer() as srv:
        yield srv


@pytest.fixture
async def model(server: OpenAIWireServer) -> AsyncIterator[OpenAIChatModel]:
    credential = OpenAICredential(api_key="sk-test", base_url=server.base_url, organization="org")
    async with OpenAIChatModel(credential, "gpt-test", timeout=10) as m:
        yield m


async def collect(model: OpenAIChatModel, **kwargs: Any) -> list[ModelChunk]:
    return [chunk async for chunk in model.stream(kwargs.pop("messages", HELLO), **kwargs)]


@pytest.mark.integration
async def test_text_streams_in_pieces_then_usage(
    server: OpenAIWireServer, model: OpenAIChatModel
) -> None:
    server.push(ScriptedReply(text="Hello, streaming world!", reasoning="think first"))
    chunks = await collect(model)
    texts = [c.text for c in chunks if isinstance(c, TextChunk)]
    assert len(texts) > 1
    assert "".join(texts) == "Hello, streaming world!"
    assert "".join(c.text for c in chunks if isinstance(c, ThinkingChunk)) == "think first"
    assert isinstance(chunks[0], ThinkingChunk)
    assert isinstance(chunks[-1], UsageChunk)


@pytest.mark.integration
async def test_parallel_tool_calls_with_split_arguments(
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
    chunks = await collect(model, tools=[WEATHER])
    starts = [c for c in chunks if isinstance(c, ToolCallStartChunk)]
    assert [(c.call_id, c.name) for c in starts] == [
        ("call_a", "get_weather"),
        ("call_b", "get_weather"),
    ]
    for start in starts:
        args = [
            c for c in chunks if isinstance(c, ToolCallArgsChunk) and c.call_id == start.call_id
        ]
        assert len(args) > 1
        assert chunks.index(start) < chunks.index(args[0])

    server.push(ScriptedReply(tool_calls=[("call_c", "get_weather", {"city": "Oslo"})]))
    response = await model(HELLO, tools=[WEATHER])
    calls = [b for b in response.content if isinstance(b, ToolCallBlock)]
    assert [(c.id, json.loads(c.input)) for c in calls] == [("call_c", {"city": "Oslo"})]


@pytest.mark.integration
async def test_usage_is_reported(server: OpenAIWireServer, model: OpenAIChatModel) -> None:
    server.push(ScriptedReply(text="hi", prompt_tokens=42, completion_tokens=7, cached_tokens=30))
    response = await model(HELLO)
    assert response.usage.input_tokens == 42
    assert response.usage.output_tokens == 7
    assert response.usage.cache_input_tokens == 30


@pytest.mark.integration
async def test_non_stream_mode_gives_the_same_chunks(server: OpenAIWireServer) -> None:
    credential = OpenAICredential(api_key="sk-test", base_url=server.base_url)
    server.push(
        ScriptedReply(
            text="Sure.",
            reasoning="why not",
            tool_calls=[("call_a", "get_weather", {"city": "Rome"})],
            prompt_tokens=3,
        )
    )
    async with OpenAIChatModel(credential, "gpt-test", stream=False) as model:
        chunks = await collect(model, tools=[WEATHER])
    assert chunks == [
        ThinkingChunk(text="why not"),
        TextChunk(text="Sure."),
        ToolCallStartChunk(call_id="call_a", name="get_weather"),
        ToolCallArgsChunk(call_id="call_a", delta='{"city": "Rome"}'),
        UsageChunk(usage=Usage(input_tokens=3, output_tokens=5)),
    ]
    body = server.requests[-1].body
    assert body["stream"] is False
    assert "stream_options" not in body


@pytest.mark.integration
async def test_request_carries_tools_choice_parameters_and_auth(server: OpenAIWireServer) -> None:
    credential = OpenAICredential(api_key="sk-secret", base_url=server.base_url, organization="o1")
    params = {"temperature": 0.2, "max_tokens": 64}
    async with OpenAIChatModel(credential, "gpt-test", parameters=params) as model:
        await model(HELLO, tools=[WEATHER], tool_choice="get_weather")
        await model(HELLO, tools=[WEATHER], tool_choice="required")
    first, second = server.requests
    assert first.path == "/v1/chat/completions"
    assert first.headers["authorization"] == "Bearer sk-secret"
    assert first.headers["openai-organization"] == "o1"
    body = first.body
    assert body["model"] == "gpt-test"
    assert body["temperature"] == 0.2
    assert body["max_tokens"] == 64
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Hello?"},
    ]
    assert body["tools"][0]["function"]["name"] == "get_weather"
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert second.body["tool_choice"] == "required"


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
        await model(HELLO)


@pytest.mark.integration
async def test_stream_cut_mid_way_is_a_connection_error(
    server: OpenAIWireServer, model: OpenAIChatModel
) -> None:
    server.push(ScriptedReply(text="this answer will not finish", truncate=True))
    with pytest.raises(ModelConnectionError):
        await model(HELLO)


@pytest.mark.integration
async def test_a_stalled_server_times_out_as_a_connection_error(server: OpenAIWireServer) -> None:
    server.push(ScriptedReply(text="slow", delay=2.0))
    credential = OpenAICredential(api_key="k", base_url=server.base_url)
    async with OpenAIChatModel(credential, "gpt-test", timeout=0.2) as model:
        with pytest.raises(ModelConnectionError) as info:
            await model(HELLO)
    assert isinstance(info.value.__cause__, httpx.TimeoutException)


@pytest.mark.integration
async def test_unreachable_server_is_a_connection_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    credential = OpenAICredential(api_key="k", base_url=f"http://127.0.0.1:{port}/v1")
    async with OpenAIChatModel(credential, "gpt-test") as model:
        with pytest.raises(ModelConnectionError) as info:
            await model(HELLO)
    assert isinstance(info.value.__cause__, httpx.ConnectError)


@pytest.mark.integration
async def test_reply_func_answers_from_the_conversation(server: OpenAIWireServer) -> None:
    def reply(body: dict[str, Any]) -> ScriptedReply:
        if body["messages"][-1]["role"] == "tool":
            return ScriptedReply(text=f"It is {body['messages'][-1]['content']}.")
        return ScriptedReply(tool_calls=[("c1", "get_weather", {"city": "Paris"})])

    server.reply_func = reply
    credential = OpenAICredential(api_key="k", base_url=server.base_url)
    async with OpenAIChatModel(credential, "gpt-test") as model:
        first = await model(HELLO, tools=[WEATHER])
        call = first.content[0]
        assert isinstance(call, ToolCallBlock)
        turn = AssistantMsg(
            "bot", [call, ToolResultBlock(id=call.id, name=call.name, output="sunny")]
        )
        second = await model([*HELLO, turn], tools=[WEATHER])
    answer = second.content[0]
    assert isinstance(answer, TextBlock)
    assert answer.text == "It is sunny."


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


async def run(body: bytes) -> list[ModelChunk]:
    async with mock_client(body) as client:
        model = OpenAIChatModel(OpenAICredential(api_key="k"), "m", client=client)
        return await collect(model)


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
        ToolCallStartChunk(call_id="c2", name="get_weather"),
        ToolCallArgsChunk(call_id="c2", delta='{"ci'),
        ToolCallStartChunk(call_id="c1", name="read"),
        ToolCallArgsChunk(call_id="c1", delta="{}"),
        ToolCallArgsChunk(call_id="c2", delta='ty": "Rome"}'),
    ]


async def test_name_repeated_in_every_fragment_is_not_doubled() -> None:
    head = {"index": 0, "id": "c1", "function": {"name": "ls", "arguments": ""}}
    body = sse(
        delta(tool_calls=[head]),
        delta(tool_calls=[{**head, "function": {"name": "ls", "arguments": "{}"}}]),
        delta("tool_calls"),
        "[DONE]",
    )
    assert await run(body) == [
        ToolCallStartChunk(call_id="c1", name="ls"),
        ToolCallArgsChunk(call_id="c1", delta="{}"),
    ]


async def test_call_without_arguments_is_announced_at_finish() -> None:
    body = sse(
        delta(tool_calls=[{"index": 0, "id": "c1", "function": {"name": "now", "arguments": ""}}]),
        delta("tool_calls"),
    )
    assert await run(body) == [ToolCallStartChunk(call_id="c1", name="now")]


async def test_error_object_inside_the_stream_is_a_response_error() -> None:
    body = sse(delta(content="par"), {"error": {"message": "overloaded", "type": "server_error"}})
    with pytest.raises(ModelResponseError, match="overloaded"):
        await run(body)


async def test_unexpected_chunk_shape_is_a_response_error() -> None:
    with pytest.raises(ModelResponseError):
        await run(sse({"choices": "nope"}))


async def test_stream_ending_without_finish_or_done_is_a_connection_error() -> None:
    with pytest.raises(ModelConnectionError, match="DONE"):
        await run(sse(delta(content="half")))


async def test_a_supplied_client_is_left_open() -> None:
    async with mock_client(sse(delta("stop", content="x"), "[DONE]")) as client:
        model = OpenAIChatModel(OpenAICredential(api_key="k"), "m", client=client)
        assert await collect(model) == [TextChunk(text="x")]
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
