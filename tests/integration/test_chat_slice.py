"""One chat turn through every layer: Serve API → session actor → Redis → agent → model → SSE."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from actors.bus.items import ChatItem
from actors.bus.keys import Keys
from actors.bus.message_bus import Put, RedisMessageBus
from actors.bus.redis_connect import connect
from agent_core.event import parse_event
from agent_core.message import AssistantMsg, Msg, UserMsg
from tests.integration.conftest import LiveService
from tests.support import COMPAT_DIR
from tests.support.api import USER, chat_and_collect, make_session, post_chat, wait_for_status
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.support.sse import Frame, is_reply_end, read_frames

pytestmark = [pytest.mark.integration, pytest.mark.ray, pytest.mark.redis]

SAMPLES = COMPAT_DIR / "agentscope-sse-samples.txt"


@pytest.fixture(scope="module")
def openai_server() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer() as server:
        yield server


@pytest.fixture
async def api(live_service: LiveService) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=live_service.base_url, timeout=30) as client:
        yield client


def fold(frames: list[Frame]) -> Msg:
    start = frames[0].data
    msg = AssistantMsg(start["name"], [], id=start["reply_id"], created_at=start["created_at"])
    for frame in frames[1:]:
        msg.append_event(parse_event(frame.data))
    return msg


async def test_tool_turn_streams_to_every_subscriber_and_persists(
    api: httpx.AsyncClient, live_service: LiveService, openai_server: OpenAIWireServer
) -> None:
    agent_id, session_id = await make_session(api, openai_server.base_url)
    openai_server.push(
        ScriptedReply(text="Let me check. ", tool_calls=[("call_1", "get_current_time", {})]),
        ScriptedReply(text="All done."),
    )
    first, second = await chat_and_collect(
        api, agent_id, session_id, "what time is it?", subscribers=2
    )

    types = [f.type for f in first]
    assert types[0] == "REPLY_START"
    assert types[-1] == "REPLY_END"
    for expected in (
        "TOOL_CALL_START",
        "TOOL_CALL_DELTA",
        "TOOL_CALL_END",
        "TOOL_RESULT_START",
        "TOOL_RESULT_TEXT_DELTA",
        "TOOL_RESULT_END",
        "TEXT_BLOCK_START",
        "TEXT_BLOCK_DELTA",
        "TEXT_BLOCK_END",
    ):
        assert expected in types
    assert types.index("TOOL_RESULT_END") < len(types) - types[::-1].index("TEXT_BLOCK_START")
    assert first[-1].data["finished_reason"] == "completed"
    assert [f.raw for f in first] == [f.raw for f in second]
    assert [f.id for f in first] == [f.id for f in second]

    page = (await api.get(f"/sessions/{session_id}/messages", headers=USER)).json()
    assert [m["role"] for m in page["messages"]] == ["user", "assistant"]
    assert page["messages"][0]["content"][0]["text"] == "what time is it?"
    assert Msg.model_validate(page["messages"][1]) == fold(first)
    assert page["is_running"] is False
    assert page["has_more"] is False

    # The tool ran for real and the model saw its result.
    tool_result = next(b for b in fold(first).content if b.type == "tool_result")
    assert tool_result.state == "success"
    assert "T" in tool_result.output_text()
    second_request = openai_server.requests[-1].body
    assert any(m.get("role") == "tool" for m in second_request["messages"])


async def test_reconnect_from_any_frame_yields_exactly_the_rest(
    api: httpx.AsyncClient, openai_server: OpenAIWireServer
) -> None:
    agent_id, session_id = await make_session(api, openai_server.base_url)
    openai_server.push(ScriptedReply(text="Hello there, how are you doing today?"))
    (frames,) = await chat_and_collect(api, agent_id, session_id, "hi")
    path = f"/sessions/{session_id}/stream"
    for index, frame in enumerate(frames[:-1]):
        by_query = await read_frames(api, path, USER, is_reply_end, params={"after": frame.id})
        assert [f.id for f in by_query] == [f.id for f in frames[index + 1 :]]
    header = {**USER, "Last-Event-ID": frames[2].id}
    by_header = await read_frames(api, path, header, is_reply_end)
    assert [f.raw for f in by_header] == [f.raw for f in frames[3:]]


async def test_event_cursor_from_messages_misses_nothing(
    api: httpx.AsyncClient, openai_server: OpenAIWireServer
) -> None:
    agent_id, session_id = await make_session(api, openai_server.base_url)
    openai_server.push(ScriptedReply(text="first"))
    await chat_and_collect(api, agent_id, session_id, "one")
    page = (await api.get(f"/sessions/{session_id}/messages", headers=USER)).json()
    openai_server.push(ScriptedReply(text="second"))
    assert (await post_chat(api, agent_id, session_id, "2")).status_code == 200
    frames = await read_frames(
        api,
        f"/sessions/{session_id}/stream",
        USER,
        is_reply_end,
        params={"after": page["event_cursor"]},
    )
    assert frames[0].type == "REPLY_START"
    assert fold(frames).get_text_content() == "second"


def _recorded_frames() -> dict[str, dict[str, Any]]:
    recorded: dict[str, dict[str, Any]] = {}
    for line in SAMPLES.read_text().splitlines():
        if line.startswith("data: "):
            data = json.loads(line[6:])
            recorded.setdefault(data["type"], data)
    return recorded


def _shape(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    return type(value).__name__


async def test_frames_have_the_recorded_agentscope_shape(
    api: httpx.AsyncClient, openai_server: OpenAIWireServer
) -> None:
    agent_id, session_id = await make_session(api, openai_server.base_url)
    openai_server.push(
        ScriptedReply(text="Let me check. ", tool_calls=[("call_9", "get_current_time", {})]),
        ScriptedReply(text="done"),
    )
    (frames,) = await chat_and_collect(api, agent_id, session_id, "time?")
    recorded = _recorded_frames()
    compared = set()
    for frame in frames:
        reference = recorded[frame.type]
        assert set(frame.data) == set(reference), frame.type
        for key, value in reference.items():
            if value is not None and frame.data[key] is not None:
                assert type(frame.data[key]) is type(value), (frame.type, key)
        compared.add(frame.type)
    assert {
        "REPLY_START",
        "MODEL_CALL_START",
        "TOOL_CALL_START",
        "TOOL_RESULT_END",
        "TEXT_BLOCK_DELTA",
        "MODEL_CALL_END",
        "REPLY_END",
    } <= compared


@pytest.mark.parametrize(
    ("reply", "attempts", "error_type", "fragment"),
    [
        (ScriptedReply(status=500), 4, "upstream", "HTTP 500"),
        (ScriptedReply(status=401), 1, "authentication", "HTTP 401"),
        (ScriptedReply(garbage=True), 1, "upstream", ""),
    ],
    ids=["server-error", "unauthorized", "garbage"],
)
async def test_model_failure_ends_the_reply_with_a_readable_error_and_session_recovers(
    api: httpx.AsyncClient,
    openai_server: OpenAIWireServer,
    reply: ScriptedReply,
    attempts: int,
    error_type: str,
    fragment: str,
) -> None:
    agent_id, session_id = await make_session(api, openai_server.base_url)
    # A 500 is retried by the model (default: 3 retries) and fails each time; the others are
    # not retried.
    openai_server.push(*[reply] * attempts)
    (frames,) = await chat_and_collect(api, agent_id, session_id, "hello")
    end = frames[-1].data
    assert end["finished_reason"] == "error"
    assert end["error"]["type"] == error_type
    assert fragment in end["error"]["message"]

    openai_server.push(ScriptedReply(text="I am back."))
    (frames,) = await chat_and_collect(api, agent_id, session_id, "again?")
    assert frames[-1].data["finished_reason"] == "completed"
    assert fold(frames).get_text_content() == "I am back."
    page = (await api.get(f"/sessions/{session_id}/messages", headers=USER)).json()
    assert [m["role"] for m in page["messages"]] == ["user", "assistant", "user", "assistant"]
    assert page["messages"][1]["error"]["type"] == error_type


async def test_session_without_model_config_fails_fast_with_setup_error(
    api: httpx.AsyncClient,
) -> None:
    agent_id = (await api.post("/agent/", json={"name": "NoModel"}, headers=USER)).json()[
        "agent_id"
    ]
    session = await api.post("/sessions/", json={"agent_id": agent_id}, headers=USER)
    session_id = session.json()["session_id"]
    (frames,) = await chat_and_collect(api, agent_id, session_id, "hello")
    assert [f.type for f in frames] == ["REPLY_START", "REPLY_END"]
    assert frames[-1].data["error"]["type"] == "setup"
    assert "chat_model_config" in frames[-1].data["error"]["message"]


async def test_other_users_session_is_not_found(
    api: httpx.AsyncClient, openai_server: OpenAIWireServer
) -> None:
    agent_id, session_id = await make_session(api, openai_server.base_url)
    mallory = {"X-User-ID": "mallory"}
    for path in (f"/sessions/{session_id}/messages", f"/sessions/{session_id}/stream"):
        response = await api.get(path, headers=mallory)
        assert response.status_code == 404
        assert session_id in response.json()["detail"]
    assert (await post_chat(api, agent_id, session_id, "hi", mallory)).status_code == 404
    assert (await api.get("/sessions/", headers=mallory)).json()["total"] == 0


async def test_confirmation_round_trip_resumes_the_same_reply(
    api: httpx.AsyncClient, openai_server: OpenAIWireServer
) -> None:
    agent_id, session_id = await make_session(api, openai_server.base_url)
    openai_server.push(
        ScriptedReply(
            text="Writing. ",
            tool_calls=[("w1", "Write", {"file_path": "notes.txt", "content": "hello"})],
        ),
        ScriptedReply(text="Written."),
    )
    path = f"/sessions/{session_id}/stream"
    parked = asyncio.create_task(
        read_frames(
            api, path, USER, lambda f: f.type == "REQUIRE_USER_CONFIRM", params={"after": "0"}
        )
    )
    assert (await post_chat(api, agent_id, session_id, "write a note")).status_code == 200
    frames = await asyncio.wait_for(parked, 60)
    ask = frames[-1].data
    assert "REPLY_END" not in [f.type for f in frames]
    assert ask["tool_calls"][0]["name"] == "Write"
    assert ask["tool_calls"][0]["suggested_rules"]
    await wait_for_status(api, session_id, "awaiting_permission")

    wrong = {"type": "USER_CONFIRM_RESULT", "reply_id": "not-it", "confirm_results": []}
    body = {"agent_id": agent_id, "session_id": session_id, "input": wrong}
    assert (await api.post("/chat/", json=body, headers=USER)).status_code == 409

    confirm = {
        "type": "USER_CONFIRM_RESULT",
        "reply_id": ask["reply_id"],
        "confirm_results": [{"confirmed": True, "tool_call": ask["tool_calls"][0]}],
    }
    resumed = asyncio.create_task(
        read_frames(api, path, USER, is_reply_end, params={"after": frames[-1].id})
    )
    body = {"agent_id": agent_id, "session_id": session_id, "input": confirm}
    assert (await api.post("/chat/", json=body, headers=USER)).status_code == 200
    rest = await asyncio.wait_for(resumed, 60)
    assert [f.type for f in rest][:2] == ["USER_CONFIRM_RESULT", "REPLY_START"]
    assert rest[1].data["reply_id"] == ask["reply_id"]
    assert rest[-1].data["finished_reason"] == "completed"
    result_text = "".join(f.data["delta"] for f in rest if f.type == "TOOL_RESULT_TEXT_DELTA")
    assert "written successfully" in result_text
    written = Path(result_text.split("The file ")[1].split(" has been")[0])
    assert await asyncio.to_thread(written.read_text) == "hello"
    await wait_for_status(api, session_id, "idle")
    history = (await api.get(f"/sessions/{session_id}/messages", headers=USER)).json()
    assert [m["role"] for m in history["messages"]] == ["user", "assistant"]
    assert Msg.model_validate(history["messages"][1]) == fold([*frames, *rest[2:]])


async def test_interrupting_a_parked_reply_closes_it(
    api: httpx.AsyncClient, openai_server: OpenAIWireServer
) -> None:
    agent_id, session_id = await make_session(api, openai_server.base_url)
    openai_server.push(
        ScriptedReply(tool_calls=[("w2", "Write", {"file_path": "x.txt", "content": "x"})])
    )
    path = f"/sessions/{session_id}/stream"
    parked = asyncio.create_task(
        read_frames(
            api, path, USER, lambda f: f.type == "REQUIRE_USER_CONFIRM", params={"after": "0"}
        )
    )
    assert (await post_chat(api, agent_id, session_id, "write")).status_code == 200
    frames = await asyncio.wait_for(parked, 60)
    closed = asyncio.create_task(
        read_frames(api, path, USER, is_reply_end, params={"after": frames[-1].id})
    )
    assert (await api.post(f"/sessions/{session_id}/interrupt", headers=USER)).status_code == 202
    end = (await asyncio.wait_for(closed, 60))[-1].data
    assert end["finished_reason"] == "interrupted"
    await wait_for_status(api, session_id, "idle")


async def test_a_delivery_to_a_live_session_signals_its_host_over_redis(
    api: httpx.AsyncClient, live_service: LiveService, openai_server: OpenAIWireServer
) -> None:
    agent_id, session_id = await make_session(api, openai_server.base_url)
    openai_server.push(ScriptedReply(text="First."), ScriptedReply(text="Second."))
    await chat_and_collect(api, agent_id, session_id, "one")  # now live on a listening host

    redis = connect(live_service.settings.redis_url)
    bus = RedisMessageBus(redis, Keys(live_service.settings.key_prefix))
    try:
        item = ChatItem(input=[UserMsg("user", "two")])
        assert await bus.put_many([(session_id, item)]) == [Put.SIGNALLED]
        # No Ray wake was made: the host's listener alone starts the reply.
        deadline = asyncio.get_running_loop().time() + 30
        roles: list[str] = []
        while asyncio.get_running_loop().time() < deadline and len(roles) < 4:
            await asyncio.sleep(0.1)
            page = (await api.get(f"/sessions/{session_id}/messages", headers=USER)).json()
            roles = [m["role"] for m in page["messages"]]
        assert roles == ["user", "assistant", "user", "assistant"]
    finally:
        await redis.aclose()
