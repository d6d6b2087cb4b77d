"""Sessions on a Ray cluster: packed onto hosts on the agent nodes, moved when a node leaves.

One cluster per module: a head (the API) and two agent nodes carrying `troupe_agent`; default
settings. A 200-worker team spreads over both agent nodes; losing one of them mid-run moves its
sessions to the other and the team finishes its next round; a node that joins gets a warm
host and the next sessions.
"""

from __future__ import annotations

import asyncio
import collections
import re
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
import pytest
import ray
from ray import serve
from ray.cluster_utils import Cluster

from actors.local._ports import find_free_port
from actors.local.embedded_redis import EmbeddedRedis
from actors.settings import RuntimeSettings
from serve import deployment
from tests.support.api import USER, chat_and_collect, make_session, post_chat, wait_for_status
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.support.ray_actors import host_nodes, placements
from tests.support.sse import read_frames, reply_end_after_text

pytestmark = [pytest.mark.integration, pytest.mark.ray, pytest.mark.redis, pytest.mark.slow]

NAMESPACE = "troupe-test"
WORKERS = 200
BATCH = 50
REPORT = re.compile(r"round (\d) done by (w\d+)")
# Fast node-death detection: a removed node is reported dead within about two seconds.
FAST_HEALTH_CHECKS = {
    "health_check_initial_delay_ms": 0,
    "health_check_period_ms": 500,
    "health_check_timeout_ms": 500,
    "health_check_failure_threshold": 3,
}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A head (API) and two agent nodes carrying the `troupe_agent` resource."""
    nodes = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 2, "_system_config": FAST_HEALTH_CHECKS},
    )
    for _ in range(2):
        nodes.add_node(num_cpus=1, resources={"troupe_agent": 100})
    ray.init(address=nodes.address, namespace=NAMESPACE)
    yield nodes
    ray.shutdown()
    nodes.shutdown()


@pytest.fixture(scope="module")
def service(cluster: Cluster, redis_server: EmbeddedRedis) -> Iterator[tuple[str, RuntimeSettings]]:
    """The API on the head with default settings (a fast sweeper)."""
    settings = RuntimeSettings(
        redis_url=redis_server.url,
        key_prefix=f"test-{uuid.uuid4().hex[:8]}",
        namespace=NAMESPACE,
        sweep_interval=1.0,
    )
    port = find_free_port()
    deployment.deploy(settings, "127.0.0.1", port, proxy_location="HeadOnly")
    yield f"http://127.0.0.1:{port}", settings
    serve.shutdown()


@pytest.fixture
def settings(service: tuple[str, RuntimeSettings]) -> RuntimeSettings:
    return service[1]


@pytest.fixture
async def api(service: tuple[str, RuntimeSettings]) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=service[0], timeout=60) as client:
        await wait_until(lambda: client_ready(client), "the API answers")
        yield client


async def client_ready(client: httpx.AsyncClient) -> bool:
    try:
        return (await client.get("/health")).status_code == 200
    except httpx.HTTPError:
        return False


async def wait_until(
    condition: Callable[[], Any], what: str, within: float = 60.0, every: float = 0.2
) -> None:
    """Poll `condition` (sync or async) until it holds."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        held = condition()
        if asyncio.iscoroutine(held):
            held = await held
        if held:
            return
        assert asyncio.get_running_loop().time() < deadline, f"{what}: not within {within} s"
        await asyncio.sleep(every)


def agent_nodes(cluster: Cluster) -> set[str]:
    return {n.node_id for n in cluster.worker_nodes}


def nodes_with_hosts(settings: RuntimeSettings) -> set[str]:
    return set(host_nodes(settings).values())


def worker_nodes(settings: RuntimeSettings, sessions: list[str]) -> collections.Counter[str]:
    """How many of `sessions` each node runs now."""
    hosts, placed = host_nodes(settings), placements(settings)
    return collections.Counter(hosts[placed[s]] for s in sessions if placed.get(s) in hosts)


# --- the scripted team: a leader, WORKERS workers, two rounds of reports ----------------------


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def _calls(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [
        (call["function"]["name"], call["function"]["arguments"])
        for m in messages
        if m["role"] == "assistant"
        for call in m.get("tool_calls") or []
    ]


def scripted_team(body: dict[str, Any]) -> ScriptedReply:
    """Plays the leader and every worker from the conversation it is sent."""
    messages = body["messages"]
    system, calls = _text(messages[0]), _calls(messages)
    user_texts = [_text(m) for m in messages if m["role"] == "user"]
    if " a member of " in system:  # "You are wK, a member of ..."
        member = system.split()[2].rstrip(",")
        if messages[-1]["role"] == "tool":
            return ScriptedReply(text="reported")
        asked = [t for t in user_texts if "<team-message" in t]
        round_ = 2 if asked and "round 2" in asked[-1] else 1
        report = f"round {round_} done by {member}"
        return ScriptedReply(
            tool_calls=[(f"say-{member}-{round_}", "TeamSay", {"to": "Lead", "content": report})]
        )
    names = [name for name, _ in calls]
    if "TeamCreate" not in names:
        return ScriptedReply(tool_calls=[("tc", "TeamCreate", {"name": "crew", "description": ""})])
    created = names.count("AgentCreate")
    if created < WORKERS:
        batch = range(created + 1, min(created + BATCH, WORKERS) + 1)
        args = [{"name": f"w{i}", "description": "a worker", "prompt": "report"} for i in batch]
        return ScriptedReply(tool_calls=[(f"ac-{a['name']}", "AgentCreate", a) for a in args])
    reports: dict[str, set[str]] = {"1": set(), "2": set()}
    for text in user_texts:
        for round_, member in REPORT.findall(text):
            reports[round_].add(member)
    round_ = "2" if "round two" in user_texts else "1"
    if round_ == "2" and "TeamSay" not in names:
        return ScriptedReply(tool_calls=[("ts", "TeamSay", {"content": "round 2: report again"})])
    if len(reports[round_]) == WORKERS:
        return ScriptedReply(text=f"All {WORKERS} reported round {round_}.")
    return ScriptedReply(text=f"{len(reports[round_])} so far.")


@pytest.fixture(scope="module")
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer(reply_func=scripted_team) as server:
        yield server


async def run_round(
    api: httpx.AsyncClient, agent_id: str, leader: str, text: str, done: str
) -> None:
    """Post `text` to the leader and wait for its reply saying `done`."""
    final = asyncio.create_task(
        read_frames(api, f"/sessions/{leader}/stream", USER, reply_end_after_text(done))
    )
    await asyncio.sleep(0.2)  # the stream is open
    assert (await post_chat(api, agent_id, leader, text)).status_code == 200
    await asyncio.wait_for(final, 600)


# --- tests ------------------------------------------------------------------------------------


async def test_hosts_are_prewarmed_on_every_agent_node_and_never_on_the_head(
    api: httpx.AsyncClient, cluster: Cluster, settings: RuntimeSettings
) -> None:
    await wait_until(
        lambda: nodes_with_hosts(settings) == agent_nodes(cluster), "a host on each agent node"
    )
    for name in host_nodes(settings):
        home = ray.get(ray.get_actor(name, namespace=NAMESPACE).node_id.remote())
        assert home in agent_nodes(cluster)


async def test_a_200_worker_team_spreads_and_survives_losing_an_agent_node(
    api: httpx.AsyncClient, cluster: Cluster, settings: RuntimeSettings, model: OpenAIWireServer
) -> None:
    agent_id, leader = await make_session(api, model.base_url, name="Lead")
    await run_round(api, agent_id, leader, "assemble a crew", f"All {WORKERS} reported round 1.")
    views = (await api.get("/sessions/", headers=USER)).json()["sessions"]
    workers = [v["session"]["id"] for v in views if v["session"]["config"]["name"].startswith("w")]
    assert len(workers) == WORKERS
    spread = worker_nodes(settings, workers)
    assert set(spread) == agent_nodes(cluster), spread
    assert min(spread.values()) >= WORKERS // 4, spread  # least-loaded: close to even

    await wait_for_status(api, leader, "idle")
    lost = next(iter(cluster.worker_nodes))
    survivor = next(iter(agent_nodes(cluster) - {lost.node_id}))
    cluster.remove_node(lost)

    await run_round(api, agent_id, leader, "round two", f"All {WORKERS} reported round 2.")
    assert set(worker_nodes(settings, workers)) == {survivor}
    await wait_until(lambda: nodes_with_hosts(settings) == {survivor}, "the lost hosts forgotten")


async def test_a_joining_agent_node_gets_a_warm_host_and_the_next_sessions(
    api: httpx.AsyncClient, cluster: Cluster, settings: RuntimeSettings
) -> None:
    with OpenAIWireServer(default_text="hi") as model:
        # Load on the nodes there are (three sessions each when run alone).
        busy = [await make_session(api, model.base_url) for _ in range(6)]
        await asyncio.gather(*(chat_and_collect(api, a, s, "hello") for a, s in busy))
        joined = cluster.add_node(num_cpus=1, resources={"troupe_agent": 100}).node_id
        await wait_until(lambda: joined in nodes_with_hosts(settings), "a host on the new node")
        sessions = [await make_session(api, model.base_url) for _ in range(3)]
        await asyncio.gather(*(chat_and_collect(api, a, s, "hello") for a, s in sessions))
    assert worker_nodes(settings, [s for _, s in sessions]) == {joined: 3}
