"""Schedules on Ray + Serve: fires reach session actors, and the scheduler survives a kill -9."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import httpx
import pytest
from ray.exceptions import RayActorError
from redis.asyncio import Redis

from actors._remote.scheduler_actor import ensure_scheduler
from actors.schedules.store import ScheduleData, ScheduleKeys, ScheduleStore
from actors.storage.records import ChatModelConfig
from agent_core.agent import RUNTIME_STATE_SOURCE
from tests.integration.conftest import LiveService
from tests.support.api import USER
from tests.support.openai_server import OpenAIWireServer
from tests.support.schedules import (
    agent_and_model,
    create_schedule,
    fired_session_ids,
    schedule_body,
)
from tests.support.sse import Frame, is_reply_end, read_frames

pytestmark = [pytest.mark.integration, pytest.mark.ray, pytest.mark.redis]

NEVER_DURING_TESTS = "0 0 1 1 *"  # New Year only
T = TypeVar("T")


@pytest.fixture(scope="module")
def scheduler(live_service: LiveService) -> Any:
    """The service's scheduler actor, created up front with a long misfire grace."""
    return ensure_scheduler(live_service.settings, misfire_grace=600)


@pytest.fixture(scope="module")
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer(default_text="Done.") as server:
        yield server


@pytest.fixture
async def api(live_service: LiveService) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=live_service.base_url, timeout=30) as client:
        yield client


async def reply_frames(api: httpx.AsyncClient, session_id: str, after: str = "0") -> list[Frame]:
    path = f"/sessions/{session_id}/stream"
    return await asyncio.wait_for(
        read_frames(api, path, USER, is_reply_end, params={"after": after}), 60
    )


async def until(probe: Callable[[], Awaitable[T]], accept: Callable[[T], bool]) -> T:
    async with asyncio.timeout(60):
        while True:
            value = await probe()
            if accept(value):
                return value
            await asyncio.sleep(0.1)


async def test_stateless_fires_open_a_new_session_that_replies_to_the_task(
    api: httpx.AsyncClient, scheduler: Any, model: OpenAIWireServer
) -> None:
    agent_id, config = await agent_and_model(api, model.base_url)
    body = schedule_body(agent_id, config, cron_expression=NEVER_DURING_TESTS)
    schedule_id = await create_schedule(api, body)

    first = await scheduler.fire_now.remote(schedule_id)
    frames = await reply_frames(api, first)
    hint, runtime_state = [f for f in frames if f.type == "HINT_BLOCK"]
    assert runtime_state.data["source"] == RUNTIME_STATE_SOURCE
    assert hint.data["hint"] == (
        '<scheduled-task name="digest">\nSummarise the news.\n</scheduled-task>'
    )
    assert json.loads(hint.data["source"]) == {"label": "schedule", "sublabel": "digest"}
    assert frames[-1].data["finished_reason"] == "completed"
    assert "".join(f.data["delta"] for f in frames if f.type == "TEXT_BLOCK_DELTA") == "Done."

    second = await scheduler.fire_now.remote(schedule_id)
    assert second != first
    await reply_frames(api, second)
    assert await fired_session_ids(api, schedule_id) == [second, first]
    sessions = (await api.get(f"/schedule/{schedule_id}/sessions", headers=USER)).json()
    for session in sessions["sessions"]:
        assert session["origin"] == {"type": "schedule", "schedule_id": schedule_id}
        assert session["config"]["permission_mode"] == "dont_ask"


async def test_stateful_fires_accumulate_in_one_session(
    api: httpx.AsyncClient, scheduler: Any, model: OpenAIWireServer
) -> None:
    agent_id, config = await agent_and_model(api, model.base_url)
    body = schedule_body(
        agent_id, config, name="memo", stateful=True, cron_expression=NEVER_DURING_TESTS
    )
    schedule_id = await create_schedule(api, body)

    session_id = await scheduler.fire_now.remote(schedule_id)
    first = await reply_frames(api, session_id)
    assert await scheduler.fire_now.remote(schedule_id) == session_id
    second = await reply_frames(api, session_id, after=first[-1].id)
    assert [f.type for f in second].count("HINT_BLOCK") == 1
    assert second[-1].data["finished_reason"] == "completed"
    assert await fired_session_ids(api, schedule_id) == [session_id]
    # The second reply's model call saw the first fire's task and answer.
    last_call = json.dumps(model.requests[-1].body["messages"])
    assert last_call.count('<scheduled-task name=\\"memo\\">') == 2
    assert "Done." in last_call


async def test_a_killed_scheduler_restarts_reloads_and_never_double_fires(
    api: httpx.AsyncClient, scheduler: Any, model: OpenAIWireServer, live_service: LiveService
) -> None:
    agent_id, config = await agent_and_model(api, model.base_url)
    due = datetime.now(UTC).replace(second=0, microsecond=0)
    timing = {
        "cron_expression": f"{due.minute} {due.hour} * * *",  # daily, last due a moment ago
        "timezone": "UTC",
        "started_at": (due - timedelta(hours=1)).isoformat(),
    }
    # Created through the API: the scheduler catches up on the due time at once.
    fired = await create_schedule(api, schedule_body(agent_id, config, name="fired", **timing))
    assert len(await until(lambda: fired_session_ids(api, fired), bool)) == 1
    # Written straight to Redis: only a scheduler (re)loading the records knows about it.
    redis = Redis.from_url(live_service.settings.redis_url)
    store = ScheduleStore(redis, ScheduleKeys(live_service.settings.key_prefix))
    data = ScheduleData.model_validate(
        {**timing, "name": "unseen", "chat_model_config": ChatModelConfig(**config)}
    )
    unseen = (await store.create_schedule("alice", agent_id, data)).id
    await redis.aclose()

    before = await scheduler.ping.remote()
    os.kill(before["pid"], signal.SIGKILL)

    async def ping() -> dict[str, Any]:
        try:
            return dict(await scheduler.ping.remote())
        except RayActorError:
            return before

    await until(ping, lambda p: p["pid"] != before["pid"])
    await scheduler.start.remote()  # returns once the restarted actor has loaded the records
    jobs = (await scheduler.ping.remote())["jobs"]
    tomorrow = (due + timedelta(days=1)).isoformat()
    assert {jobs[fired], jobs[unseen]} == {tomorrow}
    assert len(await fired_session_ids(api, fired)) == 1  # its due time had fired: not again
    # Missed while down: fired once (the catch-up fire may land just after `start` returns).
    (caught_up,) = await until(lambda: fired_session_ids(api, unseen), bool)
    assert await scheduler.fire.remote(fired, due) is None
    assert await scheduler.fire.remote(unseen, due) is None
    frames = await reply_frames(api, caught_up)
    assert any(f.type == "HINT_BLOCK" for f in frames)


@pytest.mark.slow
async def test_a_real_cron_fires_on_the_minute(
    api: httpx.AsyncClient, scheduler: Any, model: OpenAIWireServer
) -> None:
    agent_id, config = await agent_and_model(api, model.base_url)
    body = schedule_body(agent_id, config, name="minutely", cron_expression="* * * * *")
    schedule_id = await create_schedule(api, body)
    (session_id,) = await until(lambda: fired_session_ids(api, schedule_id), bool)
    paused = await api.patch(f"/schedule/{schedule_id}", json={"enabled": False}, headers=USER)
    assert paused.status_code == 200
    frames = await reply_frames(api, session_id)
    started = datetime.fromisoformat(frames[0].data["created_at"])
    assert started.second < 30  # fired at the top of the minute, not by a catch-up later
