"""`SessionActor`s host session runtimes; `RayDispatcher` wakes sessions through them."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import ray
from ray.exceptions import RayActorError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
from redis.asyncio import Redis

from actors.bus.redis_connect import connect
from actors.errors import SessionUnavailable
from actors.ops import metrics
from actors.sessions.extensions import AgentExtensions
from actors.sessions.hosts import SessionHosts, session_actor_name
from actors.sessions.placement import DEDICATED
from actors.sessions.user_agents import UserAgents
from actors.sessions.wake_listener import WakeListener
from actors.settings import RuntimeSettings
from actors.wiring import wire
from actors.workspaces.ray_service import RayWorkspaceService
from actors.workspaces.session_workspaces import SessionWorkspaces

if TYPE_CHECKING:
    from actors.schedules.service import ScheduleService
    from actors.sessions.runtime import SessionRuntime

log = logging.getLogger(__name__)

_WAKE_ATTEMPTS = 3
_FILE_CHUNKS_AHEAD = 8


SESSION_ACTOR_PREFIXES = ("session:", "session-host:")
"""How the names of actors hosting sessions begin (`cluster_status` finds them by it)."""
_WAKE_TIMEOUT = 30.0


@ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=3)
class SessionActor:
    """Hosts `SessionRuntime`s in a Ray worker process: a host's share of sessions, or one.

    A session host (`host` = its actor name) is pinned to an agent node, stays up and closes
    sessions that went idle, releasing their placement (`HostPlacement`). A dedicated actor
    (`host` None, named `session:{id}`) runs the one session of an agent that asked for
    isolation and exits when it hibernates. Ray restarts a dead actor; a restarted host
    releases the sessions it held, which are placed afresh when next woken (the sweeper wakes
    those with work waiting) and close the replies the crash cut short.
    """

    def __init__(self, settings: dict[str, Any], host: str | None) -> None:
        self._settings = RuntimeSettings.model_validate(settings)
        self._host = host
        self._extensions = AgentExtensions(
            self._settings.agent_middlewares, self._settings.agent_tools
        )
        parts = wire(self._settings, functools.partial(RayDispatcher, self._settings))
        self._keys = parts.keys
        self._redis = parts.redis
        self._storage = parts.storage
        self._dispatcher = parts.dispatcher
        self._placement = self._dispatcher.hosts.placement
        self._mailbox = parts.mailbox
        self._workspaces = SessionWorkspaces(RayWorkspaceService(self._settings, self._redis))
        self._parts = parts
        self._schedules: ScheduleService | None = None
        self._user_agents = UserAgents(self._storage)
        self._runtimes: dict[str, SessionRuntime] = {}
        self._name = ray.get_runtime_context().get_actor_name() or "session-host"
        self._last_active: dict[str, float] = {}
        self._idle_watch: asyncio.Task[None] | None = None
        self._start: asyncio.Task[None] | None = None
        self._resume: asyncio.Task[dict[str, str]] | None = None
        self._wakes: WakeListener | None = None
        context = ray.get_runtime_context()
        if context.was_current_actor_reconstructed:
            # Resume the replies the crash cut as soon as this process serves, rather than when
            # a sweep or a delivery first calls it (seconds later).
            context.current_actor.ready.remote()

    async def _started(self) -> None:
        """Once per process: a (re)started host gives up the sessions it held before."""
        if self._start is None:
            self._start = asyncio.get_running_loop().create_task(self._release_held())
        await asyncio.shield(self._start)

    async def _release_held(self) -> None:
        context = ray.get_runtime_context()
        held: list[str] = []
        if self._host is not None:
            held = await self._placement.release_all(self._host)
            if held:
                log.warning("host %s restarted: %d sessions released", self._host, len(held))
        elif context.was_current_actor_reconstructed:
            held = [self._name.removeprefix(session_actor_name(""))]
        loop = asyncio.get_running_loop()
        self._idle_watch = loop.create_task(self._watch_idle())
        if self._host is not None:
            channel = self._keys.host_wakes(self._host)
            self._wakes = WakeListener(self._redis, channel, self._signalled)
            self._wakes.start()
        if context.was_current_actor_reconstructed and held:
            # Their replies were cut: resume them now rather than at the next sweep.
            waiting = set(await self._mailbox.bus.sessions_with_inbox())
            cut = [session_id for session_id in held if session_id in waiting]
            if cut:
                self._resume = loop.create_task(self.wake(cut))

    async def _signalled(self, session_ids: list[str]) -> None:
        """Wake sessions whose new inbox items were signalled here (`WakeListener`)."""
        elsewhere = await self.wake(session_ids)
        if elsewhere:  # moved since the write read the placement: wake them where they are
            await self._dispatcher.wake_many(list(elsewhere))

    async def ready(self) -> str:
        """Return the node id once the actor is started (used to pre-warm hosts)."""
        await self._started()
        return str(ray.get_runtime_context().get_node_id())

    def _runtime(self, session_id: str) -> SessionRuntime:
        runtime = self._runtimes.get(session_id)
        if runtime is None:
            # The agent loop and the schedule service load with the first session hosted: a
            # pre-warmed host (or a workspace actor importing the dispatcher) does not carry
            # them in memory until then.
            from actors.schedules.service import ScheduleService
            from actors.sessions.runtime import SessionRuntime

            if self._schedules is None:
                self._schedules = ScheduleService.build(self._parts)

            runtime = self._runtimes[session_id] = SessionRuntime(
                session_id,
                self._storage,
                self._mailbox,
                self._workspaces,
                templates=self._settings.sub_agent_templates,
                tool_timeout=self._settings.tool_timeout,
                schedules=self._schedules,
                extensions=self._extensions,
                outage_grace=self._settings.stream_outage_grace,
                user_agents=self._user_agents,
            )
        return runtime

    async def wake(self, session_ids: list[str]) -> dict[str, str]:
        """Drain the sessions' inboxes (in the background); return those held elsewhere.

        A session another host holds is not run here: the result maps it to that host.
        """
        await self._started()
        elsewhere: dict[str, str] = {}
        now = time.monotonic()
        for session_id in session_ids:
            if self._host is not None and session_id not in self._runtimes:
                holder = await self._placement.claim(session_id, self._host)
                if holder != self._host:
                    elsewhere[session_id] = holder
                    continue
            self._last_active[session_id] = now
            await self._runtime(session_id).wake()
        metrics.host_sessions(self._name, len(self._runtimes))
        if self._host is None and session_ids:
            await self._redis.zadd(self._keys.live(), dict.fromkeys(session_ids, time.time()))
            await self._enforce_live_cap(session_ids[0])
        return elsewhere

    async def interrupt(self, session_id: str) -> bool:
        """Interrupt the session's running reply; return whether one was running."""
        self._last_active[session_id] = time.monotonic()
        runtime = self._runtimes.get(session_id)
        return runtime is not None and await runtime.interrupt()

    async def wait_idle(self, session_id: str) -> None:
        """Return once the session's inbox drain in progress, if any, has finished."""
        runtime = self._runtimes.get(session_id)
        if runtime is not None:
            await runtime.wait_idle()

    def sessions(self) -> list[str]:
        """The sessions live here (for operations and tests)."""
        return list(self._runtimes)

    async def stop(self, session_id: str) -> None:
        """Close one session hosted here (it is idle, or being deleted)."""
        runtime = self._runtimes.pop(session_id, None)
        self._last_active.pop(session_id, None)
        metrics.host_sessions(self._name, len(self._runtimes))
        if runtime is not None:
            await runtime.close()
        # A delivery may have re-activated the session here while it closed: then it stays.
        if self._host is not None and session_id not in self._runtimes:
            await self._placement.release(session_id, self._host)

    async def hibernate(self, force: bool = False) -> bool:
        """Close idle sessions (all of them when `force`); a dedicated actor then exits.

        Returns False (and stays) when a session is busy or its inbox holds items.
        """
        for session_id, runtime in list(self._runtimes.items()):
            if not force and (runtime.busy or await runtime.has_pending()):
                return False
            await self.stop(session_id)
            await self._redis.zrem(self._keys.live(), session_id)
        if self._host is not None:
            return True
        await self._dispatcher.close()
        await self._redis.aclose()
        # exit_actor() would count as a crash under max_restarts; kill without restart instead.
        me = ray.get_runtime_context().current_actor
        await asyncio.to_thread(ray.kill, me, no_restart=True)
        return True

    def pid(self) -> int:
        """The worker process id (for operations and fault-injection tests)."""
        return os.getpid()

    def node_id(self) -> str:
        """The Ray node the actor runs on (for operations)."""
        return str(ray.get_runtime_context().get_node_id())

    def hosted(self) -> list[str]:
        """The sessions live here now (for operations: `troupe status`)."""
        return list(self._runtimes)

    async def _watch_idle(self) -> None:
        ttl = self._settings.idle_ttl
        while True:
            await asyncio.sleep(min(ttl / 4, 5.0))
            now = time.monotonic()
            for session_id, runtime in list(self._runtimes.items()):
                idle = now - self._last_active.get(session_id, now) >= ttl
                if not idle or runtime.busy:
                    continue
                if self._host is None:
                    if await self.hibernate():
                        return
                elif not await runtime.has_pending():
                    await self.stop(session_id)

    async def _enforce_live_cap(self, current: str) -> None:
        excess = await self._redis.zcard(self._keys.live()) - self._settings.max_live_sessions
        if excess <= 0:
            return
        for raw in await self._redis.zrange(self._keys.live(), 0, excess - 1):
            session_id = raw.decode()
            if session_id == current:
                continue
            await self._redis.zrem(self._keys.live(), session_id)
            try:
                actor = ray.get_actor(
                    session_actor_name(session_id), namespace=self._settings.namespace
                )
            except ValueError:
                continue
            actor.hibernate.remote()


def session_host_actor(settings: RuntimeSettings, name: str, node_id: str) -> Any:
    """Get or create the session host actor `name` pinned to `node_id` (blocking)."""
    return SessionActor.options(  # type: ignore[attr-defined]
        name=name,
        namespace=settings.namespace,
        get_if_exists=True,
        lifetime="detached",
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
    ).remote(settings.model_dump(), name)


class RayDispatcher:
    """Wakes sessions by poking the actors hosting them (`SessionHosts` places them)."""

    def __init__(self, settings: RuntimeSettings, redis: Redis | None = None) -> None:
        self._settings = settings
        self._payload = settings.model_dump()
        self._redis = redis or connect(settings.redis_url)
        self._owns_redis = redis is None
        self.hosts = SessionHosts(settings, self._redis)
        self._pending: set[asyncio.Task[None]] = set()

    async def _actor(self, name: str, session_id: str) -> Any:
        """The actor `name`; a dedicated session's is created if needed."""
        if name != session_actor_name(session_id):
            return await self.hosts.handle(name)
        return await asyncio.to_thread(self._dedicated, session_id)

    def _dedicated(self, session_id: str) -> Any:
        return SessionActor.options(  # type: ignore[attr-defined]
            name=session_actor_name(session_id),
            namespace=self._settings.namespace,
            get_if_exists=True,
            lifetime="detached",
            resources=self._settings.session_resources,
            # Sessions wait on I/O, not CPU: spread them so no node carries them all.
            scheduling_strategy="SPREAD",
        ).remote(self._payload, None)

    async def wake(self, session_id: str) -> None:
        """Poke the session's host (placing the session if needed) without waiting for it."""
        await self.wake_many([session_id])

    async def wake_many(self, session_ids: list[str]) -> None:
        """Poke many sessions' hosts: one call per host, confirmed in the background.

        Callers (a leader spawning workers, a chat request) do not wait for the sessions to
        start. Delivery is confirmed in the background and retried if a host turns out to be
        dead (its sessions move); the sweeper covers anything still missed.

        Raises:
            SessionUnavailable: no agent node could take a session.
        """
        groups: dict[str, list[str]] = {}
        for session_id, name in (
            await self.hosts.hosts_of(list(dict.fromkeys(session_ids)), reuse=True)
        ).items():
            groups.setdefault(name, []).append(session_id)
        for name, group in groups.items():
            task = asyncio.get_running_loop().create_task(self._confirm(name, group))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)

    async def _confirm(self, name: str, group: list[str]) -> None:
        for attempt in range(_WAKE_ATTEMPTS):
            try:
                actor = await self._actor(name, group[0])
                elsewhere = await asyncio.wait_for(actor.wake.remote(group), _WAKE_TIMEOUT)
            except (RayActorError, TimeoutError, ValueError) as exc:
                log.info("waking %d session(s) at %s failed: %r", len(group), name, exc)
                self.hosts.forget_hosts(group)
                await self.hosts.host_failed(name)
            else:
                if not elsewhere:
                    return
                # Another host held them (a stale placement read): wake them there.
                self.hosts.forget_hosts(list(elsewhere))
                for session_id, holder in elsewhere.items():
                    with contextlib.suppress(Exception):
                        handle = await self.hosts.handle(holder)
                        await handle.wake.remote([session_id])
                return
            if attempt < _WAKE_ATTEMPTS - 1:
                await asyncio.sleep(0.2 * 2**attempt)
                try:
                    name = await self.hosts.host_of(group[0])
                except SessionUnavailable:
                    continue
        log.warning("%d session(s) could not be woken; the sweeper will retry", len(group))

    async def _current_actor(self, session_id: str) -> Any | None:
        name = await self.hosts.placement.current(session_id)
        if name is None:
            return None
        if name == DEDICATED:
            name = session_actor_name(session_id)
        try:
            return await self.hosts.handle(name)
        except ValueError:
            return None

    async def interrupt(self, session_id: str) -> bool:
        """Interrupt the session's running reply, if its host is live."""
        handle = await self._current_actor(session_id)
        if handle is None:
            return False
        try:
            return bool(await handle.interrupt.remote(session_id))
        except RayActorError:
            return False

    async def stop(self, session_id: str) -> None:
        """Stop the session (it is being deleted): its host closes it, its own actor is killed."""
        dedicated = await self.hosts.placement.current(session_id) == DEDICATED
        handle = await self._current_actor(session_id)
        if handle is not None:
            with contextlib.suppress(RayActorError):
                if dedicated:
                    self.hosts.forget_handle(session_actor_name(session_id))
                    await asyncio.to_thread(ray.kill, handle, no_restart=True)
                else:
                    await handle.stop.remote(session_id)
        await self.hosts.placement.forget(session_id)
        self.hosts.forget_hosts([session_id])

    async def maintain(self) -> None:
        """Move sessions off hosts whose node left, and pre-warm hosts on every agent node."""
        await self.hosts.maintain()

    def health_checks(self) -> dict[str, Callable[[], Awaitable[str]]]:
        """Ray: its control store answers and names a live node."""
        return {"ray": _ray_health}

    async def close(self) -> None:
        """Forget cached actor handles (the actors live on) and pending wake confirmations."""
        for task in list(self._pending):
            task.cancel()
        await asyncio.gather(*self._pending, return_exceptions=True)
        await self.hosts.close()
        if self._owns_redis:
            await self._redis.aclose()


async def _ray_health() -> str:
    if not ray.is_initialized():
        return "unavailable: Ray is not initialised in this process"
    # A blocking call to Ray's control store (it waits while the store is down).
    nodes = await asyncio.to_thread(ray.nodes)
    alive = sum(1 for node in nodes if node.get("Alive"))
    return f"ok ({alive} nodes)" if alive else "unavailable: no live Ray node"
