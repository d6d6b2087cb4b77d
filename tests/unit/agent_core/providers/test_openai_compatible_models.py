"""The OpenAI Responses model and the Chat Completions providers (DeepSeek, Moonshot, xAI,
DashScope) against real local servers speaking their protocols."""

import json
from collections.abc import Iterator
from typing import Any

import pytest

from agent_core.credential import (
    DashScopeCredential,
    DeepSeekCredential,
    MoonshotCredential,
    OpenAICredential,
    XAICredential,
    parse_credential,
)
from agent_core.errors import ModelRateLimitError, ModelStreamInterruptedError
from agent_core.message import (
    AssistantMsg,
    Base64Source,
    DataBlock,
    SystemMsg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    UserMsg,
)
from agent_core.model import (
    DashScopeChatModel,
    DeepSeekChatModel,
    MoonshotChatModel,
    OpenAIResponseModel,
    XAIChatModel,
    collect_response,
)
from tests.support.model_checks import WEATHER
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.support.wire_server import Answer, WireServer, responses_events, sse

pytestmark = pytest.mark.integration

HELLO = [SystemMsg("system", "Be terse."), UserMsg("user", "Hello?")]


@pytest.fixture
def wire() -> Iterator[WireServer]:
    with WireServer() as srv:
        yield srv


@pytest.fixture
def chat() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer() as srv:
        yield srv


def responses(wire: WireServer, **kwargs: Any) -> OpenAIResponseModel:
    cred = OpenAICredential(api_key="sk", base_url=wire.base_url)
    return OpenAIResponseModel(cred, "gpt-test", max_retries=0, **kwargs)


def shape(blocks: list[Any]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for b in blocks:
        if isinstance(b, TextBlock):
            out.append(("text", b.text))
        elif isinstance(b, ThinkingBlock):
            out.append(("thinking", b.thinking, b.signature))
        elif isinstance(b, ToolCallBlock):
            out.append(("tool_call", b.id, b.name, json.loads(b.input)))
    return out


@pytest.mark.parametrize("piece", [3, 1 << 16])
async def test_responses_stream_reasoning_text_and_calls(wire: WireServer, piece: int) -> None:
    events = responses_events(
        summary="Thinking it over.",
        encrypted="ENC",
        text="Let me check.",
        tool_calls=[("call_1", "get_weather", {"city": "Paris"})],
    )
    wire.push(Answer(sse(events), piece=piece))
    params = {"thinking_enable": True, "reasoning_effort": "low", "max_output_tokens": 500}
    async with responses(wire, parameters=params) as m:
        final = await collect_response(await m(HELLO, tools=[WEATHER], tool_choice="auto"))
    assert shape(final.content) == [
        ("thinking", "Thinking it over.", "ENC"),
        ("text", "Let me check."),
        ("tool_call", "call_1", "get_weather", {"city": "Paris"}),
    ]
    assert final.id == "resp_1"
    assert final.usage is not None
    assert (final.usage.input_tokens, final.usage.cache_input_tokens) == (20, 4)
    assert final.usage.metadata == {"reasoning_tokens": 3}
    request = wire.requests[0]
    assert request.path == "/responses"
    body = request.body
    assert body["store"] is False
    assert "previous_response_id" not in body
    assert body["reasoning"] == {"summary": "auto", "effort": "low"}
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["max_output_tokens"] == 500
    assert body["tools"] == [{"type": "function", **WEATHER.to_dict()["function"]}]
    assert body["input"] == [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": "Hello?"},
    ]


async def test_responses_history_items_and_whole_answer(wire: WireServer) -> None:
    whole = {
        "id": "resp_2",
        "output": [
            {"type": "reasoning", "id": "rs", "summary": [{"type": "summary_text", "text": "r"}]},
            {
                "type": "message",
                "id": "m",
                "content": [{"type": "output_text", "text": "Sunny."}],
            },
        ],
        "usage": {"input_tokens": 5, "output_tokens": 2},
    }
    wire.push(Answer(json.dumps(whole).encode()))
    history = AssistantMsg(
        "bot",
        [
            ToolCallBlock(id="c1", name="get_weather", input='{"city":"Rome"}'),
            ToolResultBlock(id="c1", name="get_weather", output="sunny"),
        ],
    )
    async with responses(wire, stream=False) as m:
        result = await m([*HELLO, history])
    assert shape(result.content) == [("thinking", "r", None), ("text", "Sunny.")]
    assert wire.requests[0].body["input"][2:] == [
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "get_weather",
            "arguments": '{"city":"Rome"}',
        },
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
    ]


async def test_responses_cut_and_rate_limited(wire: WireServer) -> None:
    wire.push(
        Answer(sse(responses_events(text="never finished", complete=False))),
        Answer(b'{"error":{"message":"slow down"}}', status=429, headers={"retry-after-ms": "20"}),
    )
    async with responses(wire) as m:
        with pytest.raises(ModelStreamInterruptedError, match=r"response\.completed"):
            await collect_response(await m(HELLO))
        with pytest.raises(ModelRateLimitError) as info:
            await m(HELLO)
    assert info.value.retry_after == 0.02


async def test_deepseek_reasoning_and_cache_hits(chat: OpenAIWireServer) -> None:
    chat.push(ScriptedReply(text="42", reasoning="compute", prompt_tokens=30, cached_tokens=0))
    cred = DeepSeekCredential(api_key="k", base_url=chat.base_url)
    async with DeepSeekChatModel(cred, "deepseek-chat", parameters={"thinking_enable": True}) as m:
        final = await collect_response(await m(HELLO))
    assert shape(final.content) == [("thinking", "compute", None), ("text", "42")]
    assert chat.requests[0].body["thinking"] == {"type": "enabled"}
    assert "thinking_enable" not in chat.requests[0].body


def test_deepseek_prompt_cache_hit_tokens_count_as_cached() -> None:
    from agent_core.model._chat_completions import parse_usage

    usage = parse_usage(
        {"prompt_tokens": 30, "completion_tokens": 2, "prompt_cache_hit_tokens": 24}, 0.1
    )
    assert usage.cache_input_tokens == 24


async def test_xai_reasoning_effort_and_host(chat: OpenAIWireServer) -> None:
    chat.push(ScriptedReply(text="hi", reasoning="r"))
    host = chat.base_url.removesuffix("/v1")
    cred = XAICredential(api_key="xk", api_host=host)
    params = {"thinking_enable": True, "reasoning_effort": "high"}
    async with XAIChatModel(cred, "grok-3-mini", parameters=params) as m:
        await collect_response(await m(HELLO))
    request = chat.requests[0]
    assert request.body["reasoning_effort"] == "high"
    assert request.headers["authorization"] == "Bearer xk"


async def test_moonshot_and_dashscope_multimodal_and_thinking_budget(
    chat: OpenAIWireServer,
) -> None:
    chat.push(ScriptedReply(text="a cat"), ScriptedReply(text="a dog"))
    picture = DataBlock(source=Base64Source(data="aGk=", media_type="image/png"))
    ask = [UserMsg("user", [TextBlock(text="What is it?"), picture])]
    async with MoonshotChatModel(
        MoonshotCredential(api_key="k", base_url=chat.base_url), "kimi-k2-0905-preview"
    ) as m:
        await collect_response(await m(ask))
    params = {"thinking_enable": True, "thinking_budget": 100}
    cred = DashScopeCredential(api_key="k", base_url=chat.base_url)
    async with DashScopeChatModel(cred, "qwen-vl-max", parameters=params) as m:
        await collect_response(await m(ask))
    for request in chat.requests:
        assert request.body["messages"][0]["content"][1] == {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64,aGk="},
        }
    assert chat.requests[1].body["enable_thinking"] is True
    assert chat.requests[1].body["thinking_budget"] == 100


@pytest.mark.parametrize(
    ("data", "model_class"),
    [
        ({"type": "anthropic_credential", "api_key": "a"}, "AnthropicChatModel"),
        ({"type": "deepseek_credential", "api_key": "a"}, "DeepSeekChatModel"),
        ({"type": "moonshot_credential", "api_key": "a"}, "MoonshotChatModel"),
        ({"type": "xai_credential", "api_key": "a"}, "XAIChatModel"),
    ],
)
def test_credentials_name_their_models_and_cards(data: dict[str, Any], model_class: str) -> None:
    credential = parse_credential(data)
    cls = credential.get_chat_model_class()
    assert cls.__name__ == model_class
    cards = credential.list_models()
    assert cards
    assert {card.model_class for card in cards} == {cls.type}
    assert credential.secret_fields() == {"api_key"}


def test_openai_credential_serves_the_responses_model_too() -> None:
    credential = OpenAICredential(api_key="k")
    assert credential.get_chat_model_class("openai_response") is OpenAIResponseModel


def test_retry_waits_double_unless_the_provider_says() -> None:
    from agent_core.errors import ModelServerError
    from agent_core.model.base import MAX_RETRY_WAIT, retry_wait

    plain = ModelServerError(500, "m", "")
    assert [retry_wait(plain, n, 0.5) for n in (1, 2, 3)] == [0.5, 1.0, 2.0]
    assert retry_wait(ModelRateLimitError(429, "m", "", retry_after=7.0), 3, 0.5) == 7.0
    assert retry_wait(ModelRateLimitError(429, "m", "", retry_after=1e6), 1, 0.5) == MAX_RETRY_WAIT
