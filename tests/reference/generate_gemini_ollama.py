"""Record what AgentScope 2.0.11's Gemini and Ollama chat models send and make of scripted answers.

Each case is a conversation, tools, a tool choice, model parameters and a scripted answer. The
script serves the answer from the same local protocol servers the tests use
(`tests/support/gemini_server.py`, `tests/support/ollama_server.py`), calls AgentScope's
`GeminiChatModel` / `OllamaChatModel` against it, streaming and not, and records the final
content, the usage and the request body the server received.

Usage (from the repository root; AgentScope's Gemini and Ollama clients, `google-genai` and
`ollama`, must be importable, e.g. installed with `pip install --target DIR` and put on
`PYTHONPATH`)::

    PYTHONPATH=.:DIR .bench-venv/bin/python tests/reference/generate_gemini_ollama.py

Writes `tests/reference/data/gemini_ollama.json`: `{"cases": [...]}`, each case holding its
inputs and `expected` (`content`, `usage`, `request`). Ids the models generate at random are
left out. `tests/unit/agent_core/providers/test_gemini_ollama_reference.py` replays every case
against Troupe's models.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from agentscope.credential import GeminiCredential, OllamaCredential
from agentscope.model import GeminiChatModel, OllamaChatModel

from tests.reference._recording import API_KEY, ASK, CLOCK, SYSTEM, WEATHER, record
from tests.support.gemini_server import GeminiWireServer, gemini_reply
from tests.support.ollama_server import OllamaWireServer, ollama_reply

OUT = Path(__file__).parent / "data" / "gemini_ollama.json"
# A pydantic-style schema: $defs, Optional (anyOf null), const, additionalProperties.
BOOKING = {
    "type": "function",
    "function": {
        "name": "book",
        "description": "Book a trip.",
        "parameters": {
            "$defs": {
                "Place": {
                    "type": "object",
                    "properties": {
                        "city": {"type": "string"},
                        "country": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    },
                    "required": ["city"],
                    "additionalProperties": False,
                }
            },
            "type": "object",
            "properties": {
                "to": {"$ref": "#/$defs/Place"},
                "kind": {"const": "flight", "type": "string"},
                "seats": {"type": ["integer", "null"], "default": None},
            },
            "required": ["to", "kind"],
            "additionalProperties": False,
        },
    },
}
HISTORY = [
    SYSTEM,
    ASK,
    {
        "role": "assistant",
        "name": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Need the forecast."},
            {"type": "text", "text": "Checking."},
            {
                "type": "tool_call",
                "id": "gemini_ts:c2lnbmF0dXJlLTE=",
                "name": "get_weather",
                "input": '{"city": "Paris"}',
            },
            {
                "type": "tool_result",
                "id": "gemini_ts:c2lnbmF0dXJlLTE=",
                "name": "get_weather",
                "output": "Sunny, 21C",
            },
            {"type": "text", "text": "It is sunny."},
        ],
    },
    {"role": "user", "name": "user", "content": [{"type": "text", "text": "And tomorrow?"}]},
]
PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQG"
    "AhKmMIQAAAABJRU5ErkJggg=="
)
IMAGE_ASK = {
    "role": "user",
    "name": "user",
    "content": [
        {"type": "text", "text": "What is this?"},
        {"type": "data", "source": {"type": "base64", "data": PIXEL, "media_type": "image/png"}},
    ],
}

GEMINI_CASES: list[dict[str, Any]] = [
    {"name": "text", "messages": [SYSTEM, ASK], "reply": {"parts": [["text", "It is sunny."]]}},
    {
        "name": "thinking",
        "messages": [ASK],
        "parameters": {
            "thinking_enable": True,
            "thinking_budget": 512,
            "max_tokens": 100,
            "temperature": 0.3,
            "top_p": 0.9,
        },
        "reply": {
            "parts": [["thought", "Let me think about Paris."], ["text", "Sunny."]],
            "thoughts_tokens": 7,
        },
    },
    {
        "name": "tool_call_auto",
        "messages": [SYSTEM, ASK],
        "tools": [WEATHER, CLOCK],
        "tool_choice": "auto",
        "reply": {
            "parts": [
                ["text", "Let me check."],
                ["call", "get_weather", {"city": "Paris", "days": 2}],
            ]
        },
    },
    {
        "name": "tool_call_forced_signed",
        "messages": [ASK],
        "tools": [WEATHER, CLOCK],
        "tool_choice": "get_weather",
        "reply": {"parts": [["call", "get_weather", {"city": "Paris"}, None, "c2lnbmF0dXJl"]]},
    },
    {
        "name": "tool_choice_required_parallel",
        "messages": [ASK],
        "tools": [WEATHER, CLOCK],
        "tool_choice": "required",
        "reply": {
            "parts": [
                ["call", "get_weather", {"city": "Paris"}, "fc-1"],
                ["call", "get_time", {}, "fc-2"],
            ]
        },
    },
    {"name": "tool_choice_none", "messages": [ASK], "tools": [WEATHER], "tool_choice": "none"},
    {
        "name": "schema_sanitized",
        "messages": [ASK],
        "tools": [BOOKING],
        "reply": {"parts": [["call", "book", {"to": {"city": "Rome"}, "kind": "flight"}]]},
    },
    {
        "name": "history_with_tools",
        "messages": HISTORY,
        "tools": [WEATHER],
        "reply": {"parts": [["text", "Rain."]]},
    },
    {
        "name": "usage_details",
        "messages": [ASK],
        "reply": {
            "parts": [["text", "Sunny."]],
            "prompt_tokens": 120,
            "output_tokens": 30,
            "thoughts_tokens": 12,
            "cached_tokens": 64,
            "tool_use_prompt_tokens": 8,
        },
    },
    {"name": "image_input", "messages": [IMAGE_ASK], "reply": {"parts": [["text", "A pixel."]]}},
    {
        "name": "unicode_split",
        "messages": [ASK],
        "reply": {"parts": [["text", "Ensoleillé — 21°C ☀️ demain"]], "split": 5, "piece": 3},
    },
]

OLLAMA_CASES: list[dict[str, Any]] = [
    {"name": "text", "messages": [SYSTEM, ASK], "reply": {"content": "It is sunny."}},
    {
        "name": "thinking",
        "messages": [ASK],
        "parameters": {"thinking_enable": True, "max_tokens": 100, "temperature": 0.3},
        "reply": {"thinking": "Let me think about Paris.", "content": "Sunny."},
    },
    {
        "name": "tool_call",
        "messages": [SYSTEM, ASK],
        "tools": [WEATHER, CLOCK],
        "reply": {
            "content": "Let me check.",
            "tool_calls": [["get_weather", {"city": "Paris", "days": 2}], ["get_time", {}]],
        },
    },
    {
        "name": "tool_choice_narrows",
        "messages": [ASK],
        "tools": [WEATHER, CLOCK],
        "tool_choice": {"mode": "auto", "tools": ["get_time"]},
        "reply": {"tool_calls": [["get_time", {}]]},
    },
    {"name": "history_with_tools", "messages": HISTORY, "tools": [WEATHER], "reply": {}},
    {"name": "image_input", "messages": [IMAGE_ASK], "reply": {"content": "A pixel."}},
    {
        "name": "usage",
        "messages": [ASK],
        "reply": {"content": "Sunny.", "prompt_eval_count": 321, "eval_count": 45, "split": 9},
    },
]


async def _run(provider: str, case: dict[str, Any], stream: bool) -> dict[str, Any]:
    if provider == "gemini":
        server: GeminiWireServer | OllamaWireServer = GeminiWireServer(api_key=API_KEY)
        reply: Any = gemini_reply(case.get("reply", {}))
    else:
        server = OllamaWireServer()
        reply = ollama_reply(case.get("reply", {}))
    with server:
        server.push(reply)
        model: Any
        if provider == "gemini":
            model = GeminiChatModel(
                credential=GeminiCredential(api_key=API_KEY),
                model="gemini-2.5-flash",
                parameters=GeminiChatModel.Parameters(**case.get("parameters", {})),
                stream=stream,
                max_retries=0,
                client_kwargs={"http_options": {"base_url": server.root, "api_version": "v1beta"}},
            )
        else:
            model = OllamaChatModel(
                credential=OllamaCredential(host=server.base_url),
                model="qwen3:8b",
                parameters=OllamaChatModel.Parameters(**case.get("parameters", {})),
                stream=stream,
                max_retries=0,
            )
        return await record(model, server, case, call_id_prefixes=("gemini_ts:", "fc-"))


async def main() -> None:
    """Run every case, streaming and not, and write the fixture."""
    cases = []
    for provider, specs in (("gemini", GEMINI_CASES), ("ollama", OLLAMA_CASES)):
        for spec in specs:
            for stream in (False, True):
                expected = await _run(provider, spec, stream)
                cases.append({"provider": provider, "stream": stream, **spec, "expected": expected})
    OUT.write_text(json.dumps({"cases": cases}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    asyncio.run(main())
