"""`SessionHosts`: packs sessions onto host actors on the agent nodes, with no settings.

Agent nodes are the nodes advertising the `troupe_agent` resource or the label
`troupe.io/node-role=agent` (or every resource of `session_resources`, when set); without such
nodes (a laptop) every alive node that is not a sandbox node, else every alive node. Each
agent node runs host actors pinned to it (`session-host:{prefix}:{node}:{k}`), each running up to
`session_host_capacity` sessions. A session is placed on the least-loaded host when first
woken (`HostPlacement` keeps the placement in Redis for every process to read) and stays
there until its host closes it as idle.

Hosts are pre-warmed: every agent node keeps a started host with room to spare, and the next
host is started in the background while the current ones still have room, so a new session is
never waiting for a process to start. When an agent node leaves, `maintain` forgets its hosts
and their placements (the sessions are placed afresh on their next wake; the sweeper wakes
those with work waiting); when one joins, it gets hosts and, being the least loaded, the next
sessions. Agents that ask for isolation get an actor of their own (`session:{id}`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import ray
from ray.exceptions import RayError
from redis.asyncio import Redis

from actors.bus.keys import Keys
from actors.errors import SessionUnavailable
from actors.sessions.placement import DEDICATED, HostPlacement
from actors.settings import RuntimeSettings
from actors.workspaces.ray_service import is_sandbox_node

log = logging.getLogger(__name__)

AGENT_RESOURCE = "troupe_agent"
AGENT_LABEL = ("troupe.io/node-role", "agent")

_NODES_TTL = 2.0
_PLACE_ATTEMPTS = 4
_KNOWN_TTL = 5.0
"""Seconds a host found for a session is reused by `hosts_of(..., reuse=True)`."""


def session_actor_name(session_id: str) -> str:
    """Ray actor name of a session that has an actor of its own."""
    return f"session:{session_id}"


def host_actor_name(key_prefix: str, node_id: str, index: int) -> str:
    """Ray actor name of a deployment's `index`-th session host pinned to a node."""
    return f"session-host:{key_prefix}:{node_id[:16]}:{index}"


def is_agent_node(node: dict[str, Any], resources: dict[str, float]) -> bool:
    """Whether a `ray.nodes()` entry is meant for sessions."""
    labels = node.get("Labels") or {}
    if labels.get(AGENT_LABEL[0]) == AGENT_LABEL[1]:
        return True
    offered = node.get("Resources") or {}
    wanted = resources or {AGENT_RESOURCE: 0.0}
    return all(float(offered.get(name, 0)) > 0 for name in wanted)


class SessionHosts:
    """Where each session runs, and the host actors that run them (see the module docstring).

    Used by every process that wakes sessions; state shared between processes is in Redis.
    """

    def __init__(self, settings: RuntimeSettings, redis: Redis) -> None:
        self._settings = settings
        self._redis = redis
        self._keys = Keys(settings.key_prefix)
        self.placement = HostPlacement(redis, self._keys)
        self._nodes: tuple[float, list[str]] = (0.0, [])
        # Nodes Ray refused to schedule on although still listed alive (a node that died is
        # reported dead only after a while); node ids are never reused.
        self._lost: set[str] = set()
        self._handles: dict[str, Any] = {}
        # Hosts found for sessions: when, the host, and its node (None: a dedicated actor).
        self._known: dict[str, tuple[float, str, str | None]] = {}
        self._growing: dict[str, asyncio.Task[None]] = {}
        self._prewarming: asyncio.Task[None] | None = None

    @property
    def capacity(self) -> int:
        """Sessions one host runs at most."""
        return self._settings.session_host_capacity

    # nodes and hosts
    async def agent_nodes(self) -> list[str]:
        """The alive nodes that run sessions (cached for a moment)."""
        stamp, nodes = self._nodes
        if time.monotonic() - stamp > _NODES_TTL or not nodes:
            alive = [n for n in await asyncio.to_thread(ray.nodes) if n.get("Alive")]
            alive = [n for n in alive if str(n["NodeID"]) not in self._lost]
            wanted = self._settings.session_resources
            chosen = [n for n in alive if is_agent_node(n, wanted)]
            chosen = chosen or [n for n in alive if not is_sandbox_node(n)] or alive
            nodes = sorted(str(n["NodeID"]) for n in chosen)
            self._nodes = (time.monotonic(), nodes)
        return nodes

    async def live_hosts(self) -> dict[str, str]:
        """Registered hosts on agent nodes that are alive: name -> node."""
        nodes = set(await self.agent_nodes())
        return {h: n for h, n in (await self.placement.hosts()).items() if n in nodes}

    async def handle(self, name: str) -> Any:
        """The actor called `name` (a host, or a dedicated session actor if it exists)."""
        handle = self._handles.get(name)
        if handle is None:
            handle = await asyncio.to_thread(ray.get_actor, name, self._settings.namespace)
            self._handles[name] = handle
        return handle

    def forget_handle(self, name: str) -> None:
        """Drop a cached handle (its actor died)."""
        self._handles.pop(name, None)

    async def _start_host(self, node: str, index: int) -> str:
        from actors._remote.session_actor import session_host_actor

        name = host_actor_name(self._settings.key_prefix, node, index)
        handle = await asyncio.to_thread(session_host_actor, self._settings, name, node)
        await handle.ready.remote()
        await self.placement.register(name, node)
        self._handles[name] = handle
        return name

    async def _grow(self, node: str) -> None:
        """Start one more host on `node` (one growth per node at a time) and wait for it."""
        task = self._growing.get(node)
        if task is None or task.done():
            task = asyncio.get_running_loop().create_task(self._add_host(node))
            self._growing[node] = task
        await asyncio.shield(task)

    async def _add_host(self, node: str) -> None:
        taken = {h for h, n in (await self.placement.hosts()).items() if n == node}
        prefix = self._settings.key_prefix
        index = next(
            i for i in range(len(taken) + 1) if host_actor_name(prefix, node, i) not in taken
        )
        try:
            await self._start_host(node, index)
        except RayError as exc:
            log.warning("could not start a session host on node %s: %s", node, exc)
            self.node_lost(node)

    def node_lost(self, node: str) -> None:
        """Stop placing sessions on `node` (Ray refused it, or it is gone)."""
        self._lost.add(node)
        self._nodes = (0.0, [])

    async def prewarm(self) -> None:
        """Make every agent node hold a started host with room to spare; wait for them."""
        hosts = await self.live_hosts()
        loads = await self.placement.loads(list(hosts))
        spare = max(1, self.capacity // 4)
        needy = []
        for node in await self.agent_nodes():
            room = sum(self.capacity - loads[h] for h, n in hosts.items() if n == node)
            if room < spare:
                needy.append(node)
        await asyncio.gather(*(self._grow(node) for node in needy))

    def _prewarm_soon(self) -> None:
        if self._prewarming is None or self._prewarming.done():
            self._prewarming = asyncio.get_running_loop().create_task(self.prewarm())
            self._prewarming.add_done_callback(_log_failure)

    async def maintain(self) -> list[str]:
        """Forget hosts on nodes that left and pre-warm the agent nodes.

        Returns the sessions whose host was forgotten (they are placed afresh when woken).
        """
        nodes = set(await self.agent_nodes())
        moved: list[str] = []
        for host, node in (await self.placement.hosts()).items():
            if node not in nodes and not await _node_alive(node):
                log.warning("session host %s left with its node %s", host, node)
                moved += await self.placement.unregister(host)
                self.forget_handle(host)
        await self.prewarm()
        return moved

    # sessions
    async def host_of(self, session_id: str) -> str:
        """The actor name to wake the session at, placing the session if needed.

        Raises:
            SessionUnavailable: no agent node could take the session.
        """
        return (await self.hosts_of([session_id]))[session_id]

    async def hosts_of(self, session_ids: list[str], reuse: bool = False) -> dict[str, str]:
        """`host_of` for many sessions, reading their placements in one round trip.

        With `reuse`, a host found for a session within the last few seconds is taken without
        reading, unless its node left: for a wake, whose answer tells when the session is no
        longer there (the waker then calls `forget_hosts` and asks again).

        Raises:
            SessionUnavailable: no agent node could take a session.
        """
        now = time.monotonic()
        found = await self._reusable(session_ids, now) if reuse else {}
        unknown = [session_id for session_id in session_ids if session_id not in found]
        if not unknown:
            return found
        currents = await self.placement.current_many(unknown)
        hosts = await self.live_hosts()
        for session_id, current in zip(unknown, currents, strict=True):
            if current == DEDICATED:
                found[session_id] = session_actor_name(session_id)
            elif current is not None and current in hosts:
                found[session_id] = current
            else:
                found[session_id] = await self._place(session_id, current)
            host = found[session_id]
            if current == DEDICATED or host in hosts:
                self._known[session_id] = (now, host, hosts.get(host))
        if len(self._known) > 4 * max(1, len(hosts)) * self.capacity:
            self._known = {s: k for s, k in self._known.items() if now - k[0] < _KNOWN_TTL}
        return found

    async def _reusable(self, session_ids: list[str], now: float) -> dict[str, str]:
        """The hosts found lately for these sessions, on nodes still running sessions."""
        nodes = set(await self.agent_nodes())
        found: dict[str, str] = {}
        for session_id in session_ids:
            known = self._known.get(session_id)
            if known is None or now - known[0] >= _KNOWN_TTL:
                continue
            _, host, node = known
            if node is None or node in nodes:
                found[session_id] = host
        return found

    def forget_hosts(self, session_ids: list[str]) -> None:
        """Drop the hosts found for these sessions (a wake failed there, or they moved)."""
        for session_id in session_ids:
            self._known.pop(session_id, None)

    async def _place(self, session_id: str, current: str | None) -> str:
        if current is None and await self._wants_dedicated(session_id):
            await self.placement.dedicate(session_id)
            return session_actor_name(session_id)
        for _ in range(_PLACE_ATTEMPTS):
            hosts = await self.live_hosts()
            if current in hosts:
                return current
            placed = await self.placement.place(session_id, current, hosts, self.capacity)
            if placed.raced:
                current = placed.host
                continue
            if placed.host is not None:
                await self._after_placing(hosts)
                return placed.host
            await self._grow(await self._emptiest_node(hosts))
        raise SessionUnavailable(f"no session host could take session {session_id}")

    async def _after_placing(self, hosts: dict[str, str]) -> None:
        """Start the next host in the background once the room left runs low."""
        loads = await self.placement.loads(list(hosts))
        room = sum(self.capacity - load for load in loads.values())
        if room < max(1, self.capacity // 4) * max(1, len(set(hosts.values()))):
            self._prewarm_soon()

    async def _emptiest_node(self, hosts: dict[str, str]) -> str:
        nodes = await self.agent_nodes()
        if not nodes:
            raise SessionUnavailable("no alive node can run sessions")
        loads = await self.placement.loads(list(hosts))
        per_node = dict.fromkeys(nodes, 0)
        for host, node in hosts.items():
            per_node[node] += loads[host] - self.capacity
        return min(nodes, key=lambda n: (per_node[n], n))

    async def _wants_dedicated(self, session_id: str) -> bool:
        """Whether the session's agent asked for an actor of its own."""
        raw = await self._redis.get(self._keys.session(session_id))
        if raw is None:
            return False
        agent = await self._redis.get(self._keys.agent(json.loads(raw)["agent_id"]))
        return agent is not None and bool(json.loads(agent)["data"].get("dedicated_process"))

    async def host_failed(self, host: str) -> None:
        """A call to `host` failed: forget it if its node is gone (its sessions move)."""
        self.forget_handle(host)
        node = (await self.placement.hosts()).get(host)
        if node is None:
            return
        if not await _node_alive(node):
            self.node_lost(node)
        elif await _actor_exists(host, self._settings.namespace):
            return  # Ray restarts it; the restarted host takes its sessions back on demand
        log.warning("session host %s is gone; its sessions move", host)
        await self.placement.unregister(host)

    async def close(self) -> None:
        """Stop background host starts."""
        tasks = [t for t in [*self._growing.values(), self._prewarming] if t and not t.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._handles.clear()


async def _node_alive(node: str) -> bool:
    nodes = await asyncio.to_thread(ray.nodes)
    return any(str(n["NodeID"]) == node and n.get("Alive") for n in nodes)


async def _actor_exists(name: str, namespace: str) -> bool:
    try:
        await asyncio.to_thread(ray.get_actor, name, namespace)
    except ValueError:
        return False
    return True


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("pre-warming session hosts failed", exc_info=task.exception())
