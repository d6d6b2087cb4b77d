"""Helpers for driving the HTTP API in integration tests and benchmarks."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from tests.support.sse import Frame, is_reply_end, read_frames

USER = {"X-User-ID": "alice"}


async def make_session(
    api: httpx.AsyncClient, model_base_url: str, user: dict[str, str] = USER, **agent: Any
) -> tuple[str, str]:
    """Create an agent, a credential for `model_base_url` and a session; return their ids.

    The session is named, so the server does not title it (no extra model call after the first
    reply).
    """
    agent_body = {"name": "Friday", **agent}
    agent_resp = await api.post("/agent/", json=agent_body, headers=user)
    assert agent_resp.status_code == 201, agent_resp.text
    cred = await api.post(
        "/credential/",
        json={
            "data": {"type": "openai_credential", "api_key": "sk-test", "base_url": model_base_url}
        },
        headers=user,
    )
    assert cred.status_code == 201, cred.text
    agent_id = agent_resp.json()["agent_id"]
    session = await api.post(
        "/sessions/",
        json={
            "agent_id": agent_id,
            "name": "test session",
            "chat_model_config": {
                "type": "openai_credential",
                "credential_id": cred.json()["credential_id"],
                "model": "gpt-4o-mini",
                "parameters": {},
            },
        },
        headers=user,
    )
    assert session.status_code == 201, session.text
    return agent_id, str(session.json()["session_id"])


def user_text(text: str) -> dict[str, Any]:
    """A user Msg as clients send it."""
    return {"name": "user", "role": "user", "content": [{"type": "text", "text": text}]}


async def post_chat(
    api: httpx.AsyncClient, agent_id: str, session_id: str, text: str, user: dict[str, str] = USER
) -> httpx.Response:
    """POST /chat/ with one user text message."""
    body = {"agent_id": agent_id, "session_id": session_id, "input": user_text(text)}
    return await api.post("/chat/", json=body, headers=user)


async def chat_and_collect(
    api: httpx.AsyncClient,
    agent_id: str,
    session_id: str,
    text: str,
    subscribers: int = 1,
    user: dict[str, str] = USER,
) -> list[list[Frame]]:
    """Open `subscribers` streams, post one chat, return each stream's frames to REPLY_END."""
    opened = asyncio.Event()
    count = 0

    def mark_open() -> None:
        nonlocal count
        count += 1
        if count == subscribers:
            opened.set()

    path = f"/sessions/{session_id}/stream"
    readers = [
        asyncio.create_task(read_frames(api, path, user, is_reply_end, on_open=mark_open))
        for _ in range(subscribers)
    ]
    await asyncio.wait_for(opened.wait(), 30)
    response = await post_chat(api, agent_id, session_id, text, user)
    assert response.status_code == 200, response.text
    assert response.json() == {"status": "started", "session_id": session_id}
    return list(await asyncio.wait_for(asyncio.gather(*readers), 60))


async def wait_for_status(
    api: httpx.AsyncClient, session_id: str, status: str, within: float = 30
) -> None:
    """Poll GET /sessions/{id}/status until it reports `status`."""
    deadline = asyncio.get_running_loop().time() + within
    last = None
    while asyncio.get_running_loop().time() < deadline:
        response = await api.get(f"/sessions/{session_id}/status", headers=USER)
        last = response.json()
        if response.status_code == 200 and last["status"] == status:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"session {session_id} never reached {status!r}; last: {last}")


def tool_results(frames: list[Frame]) -> list[str]:
    """The text of each TOOL_RESULT_END-folded result, as the stream carried it."""
    texts: dict[str, list[str]] = {}
    for frame in frames:
        if frame.type == "TOOL_RESULT_TEXT_DELTA":
            texts.setdefault(frame.data["tool_call_id"], []).append(frame.data["delta"])
    return ["".join(parts) for parts in texts.values()]
