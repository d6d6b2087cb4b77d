"""`POST /chat/` serves well-formed requests without FastAPI's dependency solving, and answers
everything else (and every request while its identity is overridden) exactly as FastAPI does."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import fastapi.routing
import pytest

from serve.deps import user_id
from tests.support.api import make_session
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.unit.serve._service import Service

pytestmark = pytest.mark.redis

ALICE = {"X-User-ID": "alice"}
MSG = {"role": "user", "name": "user", "content": "hi"}


@pytest.fixture
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer(reply_func=lambda _: ScriptedReply(text="Sure.")) as server:
        yield server


async def post(service: Service, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    answer = await service.api.post("/chat/", content=body, headers=headers)
    return answer.status_code, answer.json()


async def test_a_well_formed_post_is_served_without_dependency_solving(
    service: Service, model: OpenAIWireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent_id, session_id = await make_session(service.api, model.base_url, ALICE)

    async def unreachable(**_: Any) -> None:
        raise AssertionError("the well-formed request went through dependency solving")

    monkeypatch.setattr(fastapi.routing, "solve_dependencies", unreachable)
    answer = await service.api.post(
        "/chat/", json={"agent_id": agent_id, "session_id": session_id, "input": MSG}, headers=ALICE
    )

    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    assert answer.json() == {"status": "started", "session_id": session_id}
    assert await service.runtime.bus.inbox_depth(session_id) >= 1


def variants(agent_id: str, session_id: str) -> list[tuple[bytes, dict[str, str]]]:
    json_type = {"Content-Type": "application/json"}
    good = f'{{"agent_id": "{agent_id}", "session_id": "{session_id}", "input": null}}'.encode()
    return [
        (good, {**ALICE, **json_type}),
        (good, {**ALICE, **json_type, "Idempotency-Key": "turn-1"}),
        (good, {**ALICE, **json_type, "Idempotency-Key": "not a key"}),
        (good, {**ALICE, "Content-Type": "text/plain"}),
        (good, {**ALICE, "Content-Type": "application/json; charset=utf-8"}),
        (good, {**ALICE}),
        (good, {"X-User-ID": "bob", **json_type}),
        (good, json_type),
        (b'{"agent_id": "a", "session_id": ', {**ALICE, **json_type}),
        (b'{"agent_id": "", "session_id": "s", "input": null}', {**ALICE, **json_type}),
        (
            f'{{"agent_id": "{agent_id}", "session_id": "{session_id}", '
            '"input": {"role": "assistant", "name": "a", "content": "hi"}}'.encode(),
            {**ALICE, **json_type},
        ),
        (
            f'{{"agent_id": "other", "session_id": "{session_id}", "input": null}}'.encode(),
            {**ALICE, **json_type},
        ),
        (b'{"agent_id": "a", "session_id": "gone", "input": null}', {**ALICE, **json_type}),
    ]


async def test_every_request_is_answered_as_fastapi_answers_it(
    service: Service, model: OpenAIWireServer
) -> None:
    agent_id, session_id = await make_session(service.api, model.base_url, ALICE)
    cases = variants(agent_id, session_id)

    fast = [await post(service, body, headers) for body, headers in cases]
    # Overriding the identity with itself sends every request down FastAPI's own path.
    service.app.dependency_overrides[user_id] = user_id
    standard = [await post(service, body, headers) for body, headers in cases]

    assert fast == standard
    assert [status for status, _ in fast] == [
        200, 200, 422, 422, 200, 422, 404, 401, 422, 422, 422, 404, 404
    ]  # fmt: skip


async def test_an_overridden_identity_is_honoured(
    service: Service, model: OpenAIWireServer
) -> None:
    _, alices = await make_session(service.api, model.base_url, ALICE)
    bobs_agent, bobs = await make_session(service.api, model.base_url, {"X-User-ID": "bob"})

    async def gateway_user() -> str:
        return "bob"

    service.app.dependency_overrides[user_id] = gateway_user
    mine = {"agent_id": bobs_agent, "session_id": bobs, "input": MSG}
    theirs = {"agent_id": bobs_agent, "session_id": alices, "input": MSG}

    assert (await service.api.post("/chat/", json=mine)).status_code == 200
    assert (await service.api.post("/chat/", json=theirs, headers=ALICE)).status_code == 404
    assert await service.runtime.bus.inbox_depth(alices) == 0
