"""`cluster_status`: what runs where: Ray nodes, session hosts with their sessions, inbox depths.

Read for operators (`GET /admin/status`, `troupe status`). Nodes and hosts come from Ray (the
GCS: named actors of the deployment's namespace, each asked what it hosts); inbox depths come
from Redis. Without Ray in this process (the in-process dispatcher) only the inboxes are known.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Literal

import ray
from pydantic import ConfigDict, Field

from actors._remote.session_actor import SESSION_ACTOR_PREFIXES
from actors.bus.message_bus import RedisMessageBus
from agent_core.deferred_model import DeferredModel

log = logging.getLogger(__name__)

_ROLE_LABEL = "troupe.io/node-role"
_HOST_TIMEOUT_S = 5.0


class NodeStatus(DeferredModel):
    """One Ray node."""

    model_config = ConfigDict(extra="forbid")

    node_id: str = Field(description="Ray node id.")
    address: str = Field(description="The node's IP address.")
    alive: bool = Field(description="Whether Ray sees the node alive.")
    role: str = Field(description="Its `troupe.io/node-role` label (head, agent, sandbox), or ''.")
    resources: dict[str, float] = Field(description="The node's total resources.")


class HostStatus(DeferredModel):
    """One actor hosting sessions."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Ray actor name (`session:{id}` or a shared host's).")
    node_id: str = Field(description="The node it runs on ('' when it did not answer).")
    sessions: list[str] = Field(description="Sessions live in it now.")
    reachable: bool = Field(default=True, description="Whether it answered in time.")


class InboxStatus(DeferredModel):
    """A session with undelivered items."""

    model_config = ConfigDict(extra="forbid")

    session_id: str = Field(description="The session.")
    depth: int = Field(description="Items in its inbox (the reply in progress included).")


class ClusterStatus(DeferredModel):
    """The deployment at a glance."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["cluster_status"] = "cluster_status"
    nodes: list[NodeStatus] = Field(description="Ray nodes (empty without Ray).")
    hosts: list[HostStatus] = Field(description="Session hosts (empty without Ray).")
    live_sessions: int = Field(description="Sessions live in the hosts.")
    inboxes: list[InboxStatus] = Field(description="Non-empty inboxes, deepest first.")


def _nodes() -> list[NodeStatus]:
    return [
        NodeStatus(
            node_id=node["NodeID"],
            address=node.get("NodeManagerAddress", ""),
            alive=bool(node.get("Alive")),
            role=(node.get("Labels") or {}).get(_ROLE_LABEL, ""),
            resources={k: float(v) for k, v in (node.get("Resources") or {}).items()},
        )
        for node in ray.nodes()
    ]


async def _host(name: str, namespace: str) -> HostStatus:
    try:
        handle = ray.get_actor(name, namespace=namespace)
        async with asyncio.timeout(_HOST_TIMEOUT_S):
            node_id, sessions = await asyncio.gather(
                handle.node_id.remote(), handle.hosted.remote()
            )
    except (ValueError, TimeoutError, ray.exceptions.RayError):
        return HostStatus(name=name, node_id="", sessions=[], reachable=False)
    return HostStatus(name=name, node_id=node_id, sessions=sorted(sessions))


async def _hosts(namespace: str) -> list[HostStatus]:
    named: list[dict[str, Any]] = await asyncio.to_thread(
        ray.util.list_named_actors, all_namespaces=True
    )
    names = sorted(
        entry["name"]
        for entry in named
        if entry["namespace"] == namespace and entry["name"].startswith(SESSION_ACTOR_PREFIXES)
    )
    return list(await asyncio.gather(*(_host(name, namespace) for name in names)))


async def _inboxes(bus: RedisMessageBus) -> list[InboxStatus]:
    sessions = await bus.sessions_with_inbox()
    depths = await asyncio.gather(*(bus.inbox_depth(s) for s in sessions))
    found = [InboxStatus(session_id=s, depth=d) for s, d in zip(sessions, depths, strict=True)]
    return sorted((i for i in found if i.depth), key=lambda i: (-i.depth, i.session_id))


async def cluster_status(bus: RedisMessageBus, namespace: str) -> ClusterStatus:
    """Nodes, session hosts and non-empty inboxes of the deployment (namespace, bus)."""
    nodes: list[NodeStatus] = []
    hosts: list[HostStatus] = []
    if ray.is_initialized():
        nodes = await asyncio.to_thread(_nodes)
        hosts = await _hosts(namespace)
    return ClusterStatus(
        nodes=nodes,
        hosts=hosts,
        live_sessions=sum(len(host.sessions) for host in hosts),
        inboxes=await _inboxes(bus),
    )
