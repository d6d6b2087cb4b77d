"""A POST /chat/ retried with its Idempotency-Key is answered once; a malformed key is a 422."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from tests.support.api import make_session
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.unit.serve._service import Service

pytestmark = pytest.mark.redis

USER = {"X-User-ID": "alice"}


@pytest.fixture
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer(reply_func=lambda _: ScriptedReply(text="Sure.")) as server:
        yield server


def chat(agent_id: str, session_id: str, text: str) -> dict[str, object]:
    return {
        "agent_id": agent_id,
        "session_id": session_id,
        "input": [{"role": "user", "name": "user", "content": [{"type": "text", "text": text}]}],
    }


async def user_texts(service: Service, session_id: str) -> list[str]:
    page = await service.api.get(f"/sessions/{session_id}/messages", headers=USER)
    return [
        block["text"]
        for message in page.json()["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if block["type"] == "text"
    ]


async def test_a_retried_post_with_its_key_is_delivered_once(
    service: Service, model: OpenAIWireServer
) -> None:
    agent_id, session_id = await make_session(service.api, model.base_url, USER)
    body = chat(agent_id, session_id, "hello")
    headers = {**USER, "Idempotency-Key": "turn-1"}

    answers = [await service.api.post("/chat/", json=body, headers=headers) for _ in range(3)]
    other = await service.api.post(
        "/chat/",
        json=chat(agent_id, session_id, "again"),
        headers={**USER, "Idempotency-Key": "turn-2"},
    )

    assert [a.status_code for a in answers] == [200, 200, 200]
    assert other.status_code == 200
    for _ in range(100):
        if len(await user_texts(service, session_id)) >= 2:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)  # a duplicate, if any, would be in by now
    assert await user_texts(service, session_id) == ["hello", "again"]


@pytest.mark.parametrize("key", ["", "a b", "x" * 129, "k/1", "k;1"])
async def test_a_malformed_key_is_refused_naming_the_header(
    service: Service, model: OpenAIWireServer, key: str
) -> None:
    agent_id, session_id = await make_session(service.api, model.base_url, USER)
    answer = await service.api.post(
        "/chat/", json=chat(agent_id, session_id, "hi"), headers={**USER, "Idempotency-Key": key}
    )
    assert answer.status_code == 422, answer.text
    assert "idempotency-key" in answer.text.lower()
