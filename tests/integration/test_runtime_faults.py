"""Faults: a session's process killed mid-reply, Redis restarted under load, idling, control."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
import ray
from ray import serve

from actors.bus.keys import Keys
from actors.bus.redis_connect import connect
from actors.local.embedded_redis import EmbeddedRedis
from actors.sessions.hosts import session_actor_name
from tests.integration.conftest import LiveService, deploy_service
from tests.support.api import (
    USER,
    chat_and_collect,
    make_session,
    post_chat,
    wait_for_status,
)
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.support.ray_actors import (
    home_pid,
    session_actor_alive,
    wait_until_gone,
    wait_until_unplaced,
)
from tests.support.sse import Frame, is_reply_end, read_frames, reply_end_after_text

pytestmark = [pytest.mark.integration, pytest.mark.ray, pytest.mark.redis]


@pytest.fixture(scope="module")
def own_redis() -> Iterator[EmbeddedRedis]:
    """A Redis this module may restart (persistence on)."""
    with EmbeddedRedis(persistence=True) as server:
        yield server


@pytest.fixture(scope="module")
def service(ray_local: None, own_redis: EmbeddedRedis) -> Iterator[LiveService]:
    yield deploy_service(
        own_redis.url, sweep_interval=0.5, idle_ttl=2.0, max_live_sessions=3, tool_timeout=1.0
    )
    serve.shutdown()


@pytest.fixture(scope="module")
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer() as server:
        yield server


@pytest.fixture
async def api(service: LiveService) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=service.base_url, timeout=30) as client:
        yield client


async def messages(api: httpx.AsyncClient, session_id: str) -> list[dict[str, object]]:
    page = await api.get(f"/sessions/{session_id}/messages?limit=200", headers=USER)
    assert page.status_code == 200, page.text
    return list(page.json()["messages"])


@pytest.mark.parametrize(
    ("when", "dedicated"),
    [("during-model-call", False), ("between-steps", False), ("during-model-call", True)],
)
async def test_killed_actor_resumes_the_reply_and_loses_nothing(
    api: httpx.AsyncClient,
    model: OpenAIWireServer,
    service: LiveService,
    when: str,
    dedicated: bool,
) -> None:
    agent_id, session_id = await make_session(api, model.base_url, dedicated_process=dedicated)
    if when == "during-model-call":
        model.push(ScriptedReply(text="never finished", delay=30))
    else:
        model.push(
            ScriptedReply(text="Checking. ", tool_calls=[("c1", "get_current_time", {})]),
            ScriptedReply(text="never finished", delay=30),
        )
    stream = asyncio.create_task(
        read_frames(
            api, f"/sessions/{session_id}/stream", USER, is_reply_end, params={"after": "0"}
        )
    )
    assert (await post_chat(api, agent_id, session_id, "work")).status_code == 200
    expected_requests = 1 if when == "during-model-call" else 2
    await asyncio.to_thread(model.wait_for_requests, len(model.requests) + expected_requests, 30)
    await wait_for_status(api, session_id, "running")
    model.push(ScriptedReply(text="Done after all."))
    os.kill(home_pid(service.settings, session_id), signal.SIGKILL)

    # The restarted actor continues the same reply on the same stream.
    frames = await asyncio.wait_for(stream, 60)
    assert [f.data["type"] for f in frames].count("REPLY_START") == 1
    end = frames[-1].data
    assert end["finished_reason"] == "completed"
    assert end["reply_id"] == frames[0].data["reply_id"]
    await wait_for_status(api, session_id, "idle")
    history = await messages(api, session_id)
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert history[1]["id"] == frames[0].data["reply_id"]
    texts = "".join(b["text"] for b in history[1]["content"] if b["type"] == "text")
    assert texts.endswith("Done after all.")
    if when == "between-steps":
        results = [b for b in history[1]["content"] if b["type"] == "tool_result"]
        assert [r["state"] for r in results] == ["success"]
    doctor = await api.get(f"/sessions/{session_id}/doctor", headers=USER)
    assert doctor.json()["violations"] == []

    # The restarted actor serves the next turn and keeps the conversation.
    model.push(ScriptedReply(text="back again"))
    (frames,) = await chat_and_collect(api, agent_id, session_id, "still there?")
    assert frames[-1].data["finished_reason"] == "completed"
    assert [m["role"] for m in await messages(api, session_id)] == ["user", "assistant"] * 2
    last_request = model.requests[-1].body["messages"]
    assert any(m.get("content") == "work" for m in last_request if m["role"] == "user")


async def test_hibernated_session_reactivates_with_its_conversation(
    api: httpx.AsyncClient, model: OpenAIWireServer, service: LiveService
) -> None:
    agent_id, session_id = await make_session(api, model.base_url, dedicated_process=True)
    model.push(ScriptedReply(text="first answer"))
    await chat_and_collect(api, agent_id, session_id, "remember the word kiwi")
    first_pid = home_pid(service.settings, session_id)

    assert await wait_until_gone(session_id)  # idle_ttl is 2 s; checked every 0.5 s

    model.push(ScriptedReply(text="kiwi"))
    (frames,) = await chat_and_collect(api, agent_id, session_id, "what was the word?")
    assert frames[-1].data["finished_reason"] == "completed"
    assert home_pid(service.settings, session_id) != first_pid
    sent = model.requests[-1].body["messages"]
    assert any("kiwi" in str(m.get("content")) for m in sent if m["role"] == "user")


async def test_an_idle_session_leaves_its_host_and_comes_back_with_its_conversation(
    api: httpx.AsyncClient, model: OpenAIWireServer, service: LiveService
) -> None:
    agent_id, session_id = await make_session(api, model.base_url)
    model.push(ScriptedReply(text="first answer"))
    await chat_and_collect(api, agent_id, session_id, "remember the word plum")
    host_pid = home_pid(service.settings, session_id)

    # idle_ttl is 2 s: the host closes the session and gives up its placement, staying up.
    assert await wait_until_unplaced(service.settings, session_id)

    model.push(ScriptedReply(text="plum"))
    (frames,) = await chat_and_collect(api, agent_id, session_id, "what was the word?")
    assert frames[-1].data["finished_reason"] == "completed"
    assert home_pid(service.settings, session_id) == host_pid  # the only host, still warm
    sent = model.requests[-1].body["messages"]
    assert any("plum" in str(m.get("content")) for m in sent if m["role"] == "user")


async def test_interrupt_and_patch_while_running(
    api: httpx.AsyncClient, model: OpenAIWireServer
) -> None:
    agent_id, session_id = await make_session(api, model.base_url)
    model.push(ScriptedReply(text="slow", delay=30))
    stream = asyncio.create_task(
        read_frames(
            api, f"/sessions/{session_id}/stream", USER, is_reply_end, params={"after": "0"}
        )
    )
    assert (await post_chat(api, agent_id, session_id, "go")).status_code == 200
    await wait_for_status(api, session_id, "running")
    patch = await api.patch(f"/sessions/{session_id}", json={"name": "x"}, headers=USER)
    assert patch.status_code == 409

    interrupted = await api.post(f"/sessions/{session_id}/interrupt", headers=USER)
    assert interrupted.status_code == 202
    assert interrupted.json() == {"session_id": session_id}
    frames = await asyncio.wait_for(stream, 30)
    assert frames[-1].data["finished_reason"] == "interrupted"
    assert "USER_INTERRUPT" in [f.type for f in frames]
    await wait_for_status(api, session_id, "idle")
    again = await api.post(f"/sessions/{session_id}/interrupt", headers=USER)
    assert again.status_code == 202  # idempotent when idle

    patched = await api.patch(
        f"/sessions/{session_id}",
        json={"name": "renamed", "permission_mode": "dont_ask"},
        headers=USER,
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["config"]["name"] == "renamed"
    assert patched.json()["config"]["permission_mode"] == "dont_ask"


async def test_delete_cascades_and_stops_the_actor(
    api: httpx.AsyncClient, model: OpenAIWireServer, service: LiveService
) -> None:
    agent_id, session_id = await make_session(api, model.base_url, dedicated_process=True)
    model.push(ScriptedReply(text="hi"))
    await chat_and_collect(api, agent_id, session_id, "hello")
    assert (await api.delete(f"/sessions/{session_id}", headers=USER)).status_code == 204
    assert (await api.get(f"/sessions/{session_id}/messages", headers=USER)).status_code == 404
    assert (await api.get(f"/sessions/{session_id}/status", headers=USER)).status_code == 404
    with pytest.raises(ValueError, match="Failed to look up actor"):
        ray.get_actor(session_actor_name(session_id), namespace="troupe-test")


async def test_redis_restart_under_load_loses_no_acknowledged_item(
    api: httpx.AsyncClient, model: OpenAIWireServer, own_redis: EmbeddedRedis
) -> None:
    agent_id, session_id = await make_session(api, model.base_url)
    model.reply_func = lambda body: ScriptedReply(text="ack")
    acknowledged: list[str] = []
    outage_health: list[dict[str, object]] = []

    async def load() -> None:
        for index in range(40):
            text = f"item-{index}"
            try:
                response = await post_chat(api, agent_id, session_id, text)
            except httpx.HTTPError:
                continue
            if response.status_code == 200:
                acknowledged.append(text)
            else:
                assert response.status_code == 503, response.text
            await asyncio.sleep(0.05)

    restarted_ms: list[int] = []

    async def restart() -> None:
        await asyncio.sleep(0.5)
        own_redis.stop()
        health = await api.get("/health")
        outage_health.append(health.json())
        await asyncio.sleep(1.0)
        own_redis.start()
        restarted_ms.append(int(time.time() * 1000))

    def after_restart(frame: Frame) -> bool:
        return (
            frame.type == "REPLY_END"
            and bool(restarted_ms)
            and int(frame.id.split("-")[0]) > restarted_ms[0]
        )

    # A subscriber that was listening before the outage keeps receiving after it.
    survivor = asyncio.create_task(
        read_frames(
            api, f"/sessions/{session_id}/stream", USER, after_restart, params={"after": "0"}
        )
    )

    try:
        await asyncio.gather(load(), restart())
    finally:
        if not own_redis.running:
            own_redis.start()
        model.reply_func = None
    assert outage_health[0]["status"] == "degraded"
    assert outage_health[0]["components"]["redis"] != "ok"  # type: ignore[index]
    assert acknowledged

    deadline = asyncio.get_running_loop().time() + 60
    while True:
        history = await messages(api, session_id)
        seen = {b["text"] for m in history if m["role"] == "user" for b in m["content"]}  # type: ignore[index,union-attr]
        idle = (await api.get(f"/sessions/{session_id}/status", headers=USER)).json()
        if set(acknowledged) <= seen and idle["status"] == "idle":
            break
        assert asyncio.get_running_loop().time() < deadline, sorted(set(acknowledged) - seen)
        await asyncio.sleep(0.5)
    assert (await api.get("/health")).json()["status"] == "ok"
    assert history[-1]["role"] == "assistant"
    frames = await asyncio.wait_for(survivor, 60)
    assert frames[-1].type == "REPLY_END"
    # Nothing answered twice, no reply left open or ended twice, no error answers.
    doctor = (await api.get(f"/sessions/{session_id}/doctor", headers=USER)).json()
    assert (doctor["violations"], doctor["errors"]) == ([], 0)


async def test_live_actor_cap_hibernates_the_least_recently_used(
    api: httpx.AsyncClient, model: OpenAIWireServer, service: LiveService
) -> None:
    sessions = [await make_session(api, model.base_url, dedicated_process=True) for _ in range(4)]
    for agent_id, session_id in sessions:
        model.push(ScriptedReply(text="hi"))
        await chat_and_collect(api, agent_id, session_id, "hello")
    oldest = sessions[0][1]
    assert await wait_until_gone(oldest)
    assert session_actor_alive(sessions[-1][1])
    # The hibernated session comes back on its next delivery, conversation intact.
    model.push(ScriptedReply(text="back"))
    (frames,) = await chat_and_collect(api, sessions[0][0], oldest, "again")
    assert frames[-1].data["finished_reason"] == "completed"
    assert len(await messages(api, oldest)) == 4


async def test_slow_tool_finishes_in_the_background_and_wakes_the_session(
    api: httpx.AsyncClient, model: OpenAIWireServer, service: LiveService
) -> None:
    agent_id, session_id = await make_session(api, model.base_url)
    patch = await api.patch(
        f"/sessions/{session_id}", json={"permission_mode": "bypass"}, headers=USER
    )
    assert patch.status_code == 200
    # The call outlives the session's idle TTL (2 s): hibernation must wait for it.
    model.push(
        ScriptedReply(tool_calls=[("bg1", "Bash", {"command": "sleep 5; echo slept"})]),
        ScriptedReply(text="It runs in the background."),
        ScriptedReply(text="The command finished."),
    )
    path = f"/sessions/{session_id}/stream"
    stream = asyncio.create_task(
        read_frames(
            api, path, USER, reply_end_after_text("The command finished."), params={"after": "0"}
        )
    )
    assert (await post_chat(api, agent_id, session_id, "run it")).status_code == 200
    frames = await asyncio.wait_for(stream, 60)
    first_end = next(i for i, f in enumerate(frames) if f.type == "REPLY_END")
    placeholder = "".join(
        f.data["delta"] for f in frames[:first_end] if f.type == "TOOL_RESULT_TEXT_DELTA"
    )
    assert "running in background" in placeholder
    hint = next(f.data for f in frames[first_end:] if f.type == "HINT_BLOCK")
    assert "slept" in hint["hint"]
    assert json.loads(hint["source"])["label"] == "tool_output"
    # Its result arrived: nothing is left for a restart to settle.
    redis = connect(service.settings.redis_url)
    try:
        keys = Keys(service.settings.key_prefix)
        assert await redis.hlen(keys.background(session_id)) == 0
    finally:
        await redis.aclose()
