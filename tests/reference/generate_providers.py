"""Record what AgentScope 2.0.11's HTTP chat models send and make of scripted answers.

Covers Anthropic (Messages API), OpenAI Responses, and the Chat Completions family (OpenAI,
DeepSeek, Moonshot, DashScope's compatible mode). Each case is a conversation, tools, a tool
choice, model parameters and a scripted answer; the script serves the answer from the local
protocol servers the tests use (`tests/support/wire_server.py`, `tests/support/openai_server.py`),
calls AgentScope's model against it, streaming and not, and records the final content, the usage
and the request body the server received.

xAI is left out: AgentScope's `XAIChatModel` speaks gRPC through `xai_sdk`, Troupe's speaks
xAI's REST API, so there is no shared wire to compare.

Usage (from the repository root, in a venv holding `agentscope==2.0.11` with its `anthropic` and
`openai` clients)::

    PYTHONPATH=. .bench-venv/bin/python tests/reference/generate_providers.py

Writes `tests/reference/data/providers.json`: `{"cases": [...]}`, each case holding its inputs
and `expected` (`content`, `usage`, `request`, `path`). Ids the models generate at random are
left out. `tests/unit/agent_core/providers/test_providers_reference.py` replays every case
against Troupe's models.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from agentscope.credential import (
    AnthropicCredential,
    DashScopeCredential,
    DeepSeekCredential,
    MoonshotCredential,
    OpenAICredential,
)
from agentscope.model import (
    AnthropicChatModel,
    DashScopeChatModel,
    DeepSeekChatModel,
    MoonshotChatModel,
    OpenAIChatModel,
    OpenAIResponseModel,
)

from tests.reference._recording import API_KEY, ASK, CLOCK, SYSTEM, WEATHER, record
from tests.support.openai_server import OpenAIWireServer
from tests.support.wire_server import Answer, WireServer, scripted_answer

OUT = Path(__file__).parent / "data" / "providers.json"


def _history(thinking: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        SYSTEM,
        ASK,
        {
            "role": "assistant",
            "name": "assistant",
            "content": [
                thinking,
                {"type": "text", "text": "Checking."},
                {
                    "type": "tool_call",
                    "id": "call_1",
                    "name": "get_weather",
                    "input": '{"city": "Paris"}',
                },
                {
                    "type": "tool_result",
                    "id": "call_1",
                    "name": "get_weather",
                    "output": "Sunny, 21C",
                },
                {"type": "text", "text": "It is sunny."},
            ],
        },
        {"role": "user", "name": "user", "content": [{"type": "text", "text": "And tomorrow?"}]},
    ]


HISTORY = _history({"type": "thinking", "thinking": "Need the forecast."})
SIGNED_HISTORY = _history(
    {"type": "thinking", "thinking": "Need the forecast.", "signature": "sig-history"}
)
CALL = ["call_1", "get_weather", {"city": "Paris", "days": 2}]

ANTHROPIC_CASES: list[dict[str, Any]] = [
    {"name": "text", "messages": [SYSTEM, ASK], "reply": {"text": "It is sunny."}},
    {
        "name": "thinking",
        "messages": [ASK],
        "parameters": {"thinking_enable": True, "thinking_budget": 2048, "max_tokens": 4096},
        "reply": {"thinking": "Let me think about Paris.", "signature": "sig-1", "text": "Sunny."},
    },
    {
        "name": "redacted_thinking",
        "messages": [ASK],
        "parameters": {"thinking_enable": True, "thinking_budget": 2048, "max_tokens": 4096},
        "reply": {"redacted": "ENCRYPTED==", "text": "Sunny."},
    },
    {
        "name": "adaptive_thinking_effort",
        "messages": [SYSTEM, ASK],
        "tools": [WEATHER],
        "tool_choice": "auto",
        "parameters": {
            "thinking_mode": "adaptive",
            "thinking_display": "summarized",
            "reasoning_effort": "medium",
        },
        "reply": {"thinking": "Paris, so check.", "signature": "sig-2", "tool_calls": [CALL]},
    },
    {
        "name": "budget_thinking_omitted",
        "messages": [ASK],
        "parameters": {
            "thinking_mode": "enabled",
            "thinking_budget": 2048,
            "max_tokens": 4096,
            "thinking_display": "omitted",
            "reasoning_effort": "xhigh",
        },
        "reply": {"text": "Sunny."},
    },
    {
        "name": "thinking_disabled_effort",
        "messages": [ASK],
        "parameters": {
            "thinking_mode": "disabled",
            "thinking_display": "summarized",
            "reasoning_effort": "low",
        },
        "reply": {"text": "Sunny."},
    },
    {
        "name": "tool_call_auto",
        "messages": [SYSTEM, ASK],
        "tools": [WEATHER, CLOCK],
        "tool_choice": "auto",
        "reply": {"text": "Let me check.", "tool_calls": [CALL]},
    },
    {
        "name": "tool_choice_forced",
        "messages": [ASK],
        "tools": [WEATHER, CLOCK],
        "tool_choice": "get_weather",
        "reply": {"tool_calls": [CALL]},
    },
    {
        "name": "tool_choice_required",
        "messages": [ASK],
        "tools": [WEATHER, CLOCK],
        "tool_choice": "required",
        "reply": {"tool_calls": [CALL, ["call_2", "get_time", {}]]},
    },
    {
        "name": "signed_history",
        "messages": SIGNED_HISTORY,
        "tools": [WEATHER],
        "reply": {"text": "Rain."},
    },
    {
        "name": "cache_usage",
        "messages": [ASK],
        "reply": {
            "text": "Sunny.",
            "usage": {
                "input_tokens": 7,
                "cache_creation_input_tokens": 100,
                "cache_read_input_tokens": 50,
                "output_tokens": 30,
            },
        },
    },
]

RESPONSES_CASES: list[dict[str, Any]] = [
    {"name": "text", "messages": [SYSTEM, ASK], "reply": {"text": "It is sunny."}},
    {
        "name": "reasoning",
        "messages": [ASK],
        "parameters": {"thinking_enable": True, "reasoning_effort": "low", "max_tokens": 500},
        "reply": {"summary": "Think about Paris.", "text": "Sunny."},
    },
    {
        "name": "tool_call_auto",
        "messages": [SYSTEM, ASK],
        "tools": [WEATHER, CLOCK],
        "tool_choice": "auto",
        "reply": {"text": "Let me check.", "tool_calls": [CALL]},
    },
    {
        "name": "tool_choice_forced",
        "messages": [ASK],
        "tools": [WEATHER, CLOCK],
        "tool_choice": "get_weather",
        "reply": {"tool_calls": [CALL]},
    },
    {"name": "history_with_tools", "messages": HISTORY, "tools": [WEATHER], "reply": {"text": "R"}},
]

CHAT_CASES: list[dict[str, Any]] = [
    {"name": "text", "messages": [SYSTEM, ASK], "reply": {"text": "It is sunny."}},
    {
        "name": "tool_call_auto",
        "messages": [SYSTEM, ASK],
        "tools": [WEATHER, CLOCK],
        "tool_choice": "auto",
        "reply": {"text": "Let me check.", "tool_calls": [CALL, ["call_2", "get_time", {}]]},
    },
    {
        "name": "tool_choice_forced",
        "messages": [ASK],
        "tools": [WEATHER, CLOCK],
        "tool_choice": "get_weather",
        "reply": {"tool_calls": [CALL]},
    },
    {
        "name": "history_with_tools",
        "messages": HISTORY,
        "tools": [WEATHER],
        "reply": {"text": "Rain."},
    },
    {
        "name": "reasoning_content_and_usage",
        "messages": [ASK],
        "parameters": {"max_tokens": 300, "temperature": 0.2},
        "reply": {
            "reasoning": "Paris in spring…",
            "text": "Sunny, 21°C ☀️",
            "prompt_tokens": 120,
            "completion_tokens": 30,
            "cached_tokens": 64,
        },
    },
]

CHAT_PROVIDERS = ("openai_chat", "deepseek", "moonshot", "dashscope")
MODEL_NAMES = {
    "anthropic": "claude-test",
    "openai_response": "gpt-test",
    "openai_chat": "gpt-test",
    "deepseek": "deepseek-chat",
    "moonshot": "kimi-k2",
    "dashscope": "qwen-plus",
}


def all_cases() -> list[tuple[str, dict[str, Any]]]:
    """Every (provider, case) pair the fixture holds."""
    pairs = [("anthropic", c) for c in ANTHROPIC_CASES]
    pairs += [("openai_response", c) for c in RESPONSES_CASES]
    pairs += [(p, c) for p in CHAT_PROVIDERS for c in CHAT_CASES]
    return pairs


def _agentscope_model(provider: str, root: str, parameters: dict[str, Any], stream: bool) -> Any:
    name = MODEL_NAMES[provider]
    common = {"stream": stream, "max_retries": 0}
    if provider == "anthropic":
        cred = AnthropicCredential(api_key=API_KEY, base_url=root)
        params = AnthropicChatModel.Parameters(**parameters)
        return AnthropicChatModel(credential=cred, model=name, parameters=params, **common)
    v1 = f"{root}/v1"
    classes: dict[str, tuple[Any, Any]] = {
        "openai_response": (OpenAIResponseModel, OpenAICredential),
        "openai_chat": (OpenAIChatModel, OpenAICredential),
        "deepseek": (DeepSeekChatModel, DeepSeekCredential),
        "moonshot": (MoonshotChatModel, MoonshotCredential),
        "dashscope": (DashScopeChatModel, DashScopeCredential),
    }
    model_class, cred_class = classes[provider]
    cred = cred_class(api_key=API_KEY, base_url=v1)
    params = model_class.Parameters(**parameters)
    return model_class(credential=cred, model=name, parameters=params, **common)


async def _run(provider: str, case: dict[str, Any], stream: bool) -> dict[str, Any]:
    answer = scripted_answer(provider, case.get("reply", {}), stream)
    server: WireServer | OpenAIWireServer
    server = WireServer() if isinstance(answer, Answer) else OpenAIWireServer()
    with server:
        server.push(answer)
        root = server.base_url.removesuffix("/v1")
        model = _agentscope_model(provider, root, case.get("parameters", {}), stream)
        return await record(model, server, case, usage_extras=("cache_creation_input_tokens",))


async def main() -> None:
    """Run every case, streaming and not, and write the fixture."""
    cases = []
    for provider, spec in all_cases():
        for stream in (False, True):
            try:
                expected = await _run(provider, spec, stream)
            except Exception as exc:
                expected = {"error": f"{type(exc).__name__}: {exc}"}
            cases.append(
                {
                    "provider": provider,
                    "model": MODEL_NAMES[provider],
                    "stream": stream,
                    **spec,
                    "expected": expected,
                }
            )
    OUT.write_text(json.dumps({"cases": cases}, indent=1, sort_keys=True, ensure_ascii=False))
    failed = [f"{c['provider']}-{c['name']}" for c in cases if "error" in c["expected"]]
    print(f"wrote {len(cases)} cases to {OUT}; AgentScope failed {failed}")


if __name__ == "__main__":
    asyncio.run(main())
