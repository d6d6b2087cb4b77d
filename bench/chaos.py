"""Chaos: sessions chatting through faults, audited for lost, duplicated, stuck and error turns.

N sessions x T turns against the full stack (Serve, Ray session actors, Redis) with a model
server that answers in about a second; some turns start a background Bash probe. Mid-run one
fault strikes:

* ``actor``   — SIGKILL of the session hosts (or dedicated actors) replying at that moment;
* ``replica`` — SIGKILL of the Serve replica(s);
* ``redis``   — Redis stopped for ~2 s and restarted while replies run;
* ``all``     — SIGKILL of a whole `troupe serve` process group (its Ray head and workers, the
  API, its embedded Redis) while background probes run, then a restart on the same data dir.

Then every session is audited: its transcript (each turn's input answered once), its event log
(`actors.ops.audit`: one end per reply, nothing answered twice) and its error replies; and the time
from the fault to each faulted session's next completed reply.

Run: python bench/chaos.py [--fault actor|replica|redis|all] [--sessions 20] [--turns 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import ray
from _harness import service_stack
from _serve_proc import serve_process
from ray._private import state as ray_state

from actors.bus.keys import Keys
from actors.bus.message_bus import RedisMessageBus
from actors.bus.redis_connect import connect
from actors.ops.audit import audit_session
from actors.sessions.background_calls import INTERRUPTED_BY_RESTART
from actors.storage.redis_storage import RedisStorage
from tests.support.api import make_session, post_chat
from tests.support.openai_server import ScriptedReply
from tests.support.ray_actors import home_name

USER = {"X-User-ID": "chaos"}
PROBE = "probe"
TURN_DEADLINE = 90.0
ACCEPT_ATTEMPTS = 240  # x 0.5 s: a whole server restarts within this
REPLY_CUT = "restarted while this tool call was running"  # a call cut within its reply
TOOL_TIMEOUT = {"all": 10.0}  # `troupe serve`'s default; the in-process stack's is 1 s


def answerer(probe_seconds: float) -> Callable[[dict[str, Any]], ScriptedReply]:
    """About a second per answer; a probe turn first starts a Bash command that outlasts the
    tool timeout (it finishes in the background `probe_seconds` after it started)."""

    def answer(body: dict[str, Any]) -> ScriptedReply:
        last = (body.get("messages") or [{}])[-1]
        text = str(last.get("content", ""))
        if last.get("role") == "user" and PROBE in text and "system-notification" not in text:
            command = {"command": f"sleep {probe_seconds:g} && echo probe-done", "description": "p"}
            call = (f"p{time.monotonic_ns()}", "Bash", command)
            return ScriptedReply(tool_calls=[call], delay=0.5)
        return ScriptedReply(text="Answer to the turn.", delay=0.5, chunk_delay=0.1)

    return answer


@dataclass
class Session:
    agent_id: str
    session_id: str
    sent: list[str] = field(default_factory=list)
    stuck: bool = False
    refusals: list[str] = field(default_factory=list)
    replies_done: list[float] = field(default_factory=list)


async def wait_answered(api: httpx.AsyncClient, session: Session, text: str) -> bool:
    """Wait until `text` has an assistant reply after it; False if it never gets one."""
    deadline = time.monotonic() + TURN_DEADLINE
    while time.monotonic() < deadline:
        try:
            page = await api.get(f"/sessions/{session.session_id}/messages?limit=200", headers=USER)
        except httpx.HTTPError:  # the API itself may be down (replica fault)
            await asyncio.sleep(0.25)
            continue
        if page.status_code == 200:
            history = page.json()["messages"]
            texts = [_text(m) for m in history]
            if text in texts and any(
                m["role"] == "assistant" for m in history[texts.index(text) + 1 :]
            ):
                session.replies_done.append(time.monotonic())
                return True
        await asyncio.sleep(0.25)
    return False


async def drive(api: httpx.AsyncClient, session: Session, turns: int) -> None:
    for turn in range(turns):
        text = f"{session.session_id} turn {turn}" + (f" {PROBE}" if turn == 1 else "")
        # Retried under one key: a post accepted just before a fault is not delivered twice.
        headers = {**USER, "Idempotency-Key": f"{session.session_id}-turn-{turn}"}
        for _ in range(ACCEPT_ATTEMPTS):  # the API may be down: retry until accepted
            try:
                response = await post_chat(api, session.agent_id, session.session_id, text, headers)
                if response.status_code == 200:
                    break
                session.refusals.append(f"{response.status_code} {response.text[:200]}")
            except httpx.HTTPError as exc:
                session.refusals.append(repr(exc))
            await asyncio.sleep(0.5)
        else:
            session.stuck = True
            return
        session.sent.append(text)
        if not await wait_answered(api, session, text):
            session.stuck = True
            return


def _text(message: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in message["content"] if b["type"] == "text")


def kill_actors(settings: Any, session_ids: list[str]) -> int:
    names = {name for s in session_ids if (name := home_name(settings, s)) is not None}
    killed = 0
    for name in names:
        try:
            actor = ray.get_actor(name, namespace=settings.namespace)
            os.kill(ray.get(actor.pid.remote()), signal.SIGKILL)
            killed += 1
        except (ValueError, ProcessLookupError, ray.exceptions.RayActorError):
            continue
    return killed


def kill_replicas() -> int:
    # The GCS actor table (the state API would need the dashboard, which the stack leaves off).
    killed = 0
    for actor in ray_state.actors().values():
        alive = actor.get("State") == "ALIVE"
        if alive and str(actor.get("ActorClassName", "")).startswith("ServeReplica"):
            os.kill(int(actor["Pid"]), signal.SIGKILL)
            killed += 1
    return killed


async def running_sessions(api: httpx.AsyncClient, sessions: list[Session]) -> list[str]:
    running = []
    for session in sessions:
        try:
            status = await api.get(f"/sessions/{session.session_id}/status", headers=USER)
        except httpx.HTTPError:
            continue
        if status.status_code == 200 and status.json()["status"] == "running":
            running.append(session.session_id)
    return running


async def new_session(api: httpx.AsyncClient, model_url: str) -> Session:
    """A session whose tools run without asking (the probes must not wait for a user)."""
    session = Session(*await make_session(api, model_url, USER))
    patch = await api.patch(
        f"/sessions/{session.session_id}", json={"permission_mode": "bypass"}, headers=USER
    )
    patch.raise_for_status()
    return session


@contextmanager
def stack_for(fault: str) -> Iterator[Any]:
    """The in-process stack, or for `all` a `troupe serve` process group on a fresh data dir."""
    if fault == "all":
        with (
            tempfile.TemporaryDirectory(prefix="chaos-", ignore_cleanup_errors=True) as data,
            serve_process(Path(data)) as server,
        ):
            yield server
    else:
        with service_stack(tool_timeout=1.0) as stack:  # the default sweep interval
            yield stack


async def strike_moment(api: httpx.AsyncClient, sessions: list[Session], fault: str) -> list[str]:
    """Wait for the moment to strike; return the sessions it catches replying."""
    faulted: list[str] = []
    for _ in range(240):
        if fault == "all":  # probes in the background: their turn was answered
            if sum(len(s.replies_done) >= 2 for s in sessions) >= max(1, len(sessions) // 4):
                return [s.session_id for s in sessions]
        else:  # replies in full swing
            faulted = await running_sessions(api, sessions)
            if len(faulted) >= max(1, len(sessions) // 4):
                break
        await asyncio.sleep(0.25)
    return faulted


async def run(fault: str, count: int, turns: int) -> None:
    tool_timeout = TOOL_TIMEOUT.get(fault, 1.0)
    restart = back_at = port_free = starting = 0.0
    with stack_for(fault) as stack:
        stack.model_server.reply_func = answerer(tool_timeout + 4)
        async with httpx.AsyncClient(base_url=stack.base_url, timeout=30) as api:
            sessions = [await new_session(api, stack.model_server.base_url) for _ in range(count)]
            drivers = [asyncio.create_task(drive(api, s, turns)) for s in sessions]
            faulted = await strike_moment(api, sessions, fault)
            fault_at = time.monotonic()
            if fault == "actor":
                hit = kill_actors(stack.settings, faulted)
            elif fault == "replica":
                hit = kill_replicas()
                faulted = [s.session_id for s in sessions]
            elif fault == "redis":
                redis = stack.redis
                redis.stop()
                await asyncio.sleep(2)
                await asyncio.to_thread(redis.start)
                hit = 1
            else:
                stack.kill()
                port_free = time.monotonic() - fault_at
                starting = await asyncio.to_thread(stack.start)
                back_at = time.monotonic()
                restart = back_at - fault_at
                hit = 1
            await asyncio.gather(*drivers)
            await asyncio.sleep(tool_timeout + 6)  # background probes finish and are answered
            redis_client = connect(stack.settings.redis_url)
            keys = Keys(stack.settings.key_prefix)
            storage = RedisStorage(redis_client, keys)
            bus = RedisMessageBus(redis_client, keys)
            lost = duplicated = errors = violations = probes = told = twice = told_in_reply = 0
            for session in sessions:
                audit = await audit_session(storage, bus, session.session_id)
                violations += len(audit.violations)
                errors += audit.errors
                history, _ = await storage.list_messages(session.session_id, None, 1000)
                texts = [m.get_text_content() or "" for m in history if m.role == "user"]
                lost += sum(1 for t in session.sent if t not in texts)
                duplicated += sum(texts.count(t) - 1 for t in set(texts) if texts.count(t) > 1)
                # The probe's output, not its command line (`echo probe-done`) in the tool call.
                outputs = [str(m.content).replace("echo probe-done", "") for m in history]
                probes += any("probe-done" in text for text in outputs)
                # A probe the restart cut is told so, once (it is not read-only: not re-run):
                # in the background, or, still in the foreground, when its reply resumes.
                notices = sum(text.count(INTERRUPTED_BY_RESTART) for text in outputs)
                told += notices > 0
                twice += notices > 1
                told_in_reply += any(REPLY_CUT in text for text in outputs) and not notices
            await redis_client.aclose()
    recovery = [
        min((t - fault_at for t in s.replies_done if t > fault_at), default=float("inf"))
        for s in sessions
        if s.session_id in faulted
    ]
    stuck = sum(s.stuck for s in sessions)
    print(f"fault={fault} sessions={count} turns={turns} hit={hit}")
    if restart:
        print(
            f"  whole-server restart: API answering {restart:.1f} s after the kill "
            f"(its port free after {port_free:.1f} s, start-up to a green /health {starting:.1f} s)"
        )
    print(f"  turns sent: {sum(len(s.sent) for s in sessions)}")
    print(f"  lost={lost} duplicated={duplicated} stuck={stuck} error_answers={errors}")
    print(f"  invariant violations (doctor): {violations}")
    print(f"  background probes completed: {probes}/{count}")
    print(
        f"  probes told they were interrupted by the restart: in the background {told}/{count} "
        f"(twice: {twice}), in their resumed reply {told_in_reply}/{count}"
    )
    refusals = [r for s in sessions for r in s.refusals]
    if refusals:
        print(f"  chat posts refused/failed: {len(refusals)}, e.g. {refusals[0]}")
    if recovery:
        print(
            f"  faulted sessions: {len(recovery)}, answering again after the fault: "
            f"max {max(recovery):.1f} s, median {sorted(recovery)[len(recovery) // 2]:.1f} s"
        )
    if back_at:  # the part after the cold start of Ray and Serve
        since_back = sorted(r - (back_at - fault_at) for r in recovery)
        print(
            f"  after the restarted API answered: max {since_back[-1]:.1f} s, "
            f"median {since_back[len(since_back) // 2]:.1f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fault", choices=["actor", "replica", "redis", "all"], default="actor")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--turns", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(run(args.fault, args.sessions, args.turns))


if __name__ == "__main__":
    main()
