"""Anthropic, OpenAI Responses and the Chat Completions family against AgentScope 2.0.11's.

Each case of `tests/reference/data/providers.json` (written by
`tests/reference/generate_providers.py`) is served by the same scripted protocol server
AgentScope's model was run against; Troupe's final content, usage and request body must match
what AgentScope's gave, streaming and not.

Deliberate differences, normalised away before comparing:

- Anthropic: Troupe marks prompt-cache breakpoints (`cache_control`) by default; its
  `input_tokens` count every prompt token (Anthropic's leave the cached ones out, and so do
  AgentScope's); a tool result of one text is sent as a string (AgentScope: one text part);
  AgentScope's stream reports absent cache counts as None, Troupe's as 0.
- OpenAI Responses: Troupe's requests are stateless (`store: false`) and ask for the
  encrypted reasoning (`include`, kept as the thinking block's `signature`) and a reasoning
  summary; AgentScope keeps the raw reasoning item on the block instead; Troupe sends a
  message of one text as a string (AgentScope: one `input_text`/`output_text` part).
- OpenAI Chat: AgentScope sends its `max_tokens` parameter as `max_completion_tokens`; Troupe
  has both knobs (`max_tokens` is the field compatible servers read), so the cases set
  Troupe's `max_completion_tokens`.
- DeepSeek: AgentScope counts cached prompt tokens from `prompt_cache_hit_tokens` only; Troupe
  also reads the OpenAI-style `prompt_tokens_details.cached_tokens` the test server sends, so
  it may count more, never fewer.
- Chat Completions: Troupe sends a message of one text part as a plain string (which every
  OpenAI-compatible server reads; some reject part lists outside user messages).
"""

from __future__ import annotations

from typing import Any

import pytest

from agent_core.credential import (
    AnthropicCredential,
    DashScopeCredential,
    DeepSeekCredential,
    MoonshotCredential,
    OpenAICredential,
)
from agent_core.model import (
    AnthropicChatModel,
    ChatModelBase,
    DashScopeChatModel,
    DeepSeekChatModel,
    MoonshotChatModel,
    OpenAIChatModel,
    OpenAIResponseModel,
)
from tests.support.openai_server import OpenAIWireServer
from tests.support.reference_cases import API_KEY, case_id, load_cases, replay
from tests.support.wire_server import Answer, WireServer, scripted_answer

pytestmark = pytest.mark.integration

CASES = load_cases("providers")

_CLASSES: dict[str, tuple[type[ChatModelBase], Any]] = {
    "anthropic": (AnthropicChatModel, AnthropicCredential),
    "openai_response": (OpenAIResponseModel, OpenAICredential),
    "openai_chat": (OpenAIChatModel, OpenAICredential),
    "deepseek": (DeepSeekChatModel, DeepSeekCredential),
    "moonshot": (MoonshotChatModel, MoonshotCredential),
    "dashscope": (DashScopeChatModel, DashScopeCredential),
}


def _parameters(provider: str, case: dict[str, Any]) -> dict[str, Any]:
    parameters = dict(case.get("parameters", {}))
    if provider == "openai_chat" and "max_tokens" in parameters:
        parameters["max_completion_tokens"] = parameters.pop("max_tokens")
    return parameters


def _model(provider: str, root: str, case: dict[str, Any]) -> ChatModelBase:
    model_class, credential_class = _CLASSES[provider]
    credential = credential_class(api_key=API_KEY, base_url=f"{root}/v1")
    return model_class(
        credential,
        case["model"],
        parameters=_parameters(provider, case),
        stream=case["stream"],
        max_retries=0,
    )


async def _run(case: dict[str, Any]) -> dict[str, Any]:
    provider = case["provider"]
    answer = scripted_answer(provider, case.get("reply", {}), case["stream"])
    server: WireServer | OpenAIWireServer
    server = WireServer() if isinstance(answer, Answer) else OpenAIWireServer()
    with server:
        server.push(answer)
        model = _model(provider, server.base_url.removesuffix("/v1"), case)
        return await replay(model, server, case, usage_extras=("cache_creation_input_tokens",))


def _uncached(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _uncached(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_uncached(v) for v in value]
    return value


def _plain_text(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, list) and len(content) == 1 and content[0].get("type") == "text":
        return {**message, "content": content[0]["text"]}
    return message


def _one_part(content: Any, *kinds: str) -> bool:
    """Whether `content` is a list of exactly one part of one of `kinds`."""
    return isinstance(content, list) and len(content) == 1 and content[0].get("type") in kinds


def _text_results(message: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(message["content"], list):
        return message
    parts = []
    for part in message["content"]:
        inner = part.get("content")
        if part.get("type") == "tool_result" and _one_part(inner, "text"):
            part = {**part, "content": inner[0]["text"]}
        parts.append(part)
    return {**message, "content": parts}


def _anthropic_usage(usage: dict[str, Any] | None, theirs: bool) -> dict[str, Any] | None:
    if usage is None:
        return None
    usage = {k: v or 0 for k, v in usage.items()}
    if theirs:
        cached = usage["cache_input_tokens"] + usage["cache_creation_input_tokens"]
        usage["input_tokens"] += cached
    return usage


def _input_text(item: dict[str, Any]) -> dict[str, Any]:
    content = item.get("content")
    if _one_part(content, "input_text", "output_text"):
        return {**item, "content": content[0]["text"]}
    return item


def _normalised(provider: str, result: dict[str, Any], theirs: bool = False) -> dict[str, Any]:
    request = result["request"]
    if provider == "openai_response":
        request = {k: v for k, v in request.items() if k not in ("store", "include")}
        request["input"] = [_input_text(item) for item in request["input"]]
        if "reasoning" in request:
            request["reasoning"] = {k: v for k, v in request["reasoning"].items() if k != "summary"}
        content = [
            {k: v for k, v in block.items() if not k.startswith("reasoning_item_")}
            for block in result["content"]
        ]
        result = {**result, "content": content}
    if provider == "anthropic":
        request = _uncached(request)
        request = {**request, "messages": [_text_results(m) for m in request["messages"]]}
        result = {**result, "usage": _anthropic_usage(result["usage"], theirs)}
    elif provider != "openai_response":
        request = {**request, "messages": [_plain_text(m) for m in request["messages"]]}
    return {**result, "request": request}


@pytest.mark.parametrize("case", CASES, ids=case_id)
async def test_case_matches_agentscope(case: dict[str, Any]) -> None:
    ours = _normalised(case["provider"], await _run(case))
    theirs = _normalised(case["provider"], case["expected"], theirs=True)
    if case["provider"] == "deepseek" and ours["usage"] and theirs["usage"]:
        assert ours["usage"].pop("cache_input_tokens") >= theirs["usage"].pop("cache_input_tokens")
    assert ours["path"] == theirs["path"]
    assert ours["content"] == theirs["content"]
    assert ours["usage"] == theirs["usage"]
    assert ours["request"] == theirs["request"]
