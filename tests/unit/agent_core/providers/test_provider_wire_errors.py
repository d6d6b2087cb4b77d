"""Every HTTP provider against the same hostile server: its own error bodies for 400, 401, 429,
500 and 529 (typed, `Retry-After` honoured), a connection cut mid-stream, events split at any
byte, and the quirks of OpenAI-compatible servers (empty `choices`, usage in the last chunk,
`reasoning_content`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_core.credential import (
    AnthropicCredential,
    DashScopeCredential,
    DeepSeekCredential,
    MoonshotCredential,
    OpenAICredential,
    XAICredential,
)
from agent_core.errors import (
    ModelAuthError,
    ModelBadRequestError,
    ModelConnectionError,
    ModelHTTPError,
    ModelRateLimitError,
    ModelServerError,
)
from agent_core.message import TextBlock, ThinkingBlock, ToolCallBlock, UserMsg
from agent_core.model import (
    AnthropicChatModel,
    ChatModelBase,
    DashScopeChatModel,
    DeepSeekChatModel,
    MoonshotChatModel,
    OpenAIChatModel,
    OpenAIResponseModel,
    ToolSchema,
    XAIChatModel,
    collect_response,
)
from tests.support.openai_server import ScriptedReply, error_body, stream_frames
from tests.support.wire_server import (
    Answer,
    WireServer,
    anthropic_error,
    anthropic_events,
    responses_events,
    sse,
)

pytestmark = pytest.mark.integration

HELLO = [UserMsg("user", "Héllo?")]
CHAT = ["openai_chat", "deepseek", "moonshot", "dashscope", "xai"]
ALL = ["anthropic", "openai_response", *CHAT]
STATUSES = [
    (400, ModelBadRequestError),
    (401, ModelAuthError),
    (429, ModelRateLimitError),
    (500, ModelServerError),
    (529, ModelServerError),
]
TEXT = "Ensoleillé — 21°C ☀️, demain pluie 🌧"


def make(kind: str, root: str, **kwargs: Any) -> ChatModelBase:
    kwargs.setdefault("max_retries", 0)
    v1 = f"{root}/v1"
    if kind == "anthropic":
        return AnthropicChatModel(AnthropicCredential(api_key="k", base_url=v1), "c", **kwargs)
    if kind == "openai_response":
        return OpenAIResponseModel(OpenAICredential(api_key="k", base_url=v1), "o", **kwargs)
    if kind == "xai":
        return XAIChatModel(XAICredential(api_key="k", api_host=root), "g", **kwargs)
    classes: dict[str, tuple[Any, Any]] = {
        "openai_chat": (OpenAIChatModel, OpenAICredential),
        "deepseek": (DeepSeekChatModel, DeepSeekCredential),
        "moonshot": (MoonshotChatModel, MoonshotCredential),
        "dashscope": (DashScopeChatModel, DashScopeCredential),
    }
    model_class, credential_class = classes[kind]
    model: ChatModelBase = model_class(credential_class(api_key="k", base_url=v1), "m", **kwargs)
    return model


def error_of(kind: str, status: int) -> bytes:
    if kind == "anthropic":
        return anthropic_error(status)
    return json.dumps(error_body(status)).encode()


def chat_sse(frames: list[dict[str, Any]]) -> bytes:
    return "".join(f"data: {json.dumps(f, ensure_ascii=False)}\n\n" for f in frames).encode() + (
        b"data: [DONE]\n\n"
    )


def answer_body(kind: str, text: str) -> bytes:
    """A streamed answer of `text` in `kind`'s protocol."""
    if kind == "anthropic":
        return sse(anthropic_events(text=text))
    if kind == "openai_response":
        return sse(responses_events(text=text))
    return chat_sse(stream_frames(ScriptedReply(text=text), "m", include_usage=True))


@pytest.mark.parametrize("kind", ALL)
@pytest.mark.parametrize(("status", "error"), STATUSES)
async def test_error_bodies_are_typed_with_retry_after(
    kind: str, status: int, error: type[ModelHTTPError]
) -> None:
    with WireServer() as server:
        server.push(Answer(error_of(kind, status), status=status, headers={"retry-after": "7"}))
        async with make(kind, server.base_url) as model:
            with pytest.raises(error) as info:
                await collect_response(await model(HELLO))
        assert_names_the_call(info.value, model, server)
    assert info.value.status == status
    assert "Scripted" in str(info.value.body)
    assert info.value.retry_after == 7.0


def assert_names_the_call(
    error: ModelHTTPError | ModelConnectionError, model: ChatModelBase, server: WireServer
) -> None:
    """The error names the provider and the URL called (no query string)."""
    (request,) = server.requests
    assert error.provider == model.type
    assert error.url == server.base_url + request.path
    assert f"({model.type} POST {error.url})" in str(error)


@pytest.mark.parametrize("kind", ALL)
async def test_a_rate_limit_is_retried_when_the_server_says(kind: str) -> None:
    with WireServer() as server:
        server.push(
            Answer(error_of(kind, 429), status=429, headers={"retry-after": "0"}),
            Answer(answer_body(kind, "after the wait")),
        )
        async with make(kind, server.base_url, max_retries=1, retry_delay=60) as model:
            final = await collect_response(await model(HELLO))
        assert len(server.requests) == 2
    # A 60 s backoff would have timed the test out: the server's 0 s won.
    assert [b.text for b in final.content if isinstance(b, TextBlock)] == ["after the wait"]


@pytest.mark.parametrize("kind", ALL)
@pytest.mark.parametrize("cut", [0.3, 0.9])
async def test_a_connection_cut_mid_stream_is_a_connection_error(kind: str, cut: float) -> None:
    with WireServer() as server:
        server.push(Answer(answer_body(kind, TEXT * 3), piece=13, cut=cut))
        async with make(kind, server.base_url) as model:
            with pytest.raises(ModelConnectionError) as info:
                await collect_response(await model(HELLO))
        assert_names_the_call(info.value, model, server)


@pytest.mark.parametrize("kind", ALL)
@pytest.mark.parametrize("piece", [1, 2, 5])
async def test_events_split_at_any_byte_decode_the_same(kind: str, piece: int) -> None:
    with WireServer() as server:
        server.push(Answer(answer_body(kind, TEXT), piece=piece))
        async with make(kind, server.base_url) as model:
            result = await model(HELLO)
            assert not isinstance(result, type(None))
            chunks = [c async for c in result]  # type: ignore[union-attr]
    *deltas, final = chunks
    assert final.is_last
    assert "".join(b.text for d in deltas for b in d.content if isinstance(b, TextBlock)) == TEXT
    assert [b.text for b in final.content if isinstance(b, TextBlock)] == [TEXT]
    assert final.usage is not None
    assert final.usage.input_tokens > 0


WEATHER = ToolSchema(
    name="get_weather",
    description="Weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


@pytest.mark.parametrize("kind", CHAT)
async def test_compatible_server_quirks(kind: str) -> None:
    """Empty `choices` (a leading filter chunk, the usage chunk), `reasoning_content`, arguments
    in pieces split mid-escape, and the usage only in the last chunk."""
    reply = ScriptedReply(
        text="Zürich: sonnig.",
        reasoning="Ask the tool… then answer.",
        tool_calls=[("call_1", "get_weather", {"city": 'Zü"rich'})],
        prompt_tokens=40,
        completion_tokens=12,
    )
    frames = stream_frames(reply, "m", include_usage=True)
    filter_chunk = {"id": "", "object": "", "created": 0, "model": "", "choices": []}
    filter_chunk["prompt_filter_results"] = [{"prompt_index": 0}]
    with WireServer() as server:
        server.push(Answer(chat_sse([filter_chunk, *frames]), piece=3))
        async with make(kind, server.base_url) as model:
            final = await collect_response(await model(HELLO, tools=[WEATHER]))
    thinking = [b.thinking for b in final.content if isinstance(b, ThinkingBlock)]
    text = [b.text for b in final.content if isinstance(b, TextBlock)]
    calls = [
        (b.id, b.name, json.loads(b.input)) for b in final.content if isinstance(b, ToolCallBlock)
    ]
    assert thinking == ["Ask the tool… then answer."]
    assert text == ["Zürich: sonnig."]
    assert calls == [("call_1", "get_weather", {"city": 'Zü"rich'})]
    assert final.usage is not None
    assert (final.usage.input_tokens, final.usage.output_tokens) == (40, 12)
