"""The AG-UI adapter: every frame it writes is a valid event of the official `ag-ui-protocol`.

A tool turn is streamed through `create_app(extra_middlewares=[AGUIProtocolMiddleware])`
(sessions in-process, uvicorn on 127.0.0.1) and each frame is validated with the package's
pydantic models; AgentScope's recorded frames go through the converter the same way.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from ag_ui.core import Event
from pydantic import BaseModel, TypeAdapter
from starlette.middleware import Middleware

from actors.client import InProcessDispatcher
from agent_core.event import parse_event
from serve import AGUIProtocolMiddleware, create_app
from serve.protocol import ProtocolMiddlewareBase
from tests.support import COMPAT_DIR
from tests.support.api import USER, make_session, post_chat
from tests.support.asgi_server import served
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.support.sse import Frame, read_frames

pytestmark = [pytest.mark.redis]

AGUI_EVENT: TypeAdapter[Any] = TypeAdapter(Event)


def validate(payload: dict[str, Any]) -> BaseModel:
    """Parse `payload` as an AG-UI event: known fields only, camelCase, nothing lost."""
    event: BaseModel = AGUI_EVENT.validate_python(payload)
    assert_no_unknown_fields(event)
    assert event.model_dump(mode="json", by_alias=True) == payload
    return event


def assert_no_unknown_fields(model: BaseModel) -> None:
    # AG-UI's models keep unknown fields instead of refusing them; refuse them here.
    assert not model.model_extra, f"{type(model).__name__}: unknown {model.model_extra}"
    for name in type(model).model_fields:
        value = getattr(model, name)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, BaseModel):
                assert_no_unknown_fields(item)


@pytest.fixture
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer() as server:
        yield server


@pytest.fixture
async def api(redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(
        storage=redis_url,
        dispatcher=InProcessDispatcher,
        extra_middlewares=[Middleware(AGUIProtocolMiddleware)],
    )
    async with served(app) as base_url, httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        yield client


def run_ended(frame: Frame) -> bool:
    return frame.type in ("RUN_FINISHED", "RUN_ERROR")


async def test_a_tool_turn_streams_as_valid_agui_events(
    api: httpx.AsyncClient, model: OpenAIWireServer
) -> None:
    agent_id, session_id = await make_session(api, model.base_url)
    model.push(
        ScriptedReply(
            reasoning="The clock knows.",
            text="Let me check. ",
            tool_calls=[("call_1", "get_current_time", {"timezone": "UTC"})],
        ),
        ScriptedReply(text="All done."),
    )
    opened = asyncio.Event()
    reader = asyncio.create_task(
        read_frames(
            api,
            f"/sessions/{session_id}/stream",
            USER,
            run_ended,
            params={"agent_id": agent_id},
            on_open=opened.set,
        )
    )
    await asyncio.wait_for(opened.wait(), 30)
    assert (await post_chat(api, agent_id, session_id, "what time is it?")).status_code == 200
    frames = await asyncio.wait_for(reader, 60)

    events = [validate(frame.data) for frame in frames]
    types = [frame.type for frame in frames]
    print(f"{len(events)} AG-UI events validated: {sorted(set(types))}")
    assert types[0] == "RUN_STARTED"
    assert types[-1] == "RUN_FINISHED"
    assert frames[0].data["threadId"] == session_id
    assert frames[0].data["runId"] == frames[-1].data["runId"]
    assert "outcome" not in frames[-1].data  # completed
    for expected in (
        "STEP_STARTED",
        "STEP_FINISHED",
        "REASONING_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_END",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
    ):
        assert expected in types, expected
    args = "".join(f.data["delta"] for f in frames if f.type == "TOOL_CALL_ARGS")
    assert json.loads(args) == {"timezone": "UTC"}
    (result,) = [f.data for f in frames if f.type == "TOOL_CALL_RESULT"]
    assert result["toolCallId"] == "call_1"
    assert result["content"].startswith("20")  # the ISO time the tool returned
    text = "".join(f.data["delta"] for f in frames if f.type == "TEXT_MESSAGE_CONTENT")
    assert text == "Let me check. All done."
    # Every frame keeps a stream id to resume from, and they increase.
    ids = [tuple(map(int, f.id.split("-"))) for f in frames if f.id]
    assert ids == sorted(ids)
    assert frames[-1].id


def recorded_frames() -> list[dict[str, Any]]:
    lines = (COMPAT_DIR / "agentscope-sse-samples.txt").read_text().splitlines()
    return [json.loads(line.removeprefix("data: ")) for line in lines if line.startswith("data: ")]


def test_agentscope_recorded_frames_convert_to_valid_agui_events() -> None:
    converter = AGUIProtocolMiddleware(app=None)._open_stream()  # type: ignore[arg-type]
    converted = 0
    for payload in recorded_frames():
        for out in converter(parse_event(payload)) or []:
            validate(out)
            converted += 1
    assert converted > 50
    print(f"{converted} AG-UI events from AgentScope's recorded frames, all valid")


def test_a_parked_reply_finishes_its_run_with_an_interrupt() -> None:
    converter = AGUIProtocolMiddleware(app=None)._open_stream()  # type: ignore[arg-type]
    parked = next(p for p in recorded_frames() if p["type"] == "REQUIRE_USER_CONFIRM")
    start = {"type": "REPLY_START", "reply_id": parked["reply_id"], "name": "F", "session_id": "s"}
    converter(parse_event(start))
    (out,) = converter(parse_event(parked)) or []
    event = validate(out)
    assert out["type"] == "RUN_FINISHED"
    assert out["threadId"] == "s"
    interrupts = out["outcome"]["interrupts"]
    assert [i["toolCallId"] for i in interrupts] == [c["id"] for c in parked["tool_calls"]]
    assert out["rawEvent"]["tool_calls"] == parked["tool_calls"]
    assert event.model_dump(by_alias=True, mode="json")["outcome"]["type"] == "interrupt"


class Upper(ProtocolMiddlewareBase):
    """A protocol of its own: the event type in lower case; hints dropped; text doubled."""

    def _convert_to_protocol(self, event: Any) -> Any:
        if event.type == "HINT_BLOCK":
            return None
        if event.type == "TEXT_BLOCK_DELTA":
            return [{"t": "text"}, {"t": "text"}]
        return {"t": event.type.lower()}


async def test_frames_split_across_chunks_are_reassembled() -> None:
    start = {"type": "REPLY_START", "reply_id": "r", "name": "F"}
    hint = {"type": "HINT_BLOCK", "reply_id": "r", "block_id": "b", "hint": "h"}
    delta = {"type": "TEXT_BLOCK_DELTA", "reply_id": "r", "block_id": "b", "delta": "x"}
    stream = (
        f"id: 1-0\ndata: {json.dumps(start)}\n\n: keep-alive\n\n"
        f"id: 2-0\ndata: {json.dumps(hint)}\n\n"
        f"id: 3-0\ndata: {json.dumps(delta)}\n\ndata: not json\n\n"
    ).encode()
    chunks = [stream[i : i + 7] for i in range(0, len(stream), 7)]

    async def app(scope: Any, receive: Any, send: Any) -> None:
        headers = [(b"content-type", b"text/event-stream"), (b"content-length", b"999")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for chunk in chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    transport = httpx.ASGITransport(app=Upper(app))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        response = await client.get("/")
    assert "content-length" not in response.headers or int(
        response.headers["content-length"]
    ) == len(response.content)
    assert response.text == (
        'id: 1-0\ndata: {"t":"reply_start"}\n\n'
        ": keep-alive\n\n"
        'data: {"t":"text"}\n\nid: 3-0\ndata: {"t":"text"}\n\n'
        "data: not json\n\n"
    )


async def test_other_responses_pass_untouched(api: httpx.AsyncClient) -> None:
    response = await api.get("/agent/", headers=USER)
    assert response.json() == {"agents": [], "total": 0}
