"""`generate_structured_output` on every HTTP provider, against its local protocol server.

A forced tool call where the provider takes one; where it refuses one while thinking
(Anthropic, DashScope, Moonshot, DeepSeek), the tool offered alone with an `auto` choice.
"""

from typing import Any

import pytest
from pydantic import BaseModel

from agent_core.credential import (
    AnthropicCredential,
    DashScopeCredential,
    DeepSeekCredential,
    MoonshotCredential,
    OpenAICredential,
    XAICredential,
)
from agent_core.message import SystemMsg, UserMsg
from agent_core.model import (
    STRUCTURED_OUTPUT_TOOL_NAME,
    AnthropicChatModel,
    ChatModelBase,
    DashScopeChatModel,
    DeepSeekChatModel,
    MoonshotChatModel,
    OpenAIChatModel,
    OpenAIResponseModel,
    XAIChatModel,
)
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.support.wire_server import Answer, WireServer, anthropic_events, responses_events, sse

pytestmark = pytest.mark.integration

ASK = [SystemMsg("system", "Answer with data."), UserMsg("user", "Biggest city of France?")]
PARIS = {"name": "Paris", "population": 2100000}
FORCED = {"type": "function", "function": {"name": STRUCTURED_OUTPUT_TOOL_NAME}}


class City(BaseModel):
    name: str
    population: int


def _chat_model(kind: str, url: str, thinking: bool) -> ChatModelBase:
    parameters: dict[str, Any] = {"thinking_enable": True} if thinking else {}
    if kind == "openai":
        return OpenAIChatModel(OpenAICredential(api_key="k", base_url=url), "gpt-test")
    if kind == "xai":
        host = url.removesuffix("/v1")
        return XAIChatModel(XAICredential(api_key="k", api_host=host), "grok-test")
    classes: dict[str, tuple[Any, Any]] = {
        "deepseek": (DeepSeekChatModel, DeepSeekCredential),
        "moonshot": (MoonshotChatModel, MoonshotCredential),
        "dashscope": (DashScopeChatModel, DashScopeCredential),
    }
    model_class, credential_class = classes[kind]
    credential = credential_class(api_key="k", base_url=url)
    return model_class(credential, "m", parameters=parameters, max_retries=0)  # type: ignore[no-any-return]


@pytest.mark.parametrize("kind", ["openai", "xai", "deepseek", "moonshot", "dashscope"])
async def test_chat_completions_providers_force_the_tool(kind: str) -> None:
    with OpenAIWireServer() as server:
        server.push(ScriptedReply(tool_calls=[("c1", STRUCTURED_OUTPUT_TOOL_NAME, PARIS)]))
        async with _chat_model(kind, server.base_url, thinking=False) as model:
            out = await model.generate_structured_output(ASK, City)
        body = server.requests[0].body
    assert out.content == PARIS
    assert body["tool_choice"] == FORCED
    assert [t["function"]["name"] for t in body["tools"]] == [STRUCTURED_OUTPUT_TOOL_NAME]


@pytest.mark.parametrize("kind", ["deepseek", "moonshot", "dashscope"])
async def test_thinking_chat_providers_are_asked_not_forced(kind: str) -> None:
    with OpenAIWireServer() as server:
        server.push(
            ScriptedReply(
                reasoning="France… Paris.",
                tool_calls=[("c1", STRUCTURED_OUTPUT_TOOL_NAME, PARIS)],
            )
        )
        async with _chat_model(kind, server.base_url, thinking=True) as model:
            out = await model.generate_structured_output(ASK, City)
        body = server.requests[0].body
    assert out.content == PARIS
    assert body["tool_choice"] == "auto"
    assert body["messages"][-1]["content"] == f"Answer by calling {STRUCTURED_OUTPUT_TOOL_NAME}."


def _anthropic(server: WireServer, thinking: bool) -> AnthropicChatModel:
    credential = AnthropicCredential(api_key="k", base_url=server.base_url)
    parameters = {"thinking_enable": thinking, "prompt_caching": False}
    return AnthropicChatModel(credential, "claude-test", parameters=parameters, max_retries=0)


async def test_anthropic_with_thinking_is_asked_not_forced() -> None:
    call = ("toolu_1", STRUCTURED_OUTPUT_TOOL_NAME, PARIS)
    with WireServer() as server:
        server.push(Answer(sse(anthropic_events(thinking="France…", tool_calls=[call])), piece=9))
        async with _anthropic(server, thinking=True) as model:
            out = await model.generate_structured_output(ASK, City)
        body = server.requests[0].body
    assert out.content == PARIS
    assert out.repairs == 0
    assert body["thinking"]["type"] == "enabled"
    assert body["tool_choice"] == {"type": "auto"}
    assert body["messages"][-1]["content"][-1]["text"].startswith("Answer by calling")


async def test_anthropic_with_thinking_answering_in_text_is_repaired() -> None:
    call = ("toolu_2", STRUCTURED_OUTPUT_TOOL_NAME, PARIS)
    with WireServer() as server:
        server.push(
            Answer(sse(anthropic_events(thinking="Easy.", signature="s1", text="Paris."))),
            Answer(sse(anthropic_events(thinking="Call it.", signature="s2", tool_calls=[call]))),
        )
        async with _anthropic(server, thinking=True) as model:
            out = await model.generate_structured_output(ASK, City)
        first, second = (r.body for r in server.requests)
    assert out.content == PARIS
    assert out.repairs == 1
    assert first["tool_choice"] == second["tool_choice"] == {"type": "auto"}
    # The failed answer goes back signed, then what to fix.
    replayed = second["messages"][-2]
    assert replayed["role"] == "assistant"
    assert replayed["content"][0] == {"type": "thinking", "thinking": "Easy.", "signature": "s1"}
    assert "did not call" in second["messages"][-1]["content"][-1]["text"]


async def test_anthropic_without_thinking_forces_the_tool() -> None:
    call = ("toolu_3", STRUCTURED_OUTPUT_TOOL_NAME, PARIS)
    with WireServer() as server:
        server.push(Answer(sse(anthropic_events(tool_calls=[call]))))
        async with _anthropic(server, thinking=False) as model:
            out = await model.generate_structured_output(ASK, City)
        body = server.requests[0].body
    assert out.content == PARIS
    assert body["tool_choice"] == {"type": "tool", "name": STRUCTURED_OUTPUT_TOOL_NAME}
    assert "thinking" not in body


async def test_openai_responses_forces_the_tool_even_while_reasoning() -> None:
    call = ("call_1", STRUCTURED_OUTPUT_TOOL_NAME, PARIS)
    with WireServer() as server:
        server.push(Answer(sse(responses_events(summary="Paris.", tool_calls=[call]))))
        credential = OpenAICredential(api_key="k", base_url=server.base_url)
        parameters = {"thinking_enable": True, "reasoning_effort": "low"}
        model = OpenAIResponseModel(credential, "o4-mini", parameters=parameters, max_retries=0)
        async with model:
            out = await model.generate_structured_output(ASK, City)
        body = server.requests[0].body
    assert out.content == PARIS
    assert body["tool_choice"] == {"type": "function", "name": STRUCTURED_OUTPUT_TOOL_NAME}
