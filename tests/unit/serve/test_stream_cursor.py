"""Stream cursors: strict ids (422 otherwise), `Last-Event-ID` wins, gaps and futures handled."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest

from agent_core.event import CustomEvent
from tests.support.asgi_server import served
from tests.unit.serve._service import Service

pytestmark = [pytest.mark.redis]

ALICE = {"X-User-ID": "alice"}


async def new_session(service: Service) -> str:
    agent = await service.api.post("/agent/", json={"name": "A"}, headers=ALICE)
    body = {"agent_id": agent.json()["agent_id"]}
    session = await service.api.post("/sessions/", json=body, headers=ALICE)
    return str(session.json()["session_id"])


async def log(service: Service, session_id: str, n: int) -> list[str]:
    bus = service.runtime.bus
    return [await bus.append_service_event(session_id, CustomEvent(name=f"e{i}")) for i in range(n)]


async def frames(lines: AsyncIterator[str], n: int) -> list[tuple[str, dict[str, object]]]:
    """The first `n` data frames as (id, event)."""
    got: list[tuple[str, dict[str, object]]] = []
    event_id = ""
    async for line in lines:
        if line.startswith("id: "):
            event_id = line[4:]
        elif line.startswith("data: "):
            got.append((event_id, json.loads(line[6:])))
            event_id = ""
            if len(got) == n:
                break
    return got


@pytest.mark.parametrize(
    "cursor",
    [
        "18446744073709551616-0",
        "1-18446744073709551616",
        "\uff11\uff12\uff13-0",  # fullwidth digits
        "1-",
        "abc",
    ],
)
async def test_a_malformed_or_out_of_range_cursor_is_a_422(service: Service, cursor: str) -> None:
    session_id = await new_session(service)
    path = f"/sessions/{session_id}/stream"
    by_query = await service.api.get(path, params={"after": cursor}, headers=ALICE)
    assert by_query.status_code == 422, by_query.text
    assert ["query", "after"] in [e["loc"] for e in by_query.json()["detail"]]
    header = {b"X-User-ID": b"alice", b"Last-Event-ID": cursor.encode()}
    by_header = await service.api.get(path, headers=header)
    assert by_header.status_code == 422, by_header.text
    assert ["header", "last-event-id"] in [e["loc"] for e in by_header.json()["detail"]]


async def test_last_event_id_wins_over_after(service: Service) -> None:
    session_id = await new_session(service)
    ids = await log(service, session_id, 4)
    async with (
        served(service.app, lifespan=False) as base_url,
        httpx.AsyncClient(base_url=base_url, headers=ALICE) as client,
        client.stream(
            "GET",
            f"/sessions/{session_id}/stream",
            params={"after": "0"},
            headers={"Last-Event-ID": ids[1]},
        ) as response,
    ):
        got = await frames(response.aiter_lines(), 2)
    assert [eid for eid, _ in got] == ids[2:]


async def test_a_cursor_past_the_newest_event_gets_the_next_ones(service: Service) -> None:
    session_id = await new_session(service)
    await log(service, session_id, 2)
    async with (
        served(service.app, lifespan=False) as base_url,
        httpx.AsyncClient(base_url=base_url, headers=ALICE) as client,
        client.stream(
            "GET", f"/sessions/{session_id}/stream", params={"after": "99999999999999-0"}
        ) as response,
    ):
        assert response.status_code == 200
        (new,) = await log(service, session_id, 1)
        got = await frames(response.aiter_lines(), 1)
    assert got[0][0] == new


async def test_a_cursor_older_than_the_log_says_events_were_dropped(service: Service) -> None:
    session_id = await new_session(service)
    key = service.runtime.bus.keys.events(session_id)
    maxlen = service.runtime.settings.event_log_maxlen
    redis = service.runtime.redis
    # The log as it stands once its cap trimmed the oldest events away.
    async with redis.pipeline(transaction=False) as pipe:
        for i in range(maxlen + 5):
            pipe.xadd(key, {"e": CustomEvent(name=f"e{i}").model_dump_json()})
        await pipe.execute()
    await redis.xtrim(key, maxlen=maxlen, approximate=False)
    first = (await redis.xrange(key, "-", "+", count=1))[0][0].decode()
    async with (
        served(service.app, lifespan=False) as base_url,
        httpx.AsyncClient(base_url=base_url, headers=ALICE) as client,
        client.stream("GET", f"/sessions/{session_id}/stream", params={"after": "0"}) as response,
    ):
        got = await frames(response.aiter_lines(), 2)
    (notice_id, notice), (event_id, event) = got
    assert notice_id == ""
    assert (notice["type"], notice["name"]) == ("CUSTOM", "events_dropped")
    assert (event_id, event["name"]) == (first, "e5")
