"""Background tool calls whose owner died: the next owner gives each the one result it is owed.

The "crash" replaces the session's in-process runtime by a new one, as in
`test_durable_replies`; the background call ran in the old runtime and dies with it.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import psutil
import pytest

from actors.bus.keys import DEFAULT_KEY_PREFIX, Keys
from actors.bus.redis_connect import connect
from actors.settings import RuntimeSettings
from serve import create_app
from serve.client import TroupeClient
from tests.support.asgi_server import served
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.unit.serve.test_durable_replies import CrashingDispatcher, new_session

pytestmark = [pytest.mark.redis]

_KEYS = Keys(DEFAULT_KEY_PREFIX)


@pytest.fixture
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer() as server:
        yield server


@pytest.fixture
async def service(
    redis_url: str, tmp_path: Path
) -> AsyncIterator[tuple[TroupeClient, CrashingDispatcher]]:
    settings = RuntimeSettings(
        redis_url=redis_url,
        tool_timeout=1,
        workspace_backend="local",
        workspace_root=str(tmp_path / "workspaces"),
    )
    app = create_app(settings=settings, dispatcher=CrashingDispatcher)
    async with served(app) as base_url, TroupeClient(base_url, user=f"u-{uuid.uuid4().hex}") as c:
        yield c, app.state.runtime.dispatcher


async def records(redis_url: str, session_id: str) -> int:
    redis = connect(redis_url)
    try:
        return int(await redis.hlen(_KEYS.background(session_id)))
    finally:
        await redis.aclose()


async def wait_reply_ends(troupe: TroupeClient, session_id: str, count: int) -> None:
    ends = 0
    async with asyncio.timeout(60):
        async for event in troupe.events(session_id, after="0"):
            ends += event.type == "REPLY_END"
            if ends == count:
                return


async def start_in_background(
    troupe: TroupeClient, model: OpenAIWireServer, command: str, *then: ScriptedReply
) -> tuple[str, str]:
    """Start a session whose first reply leaves `command` running in the background.

    `then` are the model's next replies.
    """
    agent_id, session_id = await new_session(troupe, model)
    await troupe._http.patch(f"/sessions/{session_id}", json={"permission_mode": "bypass"})
    model.push(
        ScriptedReply(tool_calls=[("bg1", "Bash", {"command": command})]),
        ScriptedReply(text="It runs in the background."),
        *then,
    )
    await troupe.send(agent_id, session_id, "run it")
    await wait_reply_ends(troupe, session_id, 1)
    return agent_id, session_id


def tool_notices(model: OpenAIWireServer) -> str:
    return str(model.requests[-1].body["messages"])


async def test_a_call_cut_by_a_crash_is_reported_interrupted_once(
    service: tuple[TroupeClient, CrashingDispatcher], model: OpenAIWireServer, redis_url: str
) -> None:
    troupe, dispatcher = service
    agent_id, session_id = await start_in_background(troupe, model, "sleep 30; echo done")
    assert await records(redis_url, session_id) == 1

    model.push(ScriptedReply(text="It was cut off."))
    await dispatcher.crash(session_id)
    await wait_reply_ends(troupe, session_id, 2)
    assert await records(redis_url, session_id) == 0
    assert tool_notices(model).count("the server restarted (or the process") == 1

    # Another owner, then another turn: the call is not reported again.
    await dispatcher.crash(session_id)
    model.push(ScriptedReply(text="Fine."))
    await troupe.send(agent_id, session_id, "and now?")
    await wait_reply_ends(troupe, session_id, 3)
    assert tool_notices(model).count("the server restarted (or the process") == 1
    assert "has completed" not in tool_notices(model)
    assert (await troupe.doctor(session_id))["violations"] == []


def readers(fifo: Path) -> set[int]:
    """The pids of the `cat` processes reading `fifo`."""
    wanted = ["cat", str(fifo)]
    return {p.pid for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == wanted}


async def wait_readers(fifo: Path, condition: Callable[[set[int]], bool]) -> set[int]:
    async with asyncio.timeout(30):
        while not condition(pids := readers(fifo)):  # noqa: ASYNC110
            await asyncio.sleep(0.05)
    return pids


async def test_a_read_only_call_cut_by_a_crash_runs_again(
    service: tuple[TroupeClient, CrashingDispatcher],
    model: OpenAIWireServer,
    redis_url: str,
    tmp_path: Path,
) -> None:
    troupe, dispatcher = service
    fifo = tmp_path / "feed"
    os.mkfifo(fifo)
    _, session_id = await start_in_background(troupe, model, f"cat {fifo}")
    first = await wait_readers(fifo, bool)

    model.push(ScriptedReply(text="It read the feed."))
    await dispatcher.crash(session_id)
    # The first `cat` died with its owner; only the one run again may read the feed.
    await wait_readers(fifo, lambda pids: bool(pids) and not pids & first)
    await asyncio.to_thread(fifo.write_text, "fed-after-restart\n")
    await wait_reply_ends(troupe, session_id, 2)

    assert "fed-after-restart" in tool_notices(model)
    assert "the server restarted (or the process" not in tool_notices(model)
    assert await records(redis_url, session_id) == 0


async def test_a_delivered_result_leaves_no_record(
    service: tuple[TroupeClient, CrashingDispatcher], model: OpenAIWireServer, redis_url: str
) -> None:
    troupe, _ = service
    finished = ScriptedReply(text="The command finished.")
    _, session_id = await start_in_background(troupe, model, "sleep 2; echo slept", finished)
    await wait_reply_ends(troupe, session_id, 2)

    assert "slept" in tool_notices(model)
    assert await records(redis_url, session_id) == 0
    redis = connect(redis_url)
    try:
        assert not await redis.sismember(_KEYS.inboxes(), session_id)
    finally:
        await redis.aclose()
