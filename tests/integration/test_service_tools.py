"""Service tools on Ray + Serve: schedule tools behind reset_tools, and a worker's broadcast.

One scripted OpenAI-protocol model plays every agent, deciding from the conversation it is sent.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from actors._remote.scheduler_actor import ensure_scheduler
from tests.integration.conftest import LiveService
from tests.support.api import USER, make_session, post_chat
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.support.sse import read_frames, reply_end_after_text

pytestmark = [pytest.mark.integration, pytest.mark.ray, pytest.mark.redis]

NEVER_DURING_TESTS = "0 0 1 1 *"  # New Year only


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def _last_results(messages: list[dict[str, Any]]) -> dict[str, str]:
    """The tool results that end the conversation, by the called tool's name."""
    names = {
        call["id"]: call["function"]["name"] for m in messages for call in m.get("tool_calls") or []
    }
    results: dict[str, str] = {}
    for message in reversed(messages):
        if message["role"] != "tool":
            break
        results[names[message["tool_call_id"]]] = _text(message)
    return results


def scripted(body: dict[str, Any]) -> ScriptedReply:
    # The runtime-state hints (`<system-reminder>` user turns) are not the conversation.
    messages = [m for m in body["messages"] if not _text(m).startswith("<system-reminder>")]
    tools = {t["function"]["name"] for t in body.get("tools") or []}
    if tools == {"generate_structured_output"}:  # a session title
        return ScriptedReply(tool_calls=[("title", "generate_structured_output", {"title": "x"})])
    system, last = _text(messages[0]), messages[-1]
    done = _last_results(messages)
    if "a member of the team" in system:  # the worker
        if "TeamSay" not in done:
            # The old argument names first: the schema check answers, naming `content`.
            return ScriptedReply(
                tool_calls=[("say-1", "TeamSay", {"to": "Lead", "message": "report"})]
            )
        if "missing required argument" in done["TeamSay"]:
            return ScriptedReply(tool_calls=[("say-2", "TeamSay", {"content": "report: done"})])
        return ScriptedReply(text="reported")
    user = _text(last) if last["role"] == "user" else ""
    if user == "schedule the digest":
        return ScriptedReply(tool_calls=[("rt", "reset_tools", {"schedule_tools": True})])
    if "reset_tools" in done:
        args = {
            "name": "digest",
            "description": "Summarise the news.",
            "cron_expression": NEVER_DURING_TESTS,
        }
        return ScriptedReply(tool_calls=[("sc", "ScheduleCreate", args)])
    if "ScheduleCreate" in done:
        return ScriptedReply(text=f"Scheduled. {done['ScheduleCreate'].splitlines()[1]}")
    if user == "assemble":
        return ScriptedReply(
            tool_calls=[("tc", "TeamCreate", {"name": "crew", "description": "one worker"})]
        )
    if "TeamCreate" in done:
        args = {"name": "w1", "description": "a worker", "prompt": "say hello and report"}
        return ScriptedReply(tool_calls=[("ac", "AgentCreate", args)])
    if "AgentCreate" in done:
        return ScriptedReply(text="Waiting for the report.")
    if '<team-message from="w1">' in _text(last):
        return ScriptedReply(text="Got the report from w1.")
    return ScriptedReply(text="ok")


@pytest.fixture(scope="module")
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer(reply_func=scripted) as server:
        yield server


@pytest.fixture
async def api(live_service: LiveService) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=live_service.base_url, timeout=30) as client:
        yield client


async def test_an_agent_schedules_itself_through_the_schedule_group(
    api: httpx.AsyncClient, model: OpenAIWireServer, live_service: LiveService
) -> None:
    agent_id, session_id = await make_session(api, model.base_url, name="Lead")
    reply = asyncio.create_task(
        read_frames(
            api,
            f"/sessions/{session_id}/stream",
            USER,
            reply_end_after_text("Scheduled."),
            params={"after": "0"},
        )
    )
    assert (await post_chat(api, agent_id, session_id, "schedule the digest")).status_code == 200
    frames = await asyncio.wait_for(reply, 60)

    schedules = (await api.get("/schedule/", headers=USER)).json()
    (schedule,) = [s for s in schedules["schedules"] if s["data"]["name"] == "digest"]
    assert schedule["agent_id"] == agent_id
    assert schedule["data"]["source"] == "AGENT"
    assert schedule["data"]["source_session_id"] == session_id
    assert schedule["data"]["permission_mode"] == "dont_ask"
    said = "".join(f.data["delta"] for f in frames if f.type == "TEXT_BLOCK_DELTA")
    assert said == f"Scheduled. Schedule ID: {schedule['id']}"
    # The session's ScheduleCreate told the scheduler actor, which now times the schedule.
    scheduler = ensure_scheduler(live_service.settings)
    jobs = (await scheduler.ping.remote())["jobs"]
    assert jobs[schedule["id"]] is not None


async def test_a_workers_team_say_without_to_reaches_its_leader(
    api: httpx.AsyncClient, model: OpenAIWireServer
) -> None:
    agent_id, leader = await make_session(api, model.base_url, name="Lead")
    final = asyncio.create_task(
        read_frames(
            api,
            f"/sessions/{leader}/stream",
            USER,
            reply_end_after_text("Got the report from w1."),
            params={"after": "0"},
        )
    )
    assert (await post_chat(api, agent_id, leader, "assemble")).status_code == 200
    frames = await asyncio.wait_for(final, 90)

    (hint,) = [
        f.data
        for f in frames
        if f.type == "HINT_BLOCK" and json.loads(f.data["source"] or "{}").get("label") == "team"
    ]
    assert hint["hint"] == '<team-message from="w1">\nreport: done\n</team-message>'
    assert json.loads(hint["source"]) == {"label": "team", "sublabel": "w1"}
