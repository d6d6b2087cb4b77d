"""`GeminiChatModel` and `OllamaChatModel` against AgentScope 2.0.11's, case by case.

Each case of `tests/reference/data/gemini_ollama.json` (written by
`tests/reference/generate_gemini_ollama.py`) is served by the same scripted protocol server
AgentScope's model was run against; Troupe's final content, usage and request body must match
what AgentScope's gave, streaming and not.

Deliberate differences, normalised away before comparing:

- Gemini: Troupe sends system messages as `systemInstruction` (AgentScope sends them as a
  leading `user` content); Troupe writes every request key in the REST API's camelCase
  (AgentScope's SDK passes `thinkingConfig`'s keys as snake_case); Troupe does not send thought
  summaries back (Gemini needs only the signatures, which both send with the calls).
- Ollama: Troupe leaves `tools` out rather than sending an empty list, and sends tool schemas
  whole (AgentScope's client keeps only what Ollama's own tool type reads: `type`,
  `description`, `enum`, `items` of each property; the server ignores the rest either way).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from agent_core.credential import GeminiCredential, OllamaCredential
from agent_core.model import (
    ChatModelBase,
    GeminiChatModel,
    OllamaChatModel,
)
from tests.support.gemini_server import GeminiWireServer, gemini_reply
from tests.support.ollama_server import OllamaWireServer, ollama_reply
from tests.support.reference_cases import API_KEY, case_id, load_cases, replay

CASES = load_cases("gemini_ollama")
AGREEMENT_BAR = 1.0
_SNAKE = re.compile(r"_([a-z])")


def _camel(value: Any) -> Any:
    if isinstance(value, dict):
        return {_SNAKE.sub(lambda m: m.group(1).upper(), k): _camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def _gemini_request(body: dict[str, Any]) -> dict[str, Any]:
    body = _camel(body)
    system = body.pop("systemInstruction", None)
    contents = [{"role": "user", "parts": system["parts"]}] if system else []
    for content in body.get("contents", []):
        parts = [p for p in content["parts"] if not p.get("thought")]
        if parts:
            contents.append({"role": content["role"], "parts": parts})
    return {**body, "contents": contents}


_OLLAMA_PROPERTY_KEYS = {"type", "description", "enum", "items"}


def _ollama_tool(tool: dict[str, Any]) -> dict[str, Any]:
    parameters = dict(tool["function"].get("parameters") or {})
    parameters["properties"] = {
        name: {k: v for k, v in prop.items() if k in _OLLAMA_PROPERTY_KEYS}
        for name, prop in (parameters.get("properties") or {}).items()
    }
    return {**tool, "function": {**tool["function"], "parameters": parameters}}


def _ollama_request(body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "tools": [_ollama_tool(t) for t in body.get("tools") or []]}


async def _run(case: dict[str, Any]) -> dict[str, Any]:
    server: GeminiWireServer | OllamaWireServer
    model: ChatModelBase
    if case["provider"] == "gemini":
        server = GeminiWireServer(api_key=API_KEY)
        server.push(gemini_reply(case.get("reply", {})))
    else:
        server = OllamaWireServer()
        server.push(ollama_reply(case.get("reply", {})))
    with server:
        if isinstance(server, GeminiWireServer):
            credential = GeminiCredential(api_key=API_KEY, base_url=server.base_url)
            model = GeminiChatModel(
                credential,
                "gemini-2.5-flash",
                parameters=case.get("parameters"),
                stream=case["stream"],
                max_retries=0,
            )
        else:
            model = OllamaChatModel(
                OllamaCredential(host=server.base_url),
                "qwen3:8b",
                parameters=case.get("parameters"),
                stream=case["stream"],
                max_retries=0,
            )
        return await replay(
            model,
            server,
            case,
            call_id_prefixes=("gemini_ts:", "fc-"),
            # Troupe's thinking blocks can carry a provider signature; AgentScope's cannot.
            unset=("signature", "redacted_thinking_data"),
        )


def _normalised(provider: str, result: dict[str, Any]) -> dict[str, Any]:
    request = result["request"]
    normalise = _gemini_request if provider == "gemini" else _ollama_request
    return {**result, "request": normalise(request)}


@pytest.mark.parametrize("case", CASES, ids=case_id)
async def test_case_matches_agentscope(case: dict[str, Any]) -> None:
    ours = _normalised(case["provider"], await _run(case))
    theirs = _normalised(case["provider"], case["expected"])
    assert ours["path"] == theirs["path"]
    assert ours["content"] == theirs["content"]
    assert ours["usage"] == theirs["usage"]
    assert ours["request"] == theirs["request"]


async def test_agreement_ratio() -> None:
    agreed = 0
    for case in CASES:
        ours = _normalised(case["provider"], await _run(case))
        theirs = _normalised(case["provider"], case["expected"])
        agreed += ours == theirs
    ratio = agreed / len(CASES)
    print(f"Gemini/Ollama agreement with AgentScope 2.0.11: {agreed}/{len(CASES)} = {ratio:.0%}")
    assert ratio >= AGREEMENT_BAR
