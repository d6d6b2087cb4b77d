"""`GeminiChatModel` against a real local server speaking the Gemini API (`generateContent`,
`streamGenerateContent?alt=sse`): event sequences, awkward chunk boundaries, function calls and
their thought signatures, thought parts, usage, error bodies and a connection cut mid-stream."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from agent_core.credential import CREDENTIAL_TYPES, GeminiCredential
from agent_core.errors import (
    ModelAuthError,
    ModelBadRequestError,
    ModelRateLimitError,
    ModelResponseError,
    ModelServerError,
    ModelStreamInterruptedError,
)
from agent_core.formatter import GeminiChatFormatter, GeminiMultiAgentFormatter
from agent_core.message import (
    AssistantMsg,
    Base64Source,
    DataBlock,
    HintBlock,
    SystemMsg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    URLSource,
    UserMsg,
)
from agent_core.model import ChatResponse, GeminiChatModel, collect_response
from agent_core.model._gemini_wire import gemini_schema
from tests.support.gemini_server import Call, GeminiReply, GeminiWireServer, Text, Thought
from tests.support.model_checks import HELLO, WEATHER, chunks, weather_agent

KEY = "gm-test-key"


@pytest.fixture
def server() -> Iterator[GeminiWireServer]:
    with GeminiWireServer(api_key=KEY) as srv:
        yield srv


def make(server: GeminiWireServer, stream: bool = True, **kwargs: Any) -> GeminiChatModel:
    credential = GeminiCredential(api_key=KEY, base_url=server.base_url)
    return GeminiChatModel(
        credential, "gemini-2.5-flash", stream=stream, max_retries=0, timeout=10, **kwargs
    )


@pytest.fixture
async def model(server: GeminiWireServer) -> AsyncIterator[GeminiChatModel]:
    async with make(server) as m:
        yield m


async def test_stream_is_deltas_then_one_accumulated_final(
    server: GeminiWireServer, model: GeminiChatModel
) -> None:
    server.push(GeminiReply([Text("Hello there")], piece=4))
    out = await chunks(model, HELLO)
    assert [c.is_last for c in out] == [False, False, False, True]
    assert ["".join(b.text for b in c.content if isinstance(b, TextBlock)) for c in out] == [
        "Hell",
        "o th",
        "ere",
        "Hello there",
    ]
    # One block id across the deltas; the final block keeps it.
    assert len({c.content[0].id for c in out}) == 1
    (request,) = server.requests
    assert request.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    assert request.query == {"alt": "sse"}
    assert request.headers["x-goog-api-key"] == KEY
    assert "authorization" not in request.headers
    assert request.body["systemInstruction"] == {"parts": [{"text": "You are terse."}]}
    assert request.body["contents"] == [{"role": "user", "parts": [{"text": "Hello?"}]}]


async def test_whole_answer_without_streaming(server: GeminiWireServer) -> None:
    server.push(
        GeminiReply([Thought("Plan."), Text("Done."), Call("get_weather", {"city": "Oslo"})])
    )
    async with make(server, stream=False) as model:
        result = await model(HELLO, tools=[WEATHER])
    assert isinstance(result, ChatResponse)
    assert result.is_last
    thinking, text, call = result.content
    assert isinstance(thinking, ThinkingBlock)
    assert thinking.thinking == "Plan."
    assert isinstance(text, TextBlock)
    assert text.text == "Done."
    assert isinstance(call, ToolCallBlock)
    assert call.name == "get_weather"
    assert json.loads(call.input) == {"city": "Oslo"}
    assert server.requests[0].path.endswith(":generateContent")


@pytest.mark.parametrize("split", [1, 2, 3, 7, 64])
async def test_chunk_boundaries_anywhere(server: GeminiWireServer, split: int) -> None:
    """Bytes split mid-UTF-8 character, mid-CRLF and mid-JSON decode to the same answer."""
    text = "Ensoleillé — 21°C ☀️, demain: «pluie»"
    server.push(
        GeminiReply(
            [Thought("Café ☕ first"), Text(text), Call("get_weather", {"city": "Zürich"})],
            split=split,
            piece=3,
        )
    )
    async with make(server) as model:
        final = await collect_response(await model(HELLO, tools=[WEATHER]))
    thinking, answer, call = final.content
    assert isinstance(thinking, ThinkingBlock)
    assert thinking.thinking == "Café ☕ first"
    assert isinstance(answer, TextBlock)
    assert answer.text == text
    assert isinstance(call, ToolCallBlock)
    assert json.loads(call.input) == {"city": "Zürich"}


async def test_thoughts_and_text_interleave_into_separate_blocks(
    server: GeminiWireServer, model: GeminiChatModel
) -> None:
    server.push(GeminiReply([Thought("a"), Text("b"), Thought("c"), Text("d")]))
    final = (await chunks(model, HELLO))[-1]
    kinds = [
        (b.type, b.thinking if isinstance(b, ThinkingBlock) else b.text) for b in final.content
    ]  # type: ignore[union-attr]
    assert kinds == [("thinking", "a"), ("text", "b"), ("thinking", "c"), ("text", "d")]
    assert len({b.id for b in final.content}) == 4


async def test_function_calls_keep_ids_and_signatures(
    server: GeminiWireServer, model: GeminiChatModel
) -> None:
    args = {"city": "Paris", "days": [1, 2], "opts": {"unit": "C", "note": 'say "hi"'}}
    server.push(
        GeminiReply(
            [
                Call("get_weather", args, signature="c2lnLTE="),
                Call("get_weather", {"city": "Rome"}, id="fc-7"),
                Call("get_weather", {}),
            ]
        )
    )
    final = (await chunks(model, HELLO, tools=[WEATHER]))[-1]
    first, second, third = final.content
    assert isinstance(first, ToolCallBlock)
    assert first.id == "gemini_ts:c2lnLTE="
    assert json.loads(first.input) == args
    assert second.id == "fc-7"
    assert third.id.startswith("call_")
    assert isinstance(third, ToolCallBlock)
    assert third.input == "{}"

    # The next turn sends the signature back with the call, and the results as responses.
    history = [
        *HELLO,
        AssistantMsg(
            "assistant",
            [
                first,
                second,
                ToolResultBlock(id=first.id, name="get_weather", output="Sunny"),
                ToolResultBlock(id=second.id, name="get_weather", output="Rain"),
            ],
        ),
    ]
    server.push(GeminiReply([Text("ok")]))
    await collect_response(await model(history, tools=[WEATHER]))
    model_turn, responses = server.requests[1].body["contents"][1:]
    assert model_turn["role"] == "model"
    assert model_turn["parts"][0] == {
        "functionCall": {"id": "gemini_ts:c2lnLTE=", "name": "get_weather", "args": args},
        "thoughtSignature": "c2lnLTE=",
    }
    assert "thoughtSignature" not in model_turn["parts"][1]
    assert responses == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": "gemini_ts:c2lnLTE=",
                    "name": "get_weather",
                    "response": {"output": "Sunny"},
                }
            },
            {
                "functionResponse": {
                    "id": "fc-7",
                    "name": "get_weather",
                    "response": {"output": "Rain"},
                }
            },
        ],
    }


async def test_usage_counts_thoughts_and_tool_prompts(
    server: GeminiWireServer, model: GeminiChatModel
) -> None:
    server.push(
        GeminiReply(
            [Text("hi")],
            prompt_tokens=100,
            output_tokens=20,
            thoughts_tokens=7,
            cached_tokens=64,
            tool_use_prompt_tokens=5,
        )
    )
    out = await chunks(model, HELLO)
    assert all(c.usage is None for c in out[:-2])
    usage = out[-1].usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.cache_input_tokens) == (105, 27, 64)
    assert usage.metadata is not None
    assert usage.metadata["thoughtsTokenCount"] == 7
    assert usage.time > 0


async def test_tools_and_tool_choice(server: GeminiWireServer, model: GeminiChatModel) -> None:
    clock = {"type": "function", "function": {"name": "now", "parameters": {"type": "object"}}}
    for choice, expected in [
        ("auto", {"mode": "AUTO"}),
        ("none", {"mode": "NONE"}),
        ("required", {"mode": "ANY"}),
        ("now", {"mode": "ANY", "allowedFunctionNames": ["now"]}),
    ]:
        server.push(GeminiReply([Text("ok")]))
        await collect_response(await model(HELLO, tools=[WEATHER, clock], tool_choice=choice))
        body = server.requests[-1].body
        assert body["toolConfig"] == {"functionCallingConfig": expected}
    declarations = body["tools"][0]["functionDeclarations"]
    assert declarations[0] == {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}},
    }
    server.push(GeminiReply([Text("ok")]))
    await collect_response(await model(HELLO))
    assert "tools" not in server.requests[-1].body
    assert "toolConfig" not in server.requests[-1].body


def test_tool_schemas_are_rewritten_for_gemini() -> None:
    class Place(BaseModel):
        city: str
        country: str | None = None

    class Trip(BaseModel):
        to: Place
        stops: list[Place] = []
        seats: int | None = None

    schema = gemini_schema(Trip.model_json_schema())
    place = {
        "type": "OBJECT",
        "title": "Place",
        "properties": {
            "city": {"type": "STRING", "title": "City"},
            "country": {"type": "STRING", "title": "Country"},
        },
        "required": ["city"],
    }
    assert schema["properties"]["to"] == place
    assert schema["properties"]["stops"]["items"] == place
    assert schema["properties"]["seats"] == {"type": "INTEGER", "title": "Seats"}
    assert gemini_schema({"type": "object", "properties": {"k": {"const": "x"}}}) == {
        "type": "OBJECT",
        "properties": {"k": {"enum": ["x"]}},
    }
    with pytest.raises(ValueError, match="does not point"):
        gemini_schema({"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}})


async def test_parameters_become_generation_config(server: GeminiWireServer) -> None:
    parameters = {
        "max_tokens": 256,
        "temperature": 0.5,
        "top_p": 0.9,
        "top_k": 40,
        "stop": ["END"],
        "seed": 7,
        "thinking_enable": True,
        "thinking_budget": 2048,
    }
    async with make(server, parameters=parameters) as model:
        server.push(GeminiReply([Text("ok")]))
        await collect_response(await model(HELLO))
    assert server.requests[0].body["generationConfig"] == {
        "maxOutputTokens": 256,
        "temperature": 0.5,
        "topP": 0.9,
        "topK": 40,
        "stopSequences": ["END"],
        "seed": 7,
        "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 2048},
    }
    async with make(server, parameters={"thinking_level": "low"}) as model:
        server.push(GeminiReply([Text("ok")]))
        await collect_response(await model(HELLO))
    assert server.requests[1].body["generationConfig"]["thinkingConfig"] == {
        "includeThoughts": False,
        "thinkingLevel": "low",
    }
    with pytest.raises(ValidationError):
        make(server, parameters={"temperature": 3})
    with pytest.raises(ValidationError):
        make(server, parameters={"max_output_tokens": 3})


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (400, ModelBadRequestError),
        (401, ModelAuthError),
        (403, ModelAuthError),
        (429, ModelRateLimitError),
        (500, ModelServerError),
    ],
)
async def test_error_statuses_are_typed(
    server: GeminiWireServer, model: GeminiChatModel, status: int, error: type[Exception]
) -> None:
    server.push(GeminiReply(status=status))
    with pytest.raises(error) as raised:
        await model(HELLO)
    assert json.loads(raised.value.body)["error"]["code"] == status  # type: ignore[attr-defined]


async def test_a_wrong_key_is_googles_400(server: GeminiWireServer) -> None:
    credential = GeminiCredential(api_key="wrong", base_url=server.base_url)
    async with GeminiChatModel(credential, "gemini-2.5-flash", max_retries=0) as model:
        with pytest.raises(ModelBadRequestError, match="API_KEY_INVALID"):
            await model(HELLO)


async def test_429_retry_delay_is_honoured(server: GeminiWireServer) -> None:
    server.push(GeminiReply(status=429, retry_delay="0.05s"), GeminiReply([Text("later")]))
    async with make(server, retry_delay=30.0) as model:
        model.max_retries = 1
        final = await collect_response(await model(HELLO))
    # The body's retryDelay (not the 30 s default) set the wait, so the retry happened.
    assert isinstance(final.content[0], TextBlock)
    assert final.content[0].text == "later"
    assert len(server.requests) == 2


async def test_500_is_retried_then_raised(server: GeminiWireServer) -> None:
    server.push(*(GeminiReply(status=500) for _ in range(2)))
    async with make(server, retry_delay=0.0) as model:
        model.max_retries = 1
        with pytest.raises(ModelServerError):
            await model(HELLO)
    assert len(server.requests) == 2


@pytest.mark.parametrize("cut_after", [40, 400, 700])
async def test_connection_cut_mid_stream(
    server: GeminiWireServer, model: GeminiChatModel, cut_after: int
) -> None:
    server.push(GeminiReply([Text("x" * 200)], piece=10, cut_after=cut_after))
    with pytest.raises(ModelStreamInterruptedError):
        await chunks(model, HELLO)


async def test_error_event_mid_stream(server: GeminiWireServer, model: GeminiChatModel) -> None:
    error = {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}
    server.push(GeminiReply([Text("abcdefgh")], stream_error=error))
    result = await model(HELLO)
    assert not isinstance(result, ChatResponse)
    with pytest.raises(ModelResponseError, match="overloaded"):
        async for _ in result:
            pass


async def test_structured_output_through_a_forced_call(
    server: GeminiWireServer, model: GeminiChatModel
) -> None:
    class Weather(BaseModel):
        city: str
        temperature: float

    server.push(
        GeminiReply([Call("generate_structured_output", {"city": "Oslo"})]),
        GeminiReply([Call("generate_structured_output", {"city": "Oslo", "temperature": 4})]),
    )
    response = await model.generate_structured_output(HELLO, Weather)
    assert response.content == {"city": "Oslo", "temperature": 4.0}
    assert response.repairs == 1
    first, repair = (r.body for r in server.requests)
    assert first["toolConfig"] == {
        "functionCallingConfig": {
            "mode": "ANY",
            "allowedFunctionNames": ["generate_structured_output"],
        }
    }
    # The repair round answers the failed call with what was wrong.
    (response_part,) = repair["contents"][-1]["parts"]
    assert "temperature" in response_part["functionResponse"]["response"]["output"]


async def test_multi_agent_formatter_folds_speakers(server: GeminiWireServer) -> None:
    msgs = [
        SystemMsg("system", "Moderate."),
        UserMsg("alice", "I say yes."),
        AssistantMsg("bob", "I say no."),
    ]
    async with make(server, formatter=GeminiMultiAgentFormatter()) as model:
        server.push(GeminiReply([Text("ok")]))
        await collect_response(await model(msgs))
    body = server.requests[0].body
    assert body["systemInstruction"] == {"parts": [{"text": "Moderate."}]}
    assert body["contents"] == [
        {
            "role": "user",
            "parts": [{"text": "<history>\nalice: I say yes.\nbob: I say no.\n</history>"}],
        }
    ]


def test_credential_is_registered_with_its_cards() -> None:
    assert CREDENTIAL_TYPES["gemini_credential"] is GeminiCredential
    schema = GeminiCredential.model_json_schema()
    assert schema["properties"]["api_key"]["writeOnly"] is True
    assert "gm-secret" not in repr(GeminiCredential(api_key="gm-secret"))
    assert GeminiCredential.get_chat_model_class() is GeminiChatModel
    cards = {card.name: card for card in GeminiCredential.list_models()}
    assert "gemini-2.5-flash" in cards
    card = cards["gemini-2.5-flash"]
    assert card.model_class == "gemini_chat"
    assert card.parameter_schema["properties"]["max_tokens"]["maximum"] == 65536


async def test_agent_round_trip_keeps_the_signature(server: GeminiWireServer) -> None:
    server.push(
        GeminiReply(
            [Thought("Look it up."), Call("get_weather", {"city": "Oslo"}, signature="U0lH")]
        ),
        GeminiReply([Text("It is sunny in Oslo.")]),
    )
    agent = weather_agent(make(server))
    result = await agent.reply(UserMsg("user", "Weather in Oslo?"))
    await agent.model.aclose()
    assert result.get_text_content() == "It is sunny in Oslo."
    second = server.requests[1].body
    parts = [part for content in second["contents"] for part in content["parts"]]
    call = next(p for p in parts if "functionCall" in p)
    assert call["thoughtSignature"] == "U0lH"
    response = next(p for p in parts if "functionResponse" in p)["functionResponse"]
    assert response["id"] == call["functionCall"]["id"]
    assert "Sunny in Oslo" in response["response"]["output"]


async def test_formatter_media_hints_and_broken_call_input() -> None:
    msgs = [
        UserMsg(
            "user",
            [
                TextBlock(text="Compare"),
                DataBlock(source=Base64Source(data="aGk=", media_type="image/png")),
                DataBlock(source=URLSource(url="https://x.test/a.jpg", media_type="image/jpeg")),
                DataBlock(source=URLSource(url="file:///etc/passwd", media_type="image/png")),
            ],
        ),
        AssistantMsg(
            "assistant",
            [
                ToolCallBlock(id="c1", name="get_weather", input='{"city": "Os'),
                ToolResultBlock(id="c1", name="get_weather", output="cut off"),
                HintBlock(hint="Reminder: be brief."),
            ],
        ),
    ]
    user, model_turn, responses, hint = await GeminiChatFormatter().format(msgs)
    assert user["parts"] == [
        {"text": "Compare"},
        {"inlineData": {"mimeType": "image/png", "data": "aGk="}},
        {"fileData": {"mimeType": "image/jpeg", "fileUri": "https://x.test/a.jpg"}},
        {"text": "[image omitted: file:///etc/passwd]"},
    ]
    # A call cut off mid-stream still gives Gemini an object.
    assert model_turn["parts"] == [
        {"functionCall": {"id": "c1", "name": "get_weather", "args": {}}}
    ]
    assert responses["parts"][0]["functionResponse"]["response"] == {"output": "cut off"}
    assert hint == {"role": "user", "parts": [{"text": "Reminder: be brief."}]}
