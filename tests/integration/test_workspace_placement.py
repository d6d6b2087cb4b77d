"""Workspaces live on sandbox nodes: tools run there, sessions on agent nodes; faults are survived.

A cluster of one head (the API), one agent node and two sandbox nodes; tool calls are driven by
a scripted model through the real API.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import ray
import redis
from ray import serve
from ray.cluster_utils import Cluster

from actors._remote.workspace_actor import workspace_actor_name
from actors.bus.keys import Keys
from actors.local._ports import find_free_port
from actors.local.embedded_redis import EmbeddedRedis
from actors.sessions.background_calls import INTERRUPTED_BY_RESTART
from actors.settings import RuntimeSettings
from serve import deployment
from tests.support.api import USER, chat_and_collect, make_session, tool_results
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.support.ray_actors import home_name, home_pid
from tests.support.sse import read_frames, reply_end_after_text

pytestmark = [pytest.mark.integration, pytest.mark.ray, pytest.mark.redis, pytest.mark.slow]

NAMESPACE = "troupe-ws-test"


@dataclass
class Roles:
    cluster: Cluster
    agent: str
    sandboxes: set[str]


@pytest.fixture(scope="module")
def roles() -> Iterator[Roles]:
    """A head (API), an agent node and two sandbox nodes."""
    nodes = Cluster(initialize_head=True, head_node_args={"num_cpus": 2})
    agent = nodes.add_node(num_cpus=1, resources={"troupe_agent": 100}).node_id
    sandboxes = {nodes.add_node(num_cpus=1, resources={"troupe_sandbox": 1}).node_id for _ in "ab"}
    ray.init(address=nodes.address, namespace=NAMESPACE)
    yield Roles(nodes, agent, sandboxes)
    ray.shutdown()
    nodes.shutdown()


@pytest.fixture(scope="module")
def service(
    roles: Roles, redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, RuntimeSettings]]:
    settings = RuntimeSettings(
        redis_url=redis_server.url,
        key_prefix=f"test-{uuid.uuid4().hex[:8]}",
        namespace=NAMESPACE,
        session_resources={"troupe_agent": 0.01},
        workspace_root=str(tmp_path_factory.mktemp("workspaces")),
        workspace_backend="sandbox",
        tool_timeout=8.0,
    )
    port = find_free_port()
    deployment.deploy(settings, "127.0.0.1", port, proxy_location="HeadOnly")
    yield f"http://127.0.0.1:{port}", settings
    serve.shutdown()


@pytest.fixture
async def api(service: tuple[str, RuntimeSettings]) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=service[0], timeout=60) as client:
        yield client


@pytest.fixture
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer(default_text="done") as server:
        yield server


async def bypass_session(api: httpx.AsyncClient, model: OpenAIWireServer) -> tuple[str, str]:
    """A session in BYPASS mode: nothing asks, so the sandbox alone confines the tools."""
    agent_id, session_id = await make_session(api, model.base_url)
    patched = await api.patch(
        f"/sessions/{session_id}", json={"permission_mode": "bypass"}, headers=USER
    )
    assert patched.status_code == 200, patched.text
    return agent_id, session_id


def bash(command: str, call_id: str = "c1") -> ScriptedReply:
    return ScriptedReply(tool_calls=[(call_id, "Bash", {"command": command})])


def placement(settings: RuntimeSettings) -> dict[str, str]:
    client = redis.Redis.from_url(settings.redis_url)
    try:
        raw = client.hgetall(Keys(settings.key_prefix).workspace_placement())
    finally:
        client.close()
    return {k.decode(): json.loads(v)["node"] for k, v in raw.items()}


def actor_node_and_pid(name: str) -> tuple[str, int]:
    handle = ray.get_actor(name, namespace=NAMESPACE)
    return ray.get(handle.node_id.remote()), ray.get(handle.pid.remote())


def ancestors(pid: int) -> list[int]:
    chain = []
    while pid > 1:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])
        chain.append(pid)
    return chain


def processes_matching(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in cmdline:
            found.append(int(entry.name))
    return found


def session_actor(settings: RuntimeSettings, session_id: str) -> str:
    name = home_name(settings, session_id)
    assert name is not None, f"no actor hosts session {session_id}"
    return name


async def wait_until(condition: object, within: float = 30.0) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while not callable(condition) or not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition never held")
        await asyncio.sleep(0.1)


async def test_tools_run_on_a_sandbox_node_and_sessions_on_the_agent_node(
    api: httpx.AsyncClient,
    roles: Roles,
    service: tuple[str, RuntimeSettings],
    model: OpenAIWireServer,
) -> None:
    agent_id, session_id = await bypass_session(api, model)
    model.push(bash("hostname; echo made > made.txt; echo $TROUPE_SECRET_KEY-$RAY_ADDRESS."))
    frames = (await chat_and_collect(api, agent_id, session_id, "go"))[0]
    assert tool_results(frames) == ["sandbox\n-.\n"]

    [node] = placement(service[1]).values()
    workspace_node, workspace_pid = actor_node_and_pid(workspace_actor_name(node))
    session_node, session_pid = actor_node_and_pid(session_actor(service[1], session_id))
    assert workspace_node == node
    assert node in roles.sandboxes
    assert session_node == roles.agent
    hosts = processes_matching("workspaces.toolhost")
    assert hosts, "the workspace's tool host should stay up between calls"
    for pid in hosts:
        chain = ancestors(pid)
        assert session_pid not in chain
    assert any(workspace_pid in ancestors(pid) for pid in hosts)


def workspace_node(settings: RuntimeSettings, agent_id: str) -> str:
    return placement(settings)[json.dumps(["alice", agent_id])]


async def test_killing_the_workspace_actor_mid_tool_gives_an_error_result(
    api: httpx.AsyncClient, service: tuple[str, RuntimeSettings], model: OpenAIWireServer
) -> None:
    agent_id, session_id = await bypass_session(api, model)
    marker = f"sleep 3{uuid.uuid4().int % 1000}"
    model.push(bash(marker), ScriptedReply(text="recovered"))
    chat = asyncio.create_task(chat_and_collect(api, agent_id, session_id, "go"))
    await wait_until(lambda: bool(processes_matching(marker)))
    _, pid = actor_node_and_pid(workspace_actor_name(workspace_node(service[1], agent_id)))
    os.kill(pid, signal.SIGKILL)
    frames = (await asyncio.wait_for(chat, 60))[0]
    [result] = tool_results(frames)
    assert "workspace host stopped" in result
    await wait_until(lambda: not processes_matching(marker))

    model.push(bash("echo still-usable", "c2"), ScriptedReply(text="ok"))
    frames = (await chat_and_collect(api, agent_id, session_id, "again"))[0]
    assert tool_results(frames) == ["still-usable\n"], [
        (f.type, f.data.get("delta") or f.data.get("error")) for f in frames
    ]


async def test_losing_a_sandbox_node_recreates_its_workspaces_on_another(
    api: httpx.AsyncClient,
    roles: Roles,
    service: tuple[str, RuntimeSettings],
    model: OpenAIWireServer,
) -> None:
    agent_id, session_id = await bypass_session(api, model)
    model.push(bash("echo before"), ScriptedReply(text="ok"))
    await chat_and_collect(api, agent_id, session_id, "first")
    lost = workspace_node(service[1], agent_id)
    [node] = [n for n in roles.cluster.worker_nodes if n.node_id == lost]
    roles.cluster.remove_node(node)

    model.push(bash("echo after", "c2"), ScriptedReply(text="ok"))
    frames = (await chat_and_collect(api, agent_id, session_id, "second"))[0]
    assert tool_results(frames) == ["after\n"], [
        (f.type, f.data.get("error") or f.data.get("delta")) for f in frames
    ]
    moved = workspace_node(service[1], agent_id)
    assert moved != lost
    assert moved in roles.sandboxes
    prompt = json.dumps(model.requests[-1].body["messages"][0])
    assert "re-created on another machine" in prompt


async def test_a_background_call_outlives_its_session_actor(
    api: httpx.AsyncClient, model: OpenAIWireServer, service: tuple[str, RuntimeSettings]
) -> None:
    agent_id, session_id = await bypass_session(api, model)
    model.push(
        bash("sleep 11; echo finished-in-background"),
        ScriptedReply(text="it runs in the background"),
        ScriptedReply(text="noted"),
    )
    frames = (await chat_and_collect(api, agent_id, session_id, "go"))[0]
    assert "running in background" in tool_results(frames)[0]
    _, pid = actor_node_and_pid(session_actor(service[1], session_id))
    os.kill(pid, signal.SIGKILL)

    requests = await asyncio.to_thread(model.wait_for_requests, 3, 60.0)
    assert "finished-in-background" in json.dumps(requests[2].body["messages"])


async def test_a_background_call_whose_workspace_died_is_reported_interrupted(
    api: httpx.AsyncClient, service: tuple[str, RuntimeSettings], model: OpenAIWireServer
) -> None:
    settings = service[1]
    agent_id, session_id = await bypass_session(api, model)
    marker = f"sleep 5{uuid.uuid4().int % 1000}"
    model.push(bash(marker, "bgw"), ScriptedReply(text="It runs in the background."))
    await chat_and_collect(api, agent_id, session_id, "go")  # past the tool timeout
    records = redis.Redis.from_url(settings.redis_url)
    key = Keys(settings.key_prefix).background(session_id)
    try:
        [record] = [json.loads(raw) for raw in records.hvals(key)]
        assert record["runner"] == "workspace"

        # The workspace's process dies with the call; then the session's owner does too.
        model.push(ScriptedReply(text="Told of the crash."))
        _, pid = actor_node_and_pid(workspace_actor_name(workspace_node(settings, agent_id)))
        os.kill(pid, signal.SIGKILL)
        await wait_until(lambda: not processes_matching(marker))
        os.kill(home_pid(settings, session_id, NAMESPACE), signal.SIGKILL)
        frames = await asyncio.wait_for(
            read_frames(
                api,
                f"/sessions/{session_id}/stream",
                USER,
                reply_end_after_text("Told of the crash."),
                params={"after": "0"},
            ),
            90,
        )
        hints = [str(f.data["hint"]) for f in frames if f.type == "HINT_BLOCK"]
        [notice] = [hint for hint in hints if "(id=bgw)" in hint]
        assert INTERRUPTED_BY_RESTART in notice
        assert records.hlen(key) == 0
    finally:
        records.close()
