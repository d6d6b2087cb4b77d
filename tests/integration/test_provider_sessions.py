"""Sessions on Anthropic and Gemini through the whole service, the fallback on another provider.

Serve API → session actor → Redis → agent → provider protocol server, and back over SSE: a
thinking, tool-using turn on Claude sends its signed and redacted thinking back with the tool
result; a failing primary model hands the turn to a fallback model of another provider.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.integration.conftest import LiveService
from tests.support.api import USER, chat_and_collect
from tests.support.gemini_server import GeminiReply, GeminiWireServer, Text
from tests.support.sse import Frame
from tests.support.wire_server import Answer, WireServer, anthropic_error, anthropic_events, sse

pytestmark = [pytest.mark.integration, pytest.mark.ray, pytest.mark.redis]

# Retry-After 0: the model's own retries run at once, so the failure reaches the fallback fast.
NOW = {"retry-after": "0"}


@pytest.fixture
async def api(live_service: LiveService) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=live_service.base_url, timeout=30) as client:
        yield client


async def credential(api: httpx.AsyncClient, data: dict[str, Any]) -> str:
    response = await api.post("/credential/", json={"data": data}, headers=USER)
    assert response.status_code == 201, response.text
    return str(response.json()["credential_id"])


async def session(
    api: httpx.AsyncClient, model: dict[str, Any], fallback: dict[str, Any] | None = None
) -> tuple[str, str]:
    agent = await api.post("/agent/", json={"name": "Friday"}, headers=USER)
    assert agent.status_code == 201, agent.text
    agent_id = agent.json()["agent_id"]
    body: dict[str, Any] = {"agent_id": agent_id, "name": "s", "chat_model_config": model}
    if fallback is not None:
        body["fallback_chat_model_config"] = fallback
    created = await api.post("/sessions/", json=body, headers=USER)
    assert created.status_code == 201, created.text
    return agent_id, str(created.json()["session_id"])


async def anthropic_config(
    api: httpx.AsyncClient, server: WireServer, **parameters: Any
) -> dict[str, Any]:
    data = {"type": "anthropic_credential", "api_key": "sk-ant", "base_url": server.base_url}
    return {
        "type": "anthropic_credential",
        "credential_id": await credential(api, data),
        "model": "claude-test",
        "parameters": {"prompt_caching": False, **parameters},
    }


async def gemini_config(api: httpx.AsyncClient, server: GeminiWireServer) -> dict[str, Any]:
    data = {"type": "gemini_credential", "api_key": "gm-key", "base_url": server.base_url}
    return {
        "type": "gemini_credential",
        "credential_id": await credential(api, data),
        "model": "gemini-2.5-flash",
    }


def text_of(frames: list[Frame]) -> str:
    return "".join(f.data["delta"] for f in frames if f.type == "TEXT_BLOCK_DELTA")


async def test_claude_thinking_tool_turn_sends_its_signed_thinking_back(
    api: httpx.AsyncClient,
) -> None:
    call = ("toolu_1", "get_current_time", {})
    with WireServer() as claude:
        claude.push(
            Answer(
                sse(
                    anthropic_events(
                        thinking="Need the clock.",
                        signature="SIG-A",
                        redacted="REDACTED-A",
                        tool_calls=[call],
                    )
                ),
                piece=11,
            ),
            Answer(sse(anthropic_events(text="It is late."))),
        )
        config = await anthropic_config(api, claude, thinking_enable=True)
        agent_id, session_id = await session(api, config)
        (frames,) = await chat_and_collect(api, agent_id, session_id, "what time is it?")
        requests = claude.requests

    assert frames[-1].data["finished_reason"] == "completed"
    assert text_of(frames) == "It is late."
    ends = [f.data for f in frames if f.type == "THINKING_BLOCK_END"]
    assert [(e.get("signature"), e.get("redacted_thinking_data")) for e in ends] == [
        ("SIG-A", None),
        (None, "REDACTED-A"),
    ]
    assert len(requests) == 2
    assert requests[0].headers["x-api-key"] == "sk-ant"
    assert requests[0].body["thinking"]["type"] == "enabled"
    replayed = requests[1].body["messages"][1]
    assert replayed["role"] == "assistant"
    assert replayed["content"][:2] == [
        {"type": "thinking", "thinking": "Need the clock.", "signature": "SIG-A"},
        {"type": "redacted_thinking", "data": "REDACTED-A"},
    ]
    assert replayed["content"][2]["type"] == "tool_use"
    assert requests[1].body["messages"][2]["content"][0]["tool_use_id"] == "toolu_1"


async def test_a_failing_gemini_model_falls_back_to_claude(api: httpx.AsyncClient) -> None:
    with GeminiWireServer(api_key="gm-key") as gemini, WireServer() as claude:
        gemini.push(*[GeminiReply(status=429, headers=NOW) for _ in range(4)])
        claude.push(Answer(sse(anthropic_events(text="Claude here."))))
        agent_id, session_id = await session(
            api, await gemini_config(api, gemini), await anthropic_config(api, claude)
        )
        (frames,) = await chat_and_collect(api, agent_id, session_id, "hello?")
        tried, answered = len(gemini.requests), len(claude.requests)
    assert frames[-1].data["finished_reason"] == "completed"
    assert text_of(frames) == "Claude here."
    assert (tried, answered) == (4, 1)


async def test_an_overloaded_claude_model_falls_back_to_gemini(api: httpx.AsyncClient) -> None:
    with GeminiWireServer(api_key="gm-key") as gemini, WireServer() as claude:
        claude.push(*[Answer(anthropic_error(529), status=529, headers=NOW) for _ in range(4)])
        gemini.push(GeminiReply([Text("Gemini here.")]))
        agent_id, session_id = await session(
            api, await anthropic_config(api, claude), await gemini_config(api, gemini)
        )
        (frames,) = await chat_and_collect(api, agent_id, session_id, "hello?")
        tried, answered = len(claude.requests), len(gemini.requests)
    assert frames[-1].data["finished_reason"] == "completed"
    assert text_of(frames) == "Gemini here."
    assert (tried, answered) == (4, 1)
