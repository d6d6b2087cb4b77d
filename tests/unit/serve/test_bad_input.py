"""Bad input never wedges a session nor answers 500 (real Redis, sessions in-process).

Each case is one found by hand against the API: deep nesting, lone surrogates, ids with key
suffixes, huge strings, a server-side relative skill path, a poison inbox item.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.unit.serve._service import Service

pytestmark = pytest.mark.redis

ALICE = {"X-User-ID": "alice"}
BOB = {"X-User-ID": "bob"}
TEN_MB = 10 * 1024 * 1024


@pytest.fixture
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer(reply_func=lambda _: ScriptedReply(text="Sure.")) as server:
        yield server


def nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"a": value}
    return value


def user_msg(text: str, **extra: Any) -> dict[str, Any]:
    return {"name": "user", "role": "user", "content": [{"type": "text", "text": text}], **extra}


async def post_raw(api: httpx.AsyncClient, path: str, text: str) -> httpx.Response:
    """POST a JSON text as is (httpx cannot encode a lone surrogate itself)."""
    headers = {**ALICE, "content-type": "application/json"}
    return await api.post(path, content=text.encode(), headers=headers)


async def agent_and_session(
    api: httpx.AsyncClient, config: dict[str, Any] | None = None
) -> tuple[str, str]:
    created = await api.post("/agent/", json={"name": "A"}, headers=ALICE)
    agent_id = created.json()["agent_id"]
    body: dict[str, Any] = {"agent_id": agent_id}
    if config is not None:
        body["chat_model_config"] = config
    session = await api.post("/sessions/", json=body, headers=ALICE)
    assert session.status_code == 201, session.text
    return agent_id, session.json()["session_id"]


async def model_config(api: httpx.AsyncClient, base_url: str) -> dict[str, Any]:
    data = {"type": "openai_credential", "api_key": "sk-test", "base_url": base_url}
    created = await api.post("/credential/", json={"data": data}, headers=ALICE)
    credential_id = created.json()["credential_id"]
    return {"type": "openai_credential", "credential_id": credential_id, "model": "gpt-4o-mini"}


def refused(response: httpx.Response, status: int, field: str) -> None:
    """The response refuses the body with `status`, naming `field` (a dotted path prefix)."""
    assert response.status_code == status, response.text
    body = response.json()
    assert field in body["error"]["message"], body["error"]["message"]


async def assert_user_can_clean_up(api: httpx.AsyncClient) -> None:
    agents = await api.get("/agent/", headers=ALICE)
    sessions = await api.get("/sessions/", headers=ALICE)
    assert agents.status_code == sessions.status_code == 200
    for session in sessions.json()["sessions"]:
        gone = await api.delete(f"/sessions/{session['session']['id']}", headers=ALICE)
        assert gone.status_code == 204
    for agent in agents.json()["agents"]:
        assert (await api.delete(f"/agent/{agent['id']}", headers=ALICE)).status_code == 204


async def test_deeply_nested_chat_metadata_is_refused_naming_the_field(service: Service) -> None:
    api = service.api
    agent_id, session_id = await agent_and_session(api)
    body = {"agent_id": agent_id, "session_id": session_id}
    deep = await api.post(
        "/chat/", json={**body, "input": user_msg("hi", metadata=nested(200))}, headers=ALICE
    )
    refused(deep, 422, "body.input.metadata.a")
    assert deep.json()["detail"][0]["type"] == "too_deep"
    assert await service.runtime.bus.inbox_depth(session_id) == 0
    status = await api.get(f"/sessions/{session_id}/status", headers=ALICE)
    assert status.json()["status"] == "idle"


async def test_nesting_past_the_parsers_recursion_limit_is_a_422(service: Service) -> None:
    text = '{"name": "A", "system_prompt": ' + "[" * 100_000 + "]" * 100_000 + "}"
    refused(await post_raw(service.api, "/agent/", text), 422, "nested deeper")


@pytest.mark.parametrize("levels", [220, 900])
async def test_deep_parameters_and_summary_schema_are_refused_and_cleanup_works(
    service: Service, levels: int
) -> None:
    api = service.api
    schema = {"name": "A", "chat_config": {"context_config": {"summary_schema": nested(levels)}}}
    refused(await api.post("/agent/", json=schema, headers=ALICE), 422, "summary_schema")
    agent_id, session_id = await agent_and_session(api)
    config = {"type": "openai_credential", "credential_id": "c1", "model": "m"}
    params = {"chat_model_config": {**config, "parameters": nested(levels)}}
    patched = await api.patch(f"/sessions/{session_id}", json=params, headers=ALICE)
    refused(patched, 422, "body.chat_model_config.parameters")
    created = await api.post("/sessions/", json={"agent_id": agent_id, **params}, headers=ALICE)
    refused(created, 422, "parameters")
    await assert_user_can_clean_up(api)


@pytest.mark.parametrize(
    ("path", "text", "field"),
    [
        ("/agent/", '{"name": "A", "system_prompt": "\\ud800"}', "body.system_prompt"),
        ("/agent/", '{"name": "\\udfff"}', "body.name"),
        (
            "/credential/",
            '{"data": {"type": "openai_credential", "api_key": "x\\ud800"}}',
            "api_key",
        ),
    ],
)
async def test_lone_surrogates_are_a_422_naming_the_field(
    service: Service, path: str, text: str, field: str
) -> None:
    response = await post_raw(service.api, path, text)
    refused(response, 422, field)
    assert response.json()["detail"][0]["type"] == "lone_surrogate"


async def test_small_bodies_just_over_a_bound_are_refused(service: Service) -> None:
    # 33 containers: one level past the bound, in a body far below every size bound.
    deep = '{"name": "A", "system_prompt": ' + "[" * 32 + "]" * 32 + "}"
    refused(await post_raw(service.api, "/agent/", deep), 422, "nested deeper")
    # A surrogate spelled in raw bytes (no escape) still decodes as one.
    raw = b'{"name": "\xed\xa0\x80"}'
    headers = {**ALICE, "content-type": "application/json"}
    response = await service.api.post("/agent/", content=raw, headers=headers)
    refused(response, 422, "body.name")
    assert response.json()["detail"][0]["type"] == "lone_surrogate"


async def test_lone_surrogates_in_chat_metadata_and_parameters_are_refused(
    service: Service,
) -> None:
    api = service.api
    agent_id, session_id = await agent_and_session(api)
    msg = json.dumps(user_msg("hi", metadata={"k": "SURROGATE"}))
    text = json.dumps({"agent_id": agent_id, "session_id": session_id, "input": "MSG"})
    text = text.replace('"MSG"', msg).replace("SURROGATE", "\\ud800")
    refused(await post_raw(api, "/chat/", text), 422, "body.input.metadata.k")
    params = (
        '{"chat_model_config": {"type": "openai_credential", "credential_id": "c1", '
        '"model": "m", "parameters": {"\\ud800": 1}}}'
    )
    headers = {**ALICE, "content-type": "application/json"}
    patched = await api.patch(f"/sessions/{session_id}", content=params.encode(), headers=headers)
    refused(patched, 422, "parameters")


@pytest.mark.parametrize("suffix", [":state", ":events", ":inbox", ":lease", ":run", ":messages"])
async def test_ids_with_key_suffixes_are_refused_for_everyone_alike(
    service: Service, suffix: str
) -> None:
    api = service.api
    agent_id, session_id = await agent_and_session(api)
    for user in (ALICE, BOB):
        for path in (
            f"/sessions/{session_id}{suffix}/status",
            f"/sessions/{session_id}{suffix}/messages",
        ):
            response = await api.get(path, headers=user)
            assert response.status_code == 422, (path, response.text)
            assert response.json()["error"]["type"] == "InvalidId"
    answers = [
        await api.delete(f"/sessions/{session_id}{suffix}", headers=ALICE),
        await api.delete(f"/agent/{agent_id}{suffix}", headers=ALICE),
        await api.post(
            "/chat/",
            json={"agent_id": agent_id, "session_id": f"{session_id}{suffix}", "input": None},
            headers=ALICE,
        ),
    ]
    assert [a.status_code for a in answers] == [422, 422, 422]
    assert (await api.get(f"/sessions/{session_id}/status", headers=ALICE)).status_code == 200


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/agent/", {"name": "A", "system_prompt": "x" * TEN_MB}, "body.system_prompt"),
        (
            "/credential/",
            {"data": {"type": "openai_credential", "api_key": "k" * TEN_MB}},
            "body.data.api_key",
        ),
    ],
)
async def test_ten_megabyte_fields_are_a_413_naming_the_field(
    service: Service, path: str, body: dict[str, Any], field: str
) -> None:
    refused(await service.api.post(path, json=body, headers=ALICE), 413, field)


async def test_a_ten_megabyte_chat_message_is_a_413(service: Service) -> None:
    api = service.api
    agent_id, session_id = await agent_and_session(api)
    body = {"agent_id": agent_id, "session_id": session_id, "input": user_msg("x" * TEN_MB)}
    refused(await api.post("/chat/", json=body, headers=ALICE), 413, "body.input.content.0.text")
    assert await service.runtime.bus.inbox_depth(session_id) == 0


async def test_a_body_of_too_many_values_is_a_413(service: Service) -> None:
    body = {"name": "A", "system_prompt": "p", "react_config": {"x": [0] * 100_001}}
    response = await service.api.post("/agent/", json=body, headers=ALICE)
    refused(response, 413, "body.react_config.x")
    assert response.json()["detail"][0]["type"] == "too_many_values"


async def test_a_body_over_the_limit_is_a_413_before_it_is_read(service: Service) -> None:
    body = b'{"name": "' + b"x" * (17 * 1024 * 1024) + b'"}'
    headers = {**ALICE, "content-type": "application/json"}
    response = await service.api.post("/agent/", content=body, headers=headers)
    assert response.status_code == 413
    assert response.json()["error"]["type"] == "RequestTooLarge"


async def test_a_relative_skill_path_is_refused_without_resolving_it(service: Service) -> None:
    api = service.api
    agent_id, session_id = await agent_and_session(api)
    query = {"agent_id": agent_id, "session_id": session_id}
    for path in ("skills/mine", ".", "../etc"):
        response = await api.post(
            "/workspace/skill", params=query, json={"skill_path": path}, headers=ALICE
        )
        refused(response, 422, "skill_path")
        assert os.getcwd() not in response.text


async def test_a_poison_inbox_item_is_set_aside_and_the_session_goes_on(
    service: Service, model: OpenAIWireServer
) -> None:
    api = service.api
    agent_id, session_id = await agent_and_session(api, await model_config(api, model.base_url))
    # An item no parser reads back, as an older server without edge limits stored it.
    poison = json.dumps({"type": "chat", "item_id": "p1", "input": [user_msg("x")]})
    poison = poison.replace('"x"', "[" * 300 + "]" * 300)
    bus = service.runtime.bus
    await bus.redis.xadd(bus.keys.inbox(session_id), {"i": poison})
    body = {"agent_id": agent_id, "session_id": session_id, "input": user_msg("hello")}
    assert (await api.post("/chat/", json=body, headers=ALICE)).status_code == 200
    await asyncio.wait_for(service.dispatcher.runtime(session_id).wait_idle(), 15)

    page = (await api.get(f"/sessions/{session_id}/messages", headers=ALICE)).json()
    replies = [m for m in page["messages"] if m["role"] == "assistant"]
    assert len(replies) == 2
    error_reply, answer = replies
    assert "set aside" in json.dumps(error_reply)
    assert "Sure." in json.dumps(answer)
    assert await bus.inbox_depth(session_id) == 0
    dead = await bus.redis.xrange(bus.keys.dead_letters(session_id))
    assert len(dead) == 1
    assert dead[0][1][b"i"].decode() == poison
    status = await api.get(f"/sessions/{session_id}/status", headers=ALICE)
    assert status.json()["status"] == "idle"


async def test_an_item_that_keeps_failing_is_set_aside_after_three_drains(
    service: Service, model: OpenAIWireServer
) -> None:
    api = service.api
    agent_id, session_id = await agent_and_session(api, await model_config(api, model.base_url))
    runtime = service.runtime
    agent_key = runtime.storage.keys.agent(agent_id)
    record = await runtime.redis.get(agent_key)
    await runtime.redis.set(agent_key, "{broken")  # every reply to the session fails now
    body = {"agent_id": agent_id, "session_id": session_id, "input": user_msg("hello")}
    assert (await api.post("/chat/", json=body, headers=ALICE)).status_code == 200
    session = service.dispatcher.runtime(session_id)
    await asyncio.wait_for(session.wait_idle(), 15)
    for _ in range(3):  # the sweeper's re-wakes
        assert await runtime.bus.inbox_depth(session_id) == 1
        await service.dispatcher.wake(session_id)
        await asyncio.wait_for(session.wait_idle(), 15)
    assert await runtime.bus.inbox_depth(session_id) == 0
    dead = await runtime.redis.xrange(runtime.bus.keys.dead_letters(session_id))
    assert [fields[b"reason"] for _, fields in dead] == [b"processing it failed 3 times"]

    await runtime.redis.set(agent_key, record)
    body["input"] = user_msg("again")
    assert (await api.post("/chat/", json=body, headers=ALICE)).status_code == 200
    await asyncio.wait_for(session.wait_idle(), 15)
    page = (await api.get(f"/sessions/{session_id}/messages", headers=ALICE)).json()
    texts = [json.dumps(m) for m in page["messages"]]
    assert len(texts) == 3
    assert "processing it failed 3 times" in texts[0]
    assert '"again"' in texts[1]
    assert "Sure." in texts[2]
