"""`create_app` on Ray: agent factories run in session actors, AG-UI frames on the stream."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from starlette.middleware import Middleware

from actors.settings import RuntimeSettings
from serve import AGUIProtocolMiddleware, create_app
from tests.support import agent_extensions
from tests.support.api import USER, make_session, post_chat
from tests.support.asgi_server import served
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.support.sse import Frame, read_frames

pytestmark = [pytest.mark.integration, pytest.mark.ray, pytest.mark.redis]


@pytest.fixture
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer() as server:
        yield server


@pytest.fixture
async def api(
    ray_local: None, redis_url: str, tmp_path: object
) -> AsyncIterator[httpx.AsyncClient]:
    settings = RuntimeSettings(
        redis_url=redis_url,
        key_prefix=f"test-{uuid.uuid4().hex[:8]}",
        namespace="troupe-test",
        stream_block_ms=1_000,
    )
    # The default dispatcher: every session in a Ray actor.
    app = create_app(
        settings=settings,
        extra_agent_tools=agent_extensions.tools,
        extra_agent_middlewares=agent_extensions.middlewares,
        extra_middlewares=[Middleware(AGUIProtocolMiddleware)],
    )
    async with served(app) as base_url, httpx.AsyncClient(base_url=base_url, timeout=60) as client:
        yield client


def run_finished(frame: Frame) -> bool:
    return frame.type in ("RUN_FINISHED", "RUN_ERROR")


async def test_agent_factories_run_in_the_session_actor(
    api: httpx.AsyncClient, model: OpenAIWireServer
) -> None:
    agent_id, session_id = await make_session(api, model.base_url)
    model.push(
        ScriptedReply(tool_calls=[("call_1", agent_extensions.TOOL_NAME, {})]),
        ScriptedReply(text="You are alice."),
    )
    opened = asyncio.Event()
    reader = asyncio.create_task(
        read_frames(api, f"/sessions/{session_id}/stream", USER, run_finished, on_open=opened.set)
    )
    await asyncio.wait_for(opened.wait(), 30)
    assert (await post_chat(api, agent_id, session_id, "who am I?")).status_code == 200
    frames = await asyncio.wait_for(reader, 120)

    assert frames[-1].type == "RUN_FINISHED", frames[-1].data
    (result,) = [f.data["content"] for f in frames if f.type == "TOOL_CALL_RESULT"]
    assert f"user=alice agent={agent_id} session={session_id}" in result
    actor_pid = int(result.rsplit("pid=", 1)[1])
    assert actor_pid != os.getpid()  # built in the session's Ray actor, not the API process
    system_prompt = model.requests[0].body["messages"][0]["content"]
    assert f"{agent_extensions.PROMPT_MARK} alice in " in system_prompt
