"""A session owner that dies mid-reply: its successor continues the reply on the same stream.

The "crash" replaces the session's in-process runtime by a new one (which takes the lease)
before the old one is torn down, so nothing the old one does afterwards reaches Redis.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from actors.bus.redis_connect import connect
from actors.client import InProcessDispatcher, RedisMessageBus
from actors.settings import RuntimeSettings
from serve import create_app
from serve.client import Event, ModelChoice, TroupeClient
from tests.support.asgi_server import served
from tests.support.openai_server import OpenAIWireServer, ScriptedReply

pytestmark = [pytest.mark.redis]


class CrashingDispatcher(InProcessDispatcher):
    """In-process sessions that can be replaced by a fresh owner, as after a crash."""

    async def crash(self, session_id: str) -> None:
        old = self._runtimes.pop(session_id)
        await self.wake(session_id)  # the successor takes the lease and recovers
        await old.close()  # whatever the old owner still tries to write is fenced


@pytest.fixture
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer() as server:
        yield server


@pytest.fixture
async def service(redis_url: str) -> AsyncIterator[tuple[TroupeClient, CrashingDispatcher]]:
    settings = RuntimeSettings(redis_url=redis_url, tool_timeout=60)
    app = create_app(settings=settings, dispatcher=CrashingDispatcher)
    async with served(app) as base_url, TroupeClient(base_url, user=f"u-{uuid.uuid4().hex}") as c:
        yield c, app.state.runtime.dispatcher


async def new_session(troupe: TroupeClient, model: OpenAIWireServer) -> tuple[str, str]:
    agent_id = await troupe.create_agent("Friday")
    credential_id = await troupe.add_credential(
        {"type": "openai_credential", "api_key": "sk-test", "base_url": model.base_url}
    )
    choice = ModelChoice(credential_id=credential_id, model="gpt-test")
    return agent_id, await troupe.create_session(agent_id, choice, name="test")


async def wait_for_status(troupe: TroupeClient, session_id: str, status: str) -> None:
    async with asyncio.timeout(30):
        while (await troupe.session_status(session_id)).status != status:  # noqa: ASYNC110
            await asyncio.sleep(0.05)


async def reply_events(
    troupe: TroupeClient, session_id: str, events: list[Event] | None = None
) -> list[Event]:
    events = [] if events is None else events
    async for event in troupe.events(session_id, after="0"):
        events.append(event)
        if event.type == "REPLY_END":
            return events
    return events


async def test_a_reply_cut_between_steps_continues_with_the_same_id(
    service: tuple[TroupeClient, CrashingDispatcher], model: OpenAIWireServer
) -> None:
    troupe, dispatcher = service
    agent_id, session_id = await new_session(troupe, model)
    model.push(
        ScriptedReply(text="Checking. ", tool_calls=[("c1", "get_current_time", {})]),
        ScriptedReply(text="never finished", delay=60),
    )
    stream = asyncio.create_task(reply_events(troupe, session_id))
    await troupe.send(agent_id, session_id, "what time is it?")
    await asyncio.to_thread(model.wait_for_requests, 2, 30)

    model.push(ScriptedReply(text="It is noon."))
    await dispatcher.crash(session_id)
    events = await asyncio.wait_for(stream, 60)

    types = [e.type for e in events]
    assert types.count("REPLY_START") == 1
    assert types.count("REPLY_END") == 1
    assert events[-1].data["finished_reason"] == "completed"
    assert {e.reply_id for e in events if e.reply_id} == {events[0].reply_id}
    transcript = await troupe.transcript(session_id)
    user, reply = transcript.messages
    assert (user["role"], reply["role"], reply["id"]) == ("user", "assistant", events[0].reply_id)
    results = [b for b in reply["content"] if b["type"] == "tool_result"]
    assert [r["state"] for r in results] == ["success"]
    texts = "".join(b["text"] for b in reply["content"] if b["type"] == "text")
    assert texts.endswith("It is noon.")
    # The continuation saw the tool result; the input was fed to the model once.
    last = model.requests[-1].body["messages"]
    assert str(last).count("what time is it?") == 1
    assert any(m["role"] == "tool" for m in last)
    assert (await troupe.session_status(session_id)).status == "idle"
    assert (await troupe.doctor(session_id))["violations"] == []


async def test_a_running_command_is_reported_interrupted_not_run_again(
    service: tuple[TroupeClient, CrashingDispatcher], model: OpenAIWireServer, tmp_path: object
) -> None:
    troupe, dispatcher = service
    agent_id, session_id = await new_session(troupe, model)
    bypass = await troupe._http.patch(f"/sessions/{session_id}", json={"permission_mode": "bypass"})
    assert bypass.status_code == 200, bypass.text
    command = {"command": "sleep 30 && echo done", "description": "wait"}
    model.push(ScriptedReply(tool_calls=[("b1", "Bash", command)]))
    seen: list[Event] = []
    stream = asyncio.create_task(reply_events(troupe, session_id, seen))
    await troupe.send(agent_id, session_id, "run it")
    async with asyncio.timeout(30):
        while not any(e.type == "TOOL_RESULT_START" for e in seen):  # noqa: ASYNC110
            await asyncio.sleep(0.05)

    model.push(ScriptedReply(text="The command was cut off."))
    await dispatcher.crash(session_id)
    events = await asyncio.wait_for(stream, 60)

    assert events[-1].data["finished_reason"] == "completed"
    ends = [e for e in events if e.type == "TOOL_RESULT_END"]
    assert [e.data["state"] for e in ends] == ["interrupted"]
    tool_messages = [m for m in model.requests[-1].body["messages"] if m["role"] == "tool"]
    assert "restarted" in str(tool_messages[-1]["content"])
    assert (await troupe.doctor(session_id))["violations"] == []


async def test_the_doctor_finds_a_reply_answered_twice(
    service: tuple[TroupeClient, CrashingDispatcher], model: OpenAIWireServer, redis_url: str
) -> None:
    troupe, _ = service
    agent_id, session_id = await new_session(troupe, model)
    model.push(ScriptedReply(text="Once."))
    events = [e async for e in troupe.chat(agent_id, session_id, "hi")]
    assert (await troupe.doctor(session_id))["violations"] == []
    bus = RedisMessageBus(connect(redis_url))
    await bus.redis.xadd(bus.keys.events(session_id), {"e": json.dumps(events[-1].data)})
    await bus.aclose()
    await bus.redis.aclose()

    audit = await troupe.doctor(session_id)
    assert audit["violations"] == [f"reply {events[0].reply_id} ended 2 times"]


async def test_a_background_result_wakes_the_session(
    redis_url: str, model: OpenAIWireServer
) -> None:
    settings = RuntimeSettings(redis_url=redis_url, tool_timeout=1)
    app = create_app(settings=settings, dispatcher=CrashingDispatcher)
    async with served(app) as base_url, TroupeClient(base_url, user="bg") as troupe:
        agent_id, session_id = await new_session(troupe, model)
        await troupe._http.patch(f"/sessions/{session_id}", json={"permission_mode": "bypass"})
        model.push(
            ScriptedReply(tool_calls=[("bg1", "Bash", {"command": "sleep 2; echo slept"})]),
            ScriptedReply(text="It runs in the background."),
            ScriptedReply(text="The command finished."),
        )
        await troupe.send(agent_id, session_id, "run it")
        ends = 0
        async with asyncio.timeout(60):
            async for event in troupe.events(session_id, after="0"):
                ends += event.type == "REPLY_END"
                if ends == 2:
                    break
        transcript = await troupe.transcript(session_id)
        assert "slept" in str(transcript.messages[-1]["content"])
        assert (await troupe.doctor(session_id))["violations"] == []
