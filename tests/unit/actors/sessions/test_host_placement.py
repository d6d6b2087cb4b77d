"""Session placement records on a real Redis: least-loaded, capped, moved, claimed, released."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from actors.bus.keys import Keys
from actors.sessions.placement import DEDICATED, HostPlacement, Placed

pytestmark = [pytest.mark.redis]


@pytest.fixture
async def placement(redis_url: str) -> AsyncIterator[HostPlacement]:
    redis = Redis.from_url(redis_url)
    yield HostPlacement(redis, Keys("t"))
    await redis.aclose()


async def test_sessions_go_to_the_least_loaded_host_until_the_cap(
    placement: HostPlacement,
) -> None:
    hosts = {"a": "n1", "b": "n2"}
    placed = [await placement.place(f"s{i}", None, hosts, cap=2) for i in range(4)]
    assert [p.host for p in placed] == ["a", "b", "a", "b"]
    assert await placement.loads(list(hosts)) == {"a": 2, "b": 2}
    assert await placement.place("s4", None, hosts, cap=2) == Placed(None)  # all full


async def test_the_least_loaded_node_wins_over_an_empty_host_on_a_busy_node(
    placement: HostPlacement,
) -> None:
    for i in range(3):
        await placement.place(f"busy{i}", None, {"a1": "n1"}, cap=10)
    hosts = {"a1": "n1", "a2": "n1", "b1": "n2"}
    assert (await placement.place("s", None, hosts, cap=10)).host == "b1"
    # On one node, the emptier host takes the next session.
    assert (await placement.place("t", None, {"a1": "n1", "a2": "n1"}, cap=10)).host == "a2"
    assert await placement.current("s4") is None


async def test_a_placed_session_stays_and_a_stale_move_is_refused(
    placement: HostPlacement,
) -> None:
    assert (await placement.place("s", None, {"a": "n"}, cap=5)).host == "a"
    # Another process read "unplaced" before the first placement: it must not move it.
    assert await placement.place("s", None, {"b": "n"}, cap=5) == Placed("a", raced=True)
    assert await placement.current("s") == "a"


async def test_moving_off_a_lost_host_frees_its_slot(placement: HostPlacement) -> None:
    await placement.place("s", None, {"a": "n"}, cap=5)
    assert (await placement.place("s", "a", {"b": "n"}, cap=5)).host == "b"
    assert await placement.loads(["a", "b"]) == {"a": 0, "b": 1}


async def test_a_host_claims_only_what_no_other_host_holds(placement: HostPlacement) -> None:
    await placement.place("s", None, {"a": "n"}, cap=5)
    assert await placement.claim("s", "b") == "a"
    assert await placement.claim("free", "b") == "b"
    assert await placement.sessions_of("b") == ["free"]


async def test_release_forgets_only_its_own_placement(placement: HostPlacement) -> None:
    await placement.place("s", None, {"a": "n"}, cap=5)
    await placement.release("s", "b")  # not b's: nothing changes
    assert await placement.current("s") == "a"
    await placement.release("s", "a")
    assert await placement.current("s") is None
    assert await placement.loads(["a"]) == {"a": 0}


async def test_a_restarted_host_releases_everything_it_held(placement: HostPlacement) -> None:
    for session_id in ("s1", "s2"):
        await placement.place(session_id, None, {"a": "n"}, cap=5)
    assert sorted(await placement.release_all("a")) == ["s1", "s2"]
    assert await placement.current("s1") is None
    assert await placement.loads(["a"]) == {"a": 0}


async def test_unregistering_a_host_moves_its_sessions_out(placement: HostPlacement) -> None:
    await placement.register("a", "node-1")
    await placement.register("b", "node-2")
    await placement.place("s", None, {"a": "n"}, cap=5)
    assert await placement.unregister("a") == ["s"]
    assert await placement.hosts() == {"b": "node-2"}
    assert await placement.current("s") is None


async def test_concurrent_placements_respect_the_cap(placement: HostPlacement) -> None:
    results = await asyncio.gather(
        *(placement.place(f"s{i}", None, {"a": "n1", "b": "n2"}, cap=10) for i in range(30))
    )
    assert sum(r.host is not None for r in results) == 20
    assert await placement.loads(["a", "b"]) == {"a": 10, "b": 10}


async def test_dedicated_sessions_are_not_counted_and_forget_clears_all(
    placement: HostPlacement,
) -> None:
    await placement.dedicate("d")
    assert await placement.current("d") == DEDICATED
    await placement.place("s", None, {"a": "n"}, cap=5)
    assert await placement.current_many(["d", "s", "x"]) == [DEDICATED, "a", None]
    await placement.forget("s")
    await placement.forget("d")
    assert await placement.current("s") is None
    assert await placement.current("d") is None
    assert await placement.loads(["a"]) == {"a": 0}
