"""`/schedule/` over HTTP with the scheduler and sessions in-process (real Redis, no Ray)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from actors.client import InProcessDispatcher, RuntimeClient
from actors.settings import RuntimeSettings
from serve.app import build_app
from tests.support import COMPAT_DIR
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.support.schedules import agent_and_model, create_schedule, schedule_body

pytestmark = [pytest.mark.redis]

ALICE = {"X-User-ID": "alice"}
BOB = {"X-User-ID": "bob"}
NO_MODEL = "http://127.0.0.1:9/v1"  # these tests never fire a schedule
RECORDED = json.loads((COMPAT_DIR / "agentscope-openapi.json").read_text())["components"]["schemas"]


@pytest.fixture
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer() as server:
        yield server


@pytest.fixture
async def service(redis_url: str) -> AsyncIterator[tuple[httpx.AsyncClient, RuntimeClient]]:
    settings = RuntimeSettings(redis_url=redis_url)
    app = build_app(lambda: RuntimeClient(settings, InProcessDispatcher(settings)))
    async with app.router.lifespan_context(app):
        runtime: RuntimeClient = app.state.runtime
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            yield client, runtime
        await runtime.schedules.aclose()


@pytest.fixture
def api(service: tuple[httpx.AsyncClient, RuntimeClient]) -> httpx.AsyncClient:
    return service[0]


def assert_recorded_shape(value: dict[str, Any], schema: str) -> None:
    recorded = RECORDED[schema]
    assert set(recorded.get("required", [])) <= set(value) <= set(recorded["properties"])


async def test_crud_round_trip_in_the_recorded_shapes(api: httpx.AsyncClient) -> None:
    agent_id, model = await agent_and_model(api, NO_MODEL)
    schedule_id = await create_schedule(api, schedule_body(agent_id, model))

    listed = (await api.get("/schedule/", headers=ALICE)).json()
    assert listed["total"] == 1
    (record,) = listed["schedules"]
    assert_recorded_shape(record, "ScheduleRecord")
    assert_recorded_shape(record["data"], "ScheduleData")
    assert record["id"] == schedule_id
    assert record["agent_id"] == agent_id
    assert record["data"]["permission_mode"] == "dont_ask"
    assert record["data"]["stateful"] is False
    assert record["data"]["enabled"] is True

    patch = {"enabled": False, "cron_expression": "30 8 * * *", "permission_mode": "explore"}
    response = await api.patch(f"/schedule/{schedule_id}", json=patch, headers=ALICE)
    assert response.status_code == 200, response.text
    updated = response.json()
    assert {k: updated["data"][k] for k in patch} == patch
    assert updated["data"]["timezone"] == "Asia/Shanghai"  # omitted fields keep their values
    assert updated["updated_at"] > record["updated_at"]

    assert (await api.delete(f"/schedule/{schedule_id}", headers=ALICE)).status_code == 204
    assert (await api.get("/schedule/", headers=ALICE)).json() == {"schedules": [], "total": 0}
    assert (await api.delete(f"/schedule/{schedule_id}", headers=ALICE)).status_code == 404


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"cron_expression": "0 9 * *"}, "body"),
        ({"cron_expression": "0 9 * * * *"}, "body"),
        ({"cron_expression": "75 9 * * *"}, "body"),
        ({"cron_expression": "0 9 * * 8"}, "body"),
        ({"timezone": "Mars/Olympus_Mons"}, "body"),
        ({"started_at": "2030-01-02T00:00:00Z", "ended_at": "2030-01-01T00:00:00Z"}, "body"),
        ({"permission_mode": "sometimes"}, "permission_mode"),
        ({"prompt": "extra fields are refused"}, "prompt"),
    ],
)
async def test_invalid_schedules_are_422(
    api: httpx.AsyncClient, fields: dict[str, Any], where: str
) -> None:
    agent_id, model = await agent_and_model(api, NO_MODEL)
    # Who is asking is settled first: without an identity the request is refused as such.
    response = await api.post("/schedule/", json=schedule_body(agent_id, model, **fields))
    assert response.status_code == 401, response.text
    response = await api.post(
        "/schedule/", json=schedule_body(agent_id, model, **fields), headers=ALICE
    )
    assert response.status_code == 422, response.text
    assert any(where in e["loc"] for e in response.json()["detail"])
    assert (await api.get("/schedule/", headers=ALICE)).json()["total"] == 0


async def test_invalid_patches_are_422(api: httpx.AsyncClient) -> None:
    agent_id, model = await agent_and_model(api, NO_MODEL)
    schedule_id = await create_schedule(api, schedule_body(agent_id, model))
    for patch in ({"cron_expression": "every day"}, {"timezone": "Nowhere/Town"}, {"id": "x"}):
        response = await api.patch(f"/schedule/{schedule_id}", json=patch, headers=ALICE)
        assert response.status_code == 422, (patch, response.text)


async def test_other_users_see_nothing(api: httpx.AsyncClient) -> None:
    agent_id, model = await agent_and_model(api, NO_MODEL)
    schedule_id = await create_schedule(api, schedule_body(agent_id, model))
    assert (await api.get("/schedule/", headers=BOB)).json()["total"] == 0
    for method, path, body in (
        ("PATCH", f"/schedule/{schedule_id}", {"enabled": False}),
        ("DELETE", f"/schedule/{schedule_id}", None),
        ("GET", f"/schedule/{schedule_id}/sessions", None),
    ):
        response = await api.request(method, path, json=body, headers=BOB)
        assert response.status_code == 404, response.text
        assert response.json()["error"]["type"] == "ScheduleNotFound"
    on_alices_agent = await api.post("/schedule/", json=schedule_body(agent_id, model), headers=BOB)
    assert on_alices_agent.status_code == 404
    unknown_credential = {**model, "credential_id": "nope"}
    response = await api.post(
        "/schedule/", json=schedule_body(agent_id, unknown_credential), headers=ALICE
    )
    assert response.status_code == 404


async def test_a_fire_runs_the_agent_in_a_session_of_the_schedule(
    service: tuple[httpx.AsyncClient, RuntimeClient], model: OpenAIWireServer
) -> None:
    api, runtime = service
    agent_id, model_config = await agent_and_model(api, model.base_url)
    schedule_id = await create_schedule(api, schedule_body(agent_id, model_config))
    model.push(ScriptedReply(text="Here is your digest."))

    session_id = await runtime.schedules.fire_now("alice", schedule_id)
    assert session_id is not None
    messages = await _until_replied(api, session_id)
    assert messages[-1]["content"][-1]["text"] == "Here is your digest."
    sent = json.dumps(model.requests[0].body["messages"])
    assert '<scheduled-task name=\\"digest\\">\\nSummarise the news.\\n</scheduled-task>' in sent

    listed = (await api.get(f"/schedule/{schedule_id}/sessions", headers=ALICE)).json()
    assert listed["total"] == 1
    (session,) = listed["sessions"]
    assert set(RECORDED["SessionRecord"]["required"]) <= set(session)
    assert session["id"] == session_id
    assert session["origin"] == {"type": "schedule", "schedule_id": schedule_id}
    assert session["config"]["permission_mode"] == "dont_ask"

    assert (await api.delete(f"/schedule/{schedule_id}", headers=ALICE)).status_code == 204
    gone = await api.get(f"/sessions/{session_id}/messages", headers=ALICE)
    assert gone.status_code == 404


async def _until_replied(api: httpx.AsyncClient, session_id: str) -> list[dict[str, Any]]:
    async with asyncio.timeout(20):
        while True:
            page = (await api.get(f"/sessions/{session_id}/messages", headers=ALICE)).json()
            if page["messages"] and not page["is_running"]:
                return list(page["messages"])
            await asyncio.sleep(0.05)
