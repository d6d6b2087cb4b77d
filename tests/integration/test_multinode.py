"""Sessions spread over a multi-node Ray cluster and stay on the nodes meant for them."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
import ray
from ray import serve
from ray.cluster_utils import Cluster

from actors._ports import find_free_port
from actors._remote import session_actor_name
from actors.embedded_redis import EmbeddedRedis
from actors.settings import RuntimeSettings
from serve import deployment
from tests.support.api import chat_and_collect, make_session
from tests.support.openai_server import OpenAIWireServer

pytestmark = [pytest.mark.integration, pytest.mark.ray, pytest.mark.redis]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A head (API) and two agent nodes carrying the `troupe_agent` resource."""
    nodes = Cluster(initialize_head=True, head_node_args={"num_cpus": 2})
    for _ in range(2):
        nodes.add_node(num_cpus=1, resources={"troupe_agent": 100})
    ray.init(address=nodes.address, namespace="troupe-test")
    yield nodes
    ray.shutdown()
    nodes.shutdown()


@pytest.fixture(scope="module")
def base_url(cluster: Cluster, redis_server: EmbeddedRedis) -> Iterator[str]:
    settings = RuntimeSettings(
        redis_url=redis_server.url,
        key_prefix=f"test-{uuid.uuid4().hex[:8]}",
        namespace="troupe-test",
        session_resources={"troupe_agent": 0.01},
    )
    port = find_free_port()
    deployment.deploy(settings, "127.0.0.1", port, proxy_location="HeadOnly")
    yield f"http://127.0.0.1:{port}"
    serve.shutdown()


@pytest.fixture
async def api(base_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
        yield client


async def test_sessions_spread_over_agent_nodes(api: httpx.AsyncClient, cluster: Cluster) -> None:
    agent_nodes = {n.node_id for n in cluster.worker_nodes}
    with OpenAIWireServer(default_text="hi") as model:
        sessions = [await make_session(api, model.base_url) for _ in range(6)]
        await asyncio.gather(
            *(chat_and_collect(api, agent_id, sid, "hello") for agent_id, sid in sessions)
        )
    homes = [
        ray.get(ray.get_actor(session_actor_name(sid), namespace="troupe-test").node_id.remote())
        for _, sid in sessions
    ]
    assert set(homes) <= agent_nodes  # never on the head
    assert set(homes) == agent_nodes  # spread over both agent nodes
