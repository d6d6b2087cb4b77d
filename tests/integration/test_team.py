"""A leader spawns five workers on Ray; they report back; TeamDelete leaves nothing behind."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import ray
from ray import serve

from actors.local.embedded_redis import EmbeddedRedis
from agent_core.agent import RUNTIME_STATE_SOURCE
from tests.integration.conftest import LiveService, deploy_service
from tests.support.api import USER, make_session, post_chat, wait_for_status
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.support.ray_actors import home_actor, session_actor_alive
from tests.support.sse import is_reply_end, read_frames, reply_end_after_text

pytestmark = [pytest.mark.integration, pytest.mark.ray, pytest.mark.redis]

WORKERS = [f"w{i}" for i in range(1, 6)]
LEADER_PROMPT = "You lead a crew."


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return content or ""


def _turns(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation without the runtime-state reminders the agent injects."""
    return [m for m in messages if not (m["role"] == "user" and "<current-time>" in _text(m))]


def _tool_names(messages: list[dict[str, Any]]) -> list[str]:
    """Names of the tools whose results end the conversation (the last step's calls)."""
    names: dict[str, str] = {}
    for message in messages:
        for call in message.get("tool_calls") or []:
            names[call["id"]] = call["function"]["name"]
    tail = []
    for message in reversed(messages):
        if message["role"] != "tool":
            break
        tail.append(names[message["tool_call_id"]])
    return tail


def scripted_team(body: dict[str, Any]) -> ScriptedReply:
    """Plays the leader and the workers, deciding from each conversation's last turn."""
    messages = _turns(body["messages"])
    system, last = _text(messages[0]), messages[-1]
    if "a member of the team" in system:  # a worker
        member = system.split()[2].rstrip(",")
        if last["role"] == "tool":
            return ScriptedReply(text="reported")
        return ScriptedReply(
            tool_calls=[
                (f"say-{member}", "TeamSay", {"to": "Lead", "content": f"report: done by {member}"})
            ]
        )
    finished = _tool_names(messages)
    if last["role"] == "user" and _text(last) == "assemble a crew":
        return ScriptedReply(
            tool_calls=[("tc", "TeamCreate", {"name": "crew", "description": "five workers"})]
        )
    if finished == ["TeamCreate"]:
        calls = [
            (
                f"ac-{w}",
                "AgentCreate",
                {"name": w, "description": "a worker", "prompt": f"{w}: say hello and report"},
            )
            for w in WORKERS
        ]
        return ScriptedReply(text="Spawning.", tool_calls=calls)
    if finished and finished[0] == "AgentCreate":
        return ScriptedReply(text="Waiting for reports.")
    if last["role"] == "user" and _text(last) == "dissolve the team":
        return ScriptedReply(tool_calls=[("td", "TeamDelete", {})])
    if finished == ["TeamDelete"]:
        return ScriptedReply(text="Team dissolved.")
    reports = sum(_text(m).count("report: done by") for m in messages if m["role"] == "user")
    return ScriptedReply(text="All 5 workers reported." if reports == 5 else f"{reports} so far.")


CAPPED_CREW = ["w1", "w2", "w3"]
CREATED = re.compile(r"Member '(w\d+)' added")
REPORTED = re.compile(r"report: done by (w\d+)")


def unanswered_calls(messages: list[dict[str, Any]]) -> list[str]:
    """Ids of the tool calls no tool message answers (OpenAI refuses such a request)."""
    answered = {m.get("tool_call_id") for m in messages if m["role"] == "tool"}
    return [
        call["id"]
        for m in messages
        for call in m.get("tool_calls") or []
        if call["id"] not in answered
    ]


def capped_leader_team(body: dict[str, Any]) -> ScriptedReply:
    """A leader that creates one worker per step, on a provider that calls tools even when
    `tool_choice` is `none` and, as OpenAI does, refuses requests with unanswered tool calls.

    The leader counts a worker as created from AgentCreate's successful result, and asks for
    the missing ones again.
    """
    messages = _turns(body["messages"])
    if unanswered_calls(messages):
        error = {"message": "tool_calls without tool messages", "type": "invalid_request_error"}
        return ScriptedReply(status=400, error_body={"error": error})
    if "a member of the team" in _text(messages[0]):
        return scripted_team(body)
    called = {c["function"]["name"] for m in messages for c in m.get("tool_calls") or []}
    if "TeamCreate" not in called:
        return ScriptedReply(
            tool_calls=[("tc", "TeamCreate", {"name": "crew", "description": "3"})]
        )
    results = [_text(m) for m in messages if m["role"] == "tool"]
    created = {name for text in results for name in CREATED.findall(text)}
    missing = [w for w in CAPPED_CREW if w not in created]
    if missing:
        spawn = {"name": missing[0], "description": "a worker", "prompt": "say hello and report"}
        call_id = f"ac-{missing[0]}-{len(messages)}"  # a call made again gets a new id
        return ScriptedReply(tool_calls=[(call_id, "AgentCreate", spawn)])
    users = [_text(m) for m in messages if m["role"] == "user"]
    reported = {name for text in users for name in REPORTED.findall(text)}
    if reported == set(CAPPED_CREW):
        return ScriptedReply(text="All 3 workers reported.")
    return ScriptedReply(text=f"{len(reported)} so far.")


@pytest.fixture(scope="module")
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer(reply_func=scripted_team) as server:
        yield server


@pytest.fixture(scope="module")
def service(ray_local: None, redis_server: EmbeddedRedis) -> Iterator[LiveService]:
    """The API with default settings (sessions packed onto session hosts)."""
    yield deploy_service(redis_server.url)
    serve.shutdown()


@pytest.fixture
async def api(service: LiveService) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=service.base_url, timeout=30) as client:
        yield client


def actor_of(session_id: str, service: LiveService) -> Any:
    return home_actor(service.settings, session_id)


@pytest.mark.parametrize("placement", ["shared-hosts", "dedicated"])
async def test_leader_spawns_five_workers_that_report_back(
    api: httpx.AsyncClient, model: OpenAIWireServer, service: LiveService, placement: str
) -> None:
    # A dedicated agent asks for isolation: its sessions (workers too) get actors of their own.
    dedicated = placement == "dedicated"
    agent_id, leader = await make_session(
        api, model.base_url, name="Lead", system_prompt=LEADER_PROMPT, dedicated_process=dedicated
    )
    final = asyncio.create_task(
        read_frames(
            api,
            f"/sessions/{leader}/stream",
            USER,
            reply_end_after_text("All 5 workers reported."),
            params={"after": "0"},
        )
    )
    assert (await post_chat(api, agent_id, leader, "assemble a crew")).status_code == 200
    frames = await asyncio.wait_for(final, 120)
    hints = [f.data for f in frames if f.type == "HINT_BLOCK"]
    team_hints = [h for h in hints if json.loads(h["source"])["label"] == "team"]
    reporters = {h["hint"].split('from="')[1].split('"')[0] for h in team_hints}
    assert reporters == set(WORKERS)
    # the others tell the leader the runtime state
    assert {h["source"] for h in hints if h not in team_hints} <= {RUNTIME_STATE_SOURCE}
    assert sum(1 for f in frames if f.type == "CUSTOM" and f.data["name"] == "team_updated") == 6

    views = (await api.get("/sessions/", headers=USER)).json()["sessions"]
    sessions = [view["session"] for view in views]
    workers = [s for s in sessions if s.get("team_id") and s["id"] != leader]
    assert sorted(s["config"]["name"] for s in workers) == WORKERS
    for worker in workers:
        await wait_for_status(api, worker["id"], "idle")
        history = (await api.get(f"/sessions/{worker['id']}/messages", headers=USER)).json()
        assert history["messages"][-1]["content"][-1]["text"] == "reported"
    hosts = {ray.get(actor_of(w["id"], service).pid.remote()) for w in workers}
    if dedicated:
        assert len(hosts) == 5  # an actor of its own each
    else:
        assert len(hosts) == 1  # the workers share the warm host of the only node

    await wait_for_status(api, leader, "idle")
    done = asyncio.create_task(
        read_frames(
            api, f"/sessions/{leader}/stream", USER, reply_end_after_text("Team dissolved.")
        )
    )
    await asyncio.sleep(0.2)
    assert (await post_chat(api, agent_id, leader, "dissolve the team")).status_code == 200
    await asyncio.wait_for(done, 60)
    for worker in workers:
        status = await api.get(f"/sessions/{worker['id']}/status", headers=USER)
        assert status.status_code == 404
        assert not session_actor_alive(worker["id"])
    leader_record = next(
        view["session"]
        for view in (await api.get("/sessions/", headers=USER)).json()["sessions"]
        if view["session"]["id"] == leader
    )
    assert leader_record["team_id"] is None
    assert leader_record["membership"] is None


async def test_a_killed_session_process_resumes_the_cut_reply(
    api: httpx.AsyncClient, model: OpenAIWireServer, service: LiveService
) -> None:
    agent_id, session_id = await make_session(api, model.base_url)
    model.push(ScriptedReply(text="never", delay=30), ScriptedReply(text="Resumed."))
    stream = asyncio.create_task(
        read_frames(
            api, f"/sessions/{session_id}/stream", USER, is_reply_end, params={"after": "0"}
        )
    )
    assert (await post_chat(api, agent_id, session_id, "work")).status_code == 200
    await wait_for_status(api, session_id, "running")
    os.kill(ray.get(actor_of(session_id, service).pid.remote()), signal.SIGKILL)
    frames = await asyncio.wait_for(stream, 60)
    # The restarted host continues the same reply: one start, one end, completed.
    assert [f.data["type"] for f in frames].count("REPLY_START") == 1
    assert frames[-1].data["finished_reason"] == "completed"
    assert frames[-1].data["reply_id"] == frames[0].data["reply_id"]
    await wait_for_status(api, session_id, "idle")


async def test_a_leader_at_its_iteration_limit_still_gets_every_worker(
    api: httpx.AsyncClient,
) -> None:
    # The leader's replies end after two steps; the step forced to answer in text calls
    # AgentCreate all the same. That call is answered as not executed, so the leader makes it
    # again in its next reply (woken by a report) and its requests stay well-formed.
    with OpenAIWireServer(reply_func=capped_leader_team) as model:
        agent_id, leader = await make_session(
            api,
            model.base_url,
            name="Lead",
            system_prompt=LEADER_PROMPT,
            chat_config={"react_config": {"max_iters": 2}},
        )
        final = asyncio.create_task(
            read_frames(
                api,
                f"/sessions/{leader}/stream",
                USER,
                reply_end_after_text("All 3 workers reported."),
                params={"after": "0"},
            )
        )
        assert (await post_chat(api, agent_id, leader, "assemble a crew")).status_code == 200
        frames = await asyncio.wait_for(final, 90)
        refused = [r for r in model.requests if unanswered_calls(r.body["messages"])]

    ends = [f.data for f in frames if f.type == "REPLY_END"]
    assert "exceed_max_iters" in {end["finished_reason"] for end in ends}
    assert all(end["error"] is None for end in ends), ends
    assert refused == []
    deltas = "".join(str(f.data.get("delta", "")) for f in frames)
    assert "Not executed: this reply reached its limit of 2" in deltas
