"""`OllamaChatModel` against a real local server speaking Ollama's native `/api/chat` (NDJSON
streams): line sequences, awkward chunk boundaries, tool calls, thinking, usage, error bodies,
a connection cut mid-stream, and structured output through the JSON-schema `format`."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from agent_core.credential import CREDENTIAL_TYPES, OllamaCredential
from agent_core.errors import (
    ModelAuthError,
    ModelBadRequestError,
    ModelConnectionError,
    ModelRateLimitError,
    ModelResponseError,
    ModelServerError,
    ModelStreamInterruptedError,
    StructuredOutputError,
)
from agent_core.formatter import OllamaMultiAgentFormatter
from agent_core.message import (
    AssistantMsg,
    Base64Source,
    DataBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    UserMsg,
)
from agent_core.model import ChatResponse, OllamaChatModel, ToolSchema, collect_response
from tests.support.model_checks import HELLO, WEATHER, chunks, weather_agent
from tests.support.ollama_server import OllamaReply, OllamaWireServer

CLOCK = ToolSchema(name="now", description="The time.", parameters={"type": "object"})


@pytest.fixture
def server() -> Iterator[OllamaWireServer]:
    with OllamaWireServer() as srv:
        yield srv


def make(server: OllamaWireServer, stream: bool = True, **kwargs: Any) -> OllamaChatModel:
    credential = OllamaCredential(host=server.base_url)
    return OllamaChatModel(
        credential, "qwen3:8b", stream=stream, max_retries=0, timeout=10, **kwargs
    )


@pytest.fixture
async def model(server: OllamaWireServer) -> AsyncIterator[OllamaChatModel]:
    async with make(server) as m:
        yield m


async def test_stream_is_deltas_then_one_accumulated_final(
    server: OllamaWireServer, model: OllamaChatModel
) -> None:
    server.push(OllamaReply(thinking="Hmm, ok", content="Hello there", piece=4))
    out = await chunks(model, HELLO)
    assert [c.is_last for c in out] == [False] * 5 + [True]
    thinking, text = out[-1].content
    assert isinstance(thinking, ThinkingBlock)
    assert thinking.thinking == "Hmm, ok"
    assert isinstance(text, TextBlock)
    assert text.text == "Hello there"
    assert {c.content[0].id for c in out[2:5]} == {text.id}
    (request,) = server.requests
    assert request.path == "/api/chat"
    assert "authorization" not in request.headers
    assert request.body == {
        "model": "qwen3:8b",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Hello?"},
        ],
        "stream": True,
        "think": False,
    }


async def test_whole_answer_without_streaming(server: OllamaWireServer) -> None:
    server.push(OllamaReply(thinking="Plan.", content="Done.", tool_calls=[("now", {})]))
    async with make(server, stream=False) as model:
        result = await model(HELLO, tools=[CLOCK])
    assert isinstance(result, ChatResponse)
    assert result.is_last
    thinking, text, call = result.content
    assert isinstance(thinking, ThinkingBlock)
    assert thinking.thinking == "Plan."
    assert isinstance(text, TextBlock)
    assert text.text == "Done."
    assert isinstance(call, ToolCallBlock)
    assert (call.name, call.input) == ("now", "{}")
    assert result.usage is not None
    assert result.usage.output_tokens == 5
    assert server.requests[0].body["stream"] is False


@pytest.mark.parametrize("split", [1, 2, 5, 17, 200])
async def test_chunk_boundaries_anywhere(server: OllamaWireServer, split: int) -> None:
    """Bytes split mid-UTF-8 character, mid-line and mid-JSON decode to the same answer."""
    text = "Ensoleillé — 21°C ☀️, demain: «pluie»"
    server.push(
        OllamaReply(
            thinking="Café ☕", content=text, tool_calls=[("get_weather", {"city": "Zürich"})],
            split=split, piece=3,
        )
    )  # fmt: skip
    async with make(server) as model:
        final = await collect_response(await model(HELLO, tools=[WEATHER]))
    thinking, answer, call = final.content
    assert isinstance(thinking, ThinkingBlock)
    assert thinking.thinking == "Café ☕"
    assert isinstance(answer, TextBlock)
    assert answer.text == text
    assert isinstance(call, ToolCallBlock)
    assert json.loads(call.input) == {"city": "Zürich"}


async def test_tool_calls_and_their_results(
    server: OllamaWireServer, model: OllamaChatModel
) -> None:
    args = {"city": "Paris", "days": [1, 2], "opts": {"note": 'say "hi"'}}
    server.push(OllamaReply(tool_calls=[("get_weather", args), ("now", {})], call_ids=True))
    final = (await chunks(model, HELLO, tools=[WEATHER, CLOCK]))[-1]
    first, second = final.content
    assert isinstance(first, ToolCallBlock)
    assert first.id == "call_0"
    assert json.loads(first.input) == args
    assert second.id == "call_1"
    assert server.requests[0].body["tools"] == [WEATHER.to_dict(), CLOCK.to_dict()]

    history = [
        *HELLO,
        AssistantMsg(
            "assistant",
            [
                ThinkingBlock(thinking="Need data."),
                TextBlock(text="Checking."),
                first,
                second,
                ToolResultBlock(id=first.id, name="get_weather", output="Sunny"),
                ToolResultBlock(id=second.id, name="now", output="noon"),
                TextBlock(text="Sunny at noon."),
            ],
        ),
        UserMsg("user", "Thanks"),
    ]
    server.push(OllamaReply(content="ok"))
    await collect_response(await model(history))
    assert server.requests[1].body["messages"][2:] == [
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {"function": {"name": "get_weather", "arguments": args}},
                {"function": {"name": "now", "arguments": {}}},
            ],
        },
        {"role": "tool", "tool_name": "get_weather", "content": "Sunny"},
        {"role": "tool", "tool_name": "now", "content": "noon"},
        {"role": "assistant", "content": "Sunny at noon."},
        {"role": "user", "content": "Thanks"},
    ]


async def test_tool_choice_narrows_what_is_offered(
    server: OllamaWireServer, model: OllamaChatModel
) -> None:
    for choice, offered in [
        ("auto", ["get_weather", "now"]),
        ("required", ["get_weather", "now"]),
        ("now", ["now"]),
        ("none", None),
    ]:
        server.push(OllamaReply(content="ok"))
        await collect_response(await model(HELLO, tools=[WEATHER, CLOCK], tool_choice=choice))
        tools = server.requests[-1].body.get("tools")
        assert (tools and [t["function"]["name"] for t in tools]) == offered


async def test_images_travel_as_base64(server: OllamaWireServer, model: OllamaChatModel) -> None:
    image = DataBlock(source=Base64Source(data="aGk=", media_type="image/png"))
    server.push(OllamaReply(content="ok"))
    await collect_response(await model([UserMsg("user", [TextBlock(text="What?"), image])]))
    assert server.requests[0].body["messages"] == [
        {"role": "user", "content": "What?", "images": ["aGk="]}
    ]


async def test_usage_and_parameters(server: OllamaWireServer) -> None:
    parameters = {
        "max_tokens": 64,
        "temperature": 0.2,
        "top_k": 20,
        "seed": 1,
        "stop": ["\n\n"],
        "num_ctx": 8192,
        "keep_alive": "10m",
        "thinking_enable": True,
        "thinking_level": "high",
    }
    async with make(server, parameters=parameters) as model:
        server.push(OllamaReply(content="hi", prompt_eval_count=321, eval_count=45))
        final = await collect_response(await model(HELLO))
    body = server.requests[0].body
    assert body["options"] == {
        "num_predict": 64,
        "temperature": 0.2,
        "top_k": 20,
        "seed": 1,
        "stop": ["\n\n"],
        "num_ctx": 8192,
    }
    assert (body["keep_alive"], body["think"]) == ("10m", "high")
    assert final.usage is not None
    assert (final.usage.input_tokens, final.usage.output_tokens) == (321, 45)
    assert final.usage.metadata is not None
    assert final.usage.metadata["done_reason"] == "stop"


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (400, ModelBadRequestError),
        (404, ModelBadRequestError),
        (429, ModelRateLimitError),
        (500, ModelServerError),
    ],
)
async def test_error_statuses_are_typed(
    server: OllamaWireServer, model: OllamaChatModel, status: int, error: type[Exception]
) -> None:
    server.push(OllamaReply(status=status, error=f"scripted {status}"))
    with pytest.raises(error, match=f"scripted {status}"):
        await model(HELLO)


async def test_a_server_asking_for_a_key(server: OllamaWireServer) -> None:
    server.api_key = "ol-key"
    async with make(server) as model:
        with pytest.raises(ModelAuthError, match="unauthorized"):
            await model(HELLO)
    credential = OllamaCredential(host=server.base_url, api_key="ol-key")
    async with OllamaChatModel(credential, "qwen3:8b", max_retries=0) as model:
        final = await collect_response(await model(HELLO))
    assert isinstance(final.content[0], TextBlock)
    assert server.requests[-1].headers["authorization"] == "Bearer ol-key"


@pytest.mark.parametrize("cut_after", [30, 300, 600])
async def test_connection_cut_mid_stream(
    server: OllamaWireServer, model: OllamaChatModel, cut_after: int
) -> None:
    server.push(OllamaReply(content="x" * 100, piece=10, cut_after=cut_after))
    with pytest.raises(ModelStreamInterruptedError):
        await chunks(model, HELLO)


async def test_error_line_mid_stream(server: OllamaWireServer, model: OllamaChatModel) -> None:
    server.push(OllamaReply(content="abcdefgh", stream_error=True, error="out of memory"))
    result = await model(HELLO)
    assert not isinstance(result, ChatResponse)
    with pytest.raises(ModelResponseError, match="out of memory"):
        async for _ in result:
            pass


async def test_no_server_is_a_connection_error() -> None:
    with OllamaWireServer() as gone:
        host = gone.base_url
    async with OllamaChatModel(OllamaCredential(host=host), "qwen3:8b", max_retries=0) as model:
        with pytest.raises(ModelConnectionError) as info:
            await model(HELLO)
    assert f"(ollama_chat POST {host}/api/chat): ConnectError" in str(info.value)


class Weather(BaseModel):
    city: str
    temperature: float


async def test_structured_output_uses_the_json_schema_format(
    server: OllamaWireServer, model: OllamaChatModel
) -> None:
    server.push(
        OllamaReply(content='{"city": "Oslo"}'),
        OllamaReply(content='{"city": "Oslo", "temperature": 4}'),
    )
    response = await model.generate_structured_output(HELLO, Weather)
    assert response.content == {"city": "Oslo", "temperature": 4.0}
    assert response.repairs == 1
    assert response.usage.input_tokens == 20
    first, repair = (r.body for r in server.requests)
    assert first["format"] == Weather.model_json_schema()
    assert "tools" not in first
    assert repair["messages"][-2] == {"role": "assistant", "content": '{"city": "Oslo"}'}
    assert "temperature" in repair["messages"][-1]["content"]


async def test_structured_output_gives_up_after_repairs(
    server: OllamaWireServer, model: OllamaChatModel
) -> None:
    server.push(OllamaReply(content="not json"), OllamaReply(content="[]"))
    with pytest.raises(StructuredOutputError, match="JSON object") as raised:
        await model.generate_structured_output(HELLO, Weather)
    assert raised.value.attempts == 2


async def test_multi_agent_formatter_folds_speakers(server: OllamaWireServer) -> None:
    msgs = [UserMsg("alice", "I say yes."), AssistantMsg("bob", "I say no.")]
    async with make(server, formatter=OllamaMultiAgentFormatter()) as model:
        server.push(OllamaReply(content="ok"))
        await collect_response(await model(msgs))
    assert server.requests[0].body["messages"] == [
        {"role": "user", "content": "<history>\nalice: I say yes.\nbob: I say no.\n</history>"}
    ]


def test_credential_is_optional_and_registered() -> None:
    assert CREDENTIAL_TYPES["ollama_credential"] is OllamaCredential
    model = OllamaChatModel(model="llama3.2:3b")
    assert model.transport.base_url == "http://localhost:11434"
    assert OllamaCredential(host="gpu-box:8080").base_url == "http://gpu-box:8080"
    assert OllamaCredential(host="https://ollama.com").base_url == "https://ollama.com:443"
    schema = OllamaCredential.model_json_schema()
    assert schema.get("required", []) == []
    assert schema["properties"]["api_key"]["writeOnly"] is True
    with pytest.raises(ValueError, match="model"):
        OllamaChatModel()
    cards = {card.name: card for card in OllamaCredential.list_models()}
    assert cards["qwen3:8b"].model_class == "ollama_chat"
    assert "application/x-thinking" in cards["qwen3:8b"].output_types


async def test_agent_round_trip(server: OllamaWireServer) -> None:
    server.push(
        OllamaReply(thinking="Look it up.", tool_calls=[("get_weather", {"city": "Oslo"})]),
        OllamaReply(content="It is sunny in Oslo."),
    )
    agent = weather_agent(make(server))
    result = await agent.reply(UserMsg("user", "Weather in Oslo?"))
    await agent.model.aclose()
    assert result.get_text_content() == "It is sunny in Oslo."
    messages = server.requests[1].body["messages"]
    call_message = next(m for m in messages if m.get("tool_calls"))
    assert call_message["tool_calls"][0]["function"]["arguments"] == {"city": "Oslo"}
    tool_message = next(m for m in messages if m["role"] == "tool")
    assert tool_message["tool_name"] == "get_weather"
    assert "Sunny in Oslo" in tool_message["content"]
