"""A leader spawns N workers that each reply and report back: Troupe vs AgentScope 2.0.11.

Same scenario on both, over each one's HTTP service, driven by one scripted OpenAI-protocol
model (tests/support/openai_server.py) that plays the leader and every worker:

1. the user asks the leader (agent "Lead") to "assemble a crew";
2. the leader calls TeamCreate, then AgentCreate for N workers, `--batch` per model step;
3. each worker, woken by its first task, calls TeamSay(to="Lead", "report: done by wK"), then
   answers "reported";
4. the leader, woken by the reports (hints), answers "K so far." until it has all N, then
   "All N workers reported." — the end of the measured wall time (user's POST /chat to that
   reply's REPLY_END on the leader's SSE stream);
5. then "dissolve the team" → TeamDelete, timed separately.

Troupe runs its full stack with default settings (bench/_harness.py: embedded Redis, local
Ray with 2 CPUs, the Serve API, pre-warmed session hosts): sessions are packed onto session
host actors, more of which start on demand. AgentScope runs its Agent Service app
(`agentscope.app.create_app`, RedisStorage + RedisMessageBus on a separate embedded
redis-server, local workspaces) under uvicorn on 127.0.0.1 in this process, where all its
agents run. The model server runs in a separate process for both (it stands for the provider),
so it is counted in neither figure.

Peak memory is the largest sum of RSS over this process and all its descendants, sampled every
0.25 s, the model-server process excluded: for Troupe the driver, Redis, Ray's system
processes and every Ray worker (session actors, Serve); for AgentScope this process and its
Redis. A PSS sum (shared pages split between processes) is taken once, after the last report.
Memory per extra worker is (peak RSS sum - the RSS sum just before the chat) / N: what the
team costs on top of a warm, idle deployment.
The two runs share this process, Troupe's first, so AgentScope's run starts with the
driver's leftovers from Troupe's (its baseline is printed).

Run (bench environment, see bench/README.md):
    .bench-venv/bin/python bench/team.py [--workers 100] [--batch 10] [--only troupe]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import itertools
import logging
import multiprocessing
import os
import re
import statistics
import tempfile
import threading
import time
import warnings
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import httpx
import psutil
from _harness import service_stack

from actors.local.embedded_redis import EmbeddedRedis
from tests.support.api import USER, make_session, post_chat, wait_for_status
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.support.sse import Frame, read_frames

LEADER = "Lead"
LEADER_PROMPT = "You lead a crew."
REPORT = re.compile(r"report: done by (w\d+)")
CREATED = re.compile(r"Member '(w\d+)' added|member named '(w\d+)' already exists")
SAMPLE_EVERY = 0.25


# --- the scripted model (leader and workers), run in its own process -------------------------


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


@dataclass
class LeaderMemory:
    """What the scripted leader has seen over all its requests.

    With many workers the leader's context outgrows the model's window and is compressed, so
    one request no longer shows every AgentCreate call and report: count them across requests.
    """

    created: set[str] = field(default_factory=set)
    reported: set[str] = field(default_factory=set)


def scripted_team(
    body: dict[str, Any], workers: int, batch: int, memory: LeaderMemory | None = None
) -> ScriptedReply:
    """Plays the leader and the workers, deciding from the conversation it is sent."""
    memory = memory or LeaderMemory()
    messages = body["messages"]
    tools = {t["function"]["name"] for t in body.get("tools") or []}
    if tools == {"generate_structured_output"}:  # a service asking for a session title
        return ScriptedReply(tool_calls=[("title", "generate_structured_output", {"title": "x"})])
    system = _text(messages[0])
    calls = [
        call["function"]["name"]
        for m in messages
        if m["role"] == "assistant"
        for call in m.get("tool_calls") or []
    ]
    if " a member of " in system:  # "You are wK, a member of ..."
        member = system.split()[2].rstrip(",")
        if "TeamSay" in calls:
            return ScriptedReply(text="reported")
        args = {"to": LEADER, "content": f"report: done by {member}"}
        return ScriptedReply(tool_calls=[(f"say-{member}", "TeamSay", args)])
    user_texts = [_text(m) for m in messages if m["role"] == "user"]
    if "TeamDelete" in calls:
        return ScriptedReply(text="Team dissolved.")
    if any(t.strip() == "dissolve the team" for t in user_texts):
        return ScriptedReply(tool_calls=[("td", "TeamDelete", {})])
    if "TeamCreate" not in calls:
        return ScriptedReply(
            tool_calls=[("tc", "TeamCreate", {"name": "crew", "description": "bench workers"})]
        )
    # A worker exists once an AgentCreate call for it succeeded (or found it there); a call
    # past the leader's iteration limit is answered "Not executed" and made again.
    memory.created |= {
        name
        for m in messages
        if m["role"] == "tool"
        for pair in CREATED.findall(_text(m))
        for name in pair
        if name
    }
    memory.reported |= {name for t in user_texts for name in REPORT.findall(t)}
    created = len(memory.created)
    if body.get("tool_choice") == "none":  # the leader's last step before its iteration limit
        return ScriptedReply(text=f"{created} created, {len(memory.reported)} reported so far.")
    if created < workers:
        missing = (f"w{i}" for i in range(1, workers + 1) if f"w{i}" not in memory.created)
        names = list(itertools.islice(missing, batch))
        return ScriptedReply(
            text="Spawning.",
            tool_calls=[
                (
                    f"ac-{w}",
                    "AgentCreate",
                    {"name": w, "description": "a worker", "prompt": f"{w}: say hello, report"},
                )
                for w in names
            ],
        )
    reported = memory.reported
    if len(reported) == workers:
        return ScriptedReply(text=f"All {workers} workers reported.")
    return ScriptedReply(text=f"{len(reported)} so far.")


def _serve_model(
    workers: int, batch: int, conn: Any, stop: Any
) -> None:  # pragma: no cover - runs in the model-server process
    reply = partial(scripted_team, workers=workers, batch=batch, memory=LeaderMemory())
    with OpenAIWireServer(reply_func=reply) as server:
        conn.send(server.base_url)
        stop.wait(3600)


@contextlib.contextmanager
def model_process(workers: int, batch: int) -> Iterator[tuple[str, int]]:
    """The scripted model server in a child process; yields (base URL, pid)."""
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    stop = ctx.Event()
    process = ctx.Process(target=_serve_model, args=(workers, batch, child, stop), daemon=True)
    process.start()
    try:
        if not parent.poll(120):
            raise TimeoutError("the model server did not start within 120 s")
        yield parent.recv(), process.pid  # type: ignore[misc]
    finally:
        stop.set()
        process.join(10)
        if process.is_alive():
            process.terminate()
            process.join(5)


# --- memory -------------------------------------------------------------------------------------


def _kind(proc: psutil.Process, root: int) -> str:
    if proc.pid == root:
        return "driver"
    name = proc.name()
    if name.startswith("ray::"):
        return "ray workers"
    if name.startswith("redis-server"):
        return "redis"
    return "other"  # Ray's gcs/raylet/agents; AgentScope's workspace helpers


@dataclass
class Sample:
    """One look at the process tree."""

    total: int = 0
    count: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    procs_by_kind: dict[str, int] = field(default_factory=dict)


class TreeMemory(threading.Thread):
    """Samples the summed RSS of this process and its descendants, keeping the peak."""

    def __init__(self, exclude: set[int]) -> None:
        super().__init__(daemon=True, name="tree-memory")
        self.root = os.getpid()
        self.exclude = set(exclude)
        self.peak = Sample()
        self.last = Sample()
        self._halt = threading.Event()

    def processes(self) -> list[psutil.Process]:
        """This process and its descendants, minus the excluded subtrees."""
        me = psutil.Process(self.root)
        skip: set[int] = set()
        for pid in self.exclude:
            with contextlib.suppress(psutil.Error):
                skip |= {pid, *(c.pid for c in psutil.Process(pid).children(recursive=True))}
        procs = [me, *(c for c in me.children(recursive=True) if c.pid not in skip)]
        return procs

    def sample(self) -> Sample:
        """Sum RSS per kind of process now."""
        result = Sample()
        for proc in self.processes():
            try:
                rss = proc.memory_info().rss
                kind = _kind(proc, self.root)
            except psutil.Error:
                continue
            result.total += rss
            result.count += 1
            result.by_kind[kind] = result.by_kind.get(kind, 0) + rss
            result.procs_by_kind[kind] = result.procs_by_kind.get(kind, 0) + 1
        return result

    def pss(self) -> tuple[int, int]:
        """(summed PSS, processes) now: shared pages split between the processes mapping them."""
        total = count = 0
        for proc in self.processes():
            with contextlib.suppress(psutil.Error):
                total += proc.memory_full_info().pss
                count += 1
        return total, count

    def run(self) -> None:
        """Sample until stopped."""
        while not self._halt.is_set():
            self.last = self.sample()
            if self.last.total > self.peak.total:
                self.peak = self.last
            self._halt.wait(SAMPLE_EVERY)

    def stop(self) -> None:
        """Stop sampling (one last sample included)."""
        self._halt.set()
        self.join(10)
        last = self.sample()
        if last.total > self.peak.total:
            self.peak = last


def mib(n: float) -> str:
    """Bytes as MiB."""
    return f"{n / 2**20:,.0f} MiB"


# --- the scenario, common to both ---------------------------------------------------------------


@dataclass
class Result:
    """What one framework's run measured."""

    name: str
    wall: float
    first_report: float
    dissolve: float
    peak: Sample
    pss: tuple[int, int]
    baseline: int
    idle: int
    reconnects: int
    agent_create: list[float]


class LeaderWatch:
    """Follows the leader's SSE stream: reports received, the final answer, the dissolution."""

    def __init__(self, label: str, workers: int, memory: TreeMemory, start: float) -> None:
        self.label, self.workers, self.memory = label, workers, memory
        self.start = start
        self.reporters: set[str] = set()
        self.first_report = 0.0
        self.text: list[str] = []
        self.all_reported = asyncio.Event()
        self.dissolved = asyncio.Event()
        self.final_at = 0.0
        self.reconnects = 0
        self._creating: dict[str, float] = {}
        self.agent_create: list[float] = []  # seconds each AgentCreate call took, as streamed

    def __call__(self, frame: Frame) -> bool:
        """Consume one frame; never stops the reader (it is cancelled)."""
        call_id = str(frame.data.get("tool_call_id", ""))
        if frame.type == "TOOL_RESULT_START" and frame.data.get("tool_call_name") == "AgentCreate":
            self._creating[call_id] = time.perf_counter()
        elif frame.type == "TOOL_RESULT_END" and call_id in self._creating:
            self.agent_create.append(time.perf_counter() - self._creating.pop(call_id))
        elif frame.type == "HINT_BLOCK":
            for name in REPORT.findall(str(frame.data.get("hint", ""))):
                if name not in self.reporters:
                    self.reporters.add(name)
                    if len(self.reporters) == 1:
                        self.first_report = time.perf_counter() - self.start
                    if len(self.reporters) % 10 == 0 or len(self.reporters) == self.workers:
                        last = self.memory.last
                        print(
                            f"  [{self.label}] {len(self.reporters):>3}/{self.workers} reports "
                            f"at {time.perf_counter() - self.start:6.1f} s; "
                            f"{mib(last.total)} over {last.count} processes",
                            flush=True,
                        )
        elif frame.type == "TEXT_BLOCK_DELTA":
            self.text.append(str(frame.data.get("delta", "")))
        elif frame.type == "REPLY_END":
            said = "".join(self.text)
            self.text = []
            if f"All {self.workers} workers reported." in said and not self.all_reported.is_set():
                self.final_at = time.perf_counter()
                self.all_reported.set()
            if "Team dissolved." in said:
                self.dissolved.set()
        return False


async def follow(
    api: httpx.AsyncClient,
    path: str,
    headers: dict[str, str],
    params: dict[str, str],
    watch: LeaderWatch,
    opened: asyncio.Event,
    cursor: str | None,
) -> None:
    """Read the leader's stream into `watch` until cancelled, reconnecting when it closes.

    Troupe's frames carry their log id, and a reconnect resumes after the last one (`cursor`
    names the query parameter); AgentScope's carry none, and its stream replays the current
    run on reconnect.
    """
    last_id = ""

    def track(frame: Frame) -> bool:
        nonlocal last_id
        last_id = frame.id or last_id
        return watch(frame)

    while True:
        query = {**params, cursor: last_id} if cursor and last_id else params
        try:
            await read_frames(api, path, headers, track, params=query, on_open=opened.set)
            reason = "the server ended it"
        except httpx.HTTPError as exc:
            reason = f"{type(exc).__name__}: {exc}"
        watch.reconnects += 1
        watch.text = []
        print(
            f"  [{watch.label}] leader stream closed at "
            f"{time.perf_counter() - watch.start:.1f} s ({reason}); reconnecting",
            flush=True,
        )
        await asyncio.sleep(0.2)


@contextlib.asynccontextmanager
async def watching(
    api: httpx.AsyncClient,
    path: str,
    headers: dict[str, str],
    params: dict[str, str],
    watch: LeaderWatch,
    cursor: str | None = None,
) -> AsyncIterator[None]:
    """The leader's stream open (and followed) for the duration of the block."""
    opened = asyncio.Event()
    reader = asyncio.create_task(follow(api, path, headers, params, watch, opened, cursor))
    try:
        async with asyncio.timeout(30):
            await opened.wait()
        yield
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, httpx.HTTPError):
            await reader


async def wait_event(event: asyncio.Event, within: float, what: str) -> None:
    """Wait for `event`, failing with `what` after `within` seconds."""
    try:
        async with asyncio.timeout(within):
            await event.wait()
    except TimeoutError:
        raise TimeoutError(f"{what} did not happen within {within:.0f} s") from None


# --- Troupe ---------------------------------------------------------------------------------------


async def run_troupe(workers: int, batch: int, within: float) -> Result:
    """The scenario on Troupe's full stack, default settings."""
    print(
        f"Troupe: starting Redis, Ray (2 CPUs), Serve, session hosts; {workers} workers to come",
        flush=True,
    )
    with model_process(workers, batch) as (model_url, model_pid):
        memory = TreeMemory(exclude=_other_children(model_pid))
        with service_stack(num_cpus=2) as stack:
            baseline = psutil.Process().memory_info().rss
            memory.start()
            try:
                async with httpx.AsyncClient(base_url=stack.base_url, timeout=60) as api:
                    agent_id, leader = await make_session(
                        api, model_url, name=LEADER, system_prompt=LEADER_PROMPT
                    )
                    start = time.perf_counter()
                    watch = LeaderWatch("troupe", workers, memory, start)
                    path = f"/sessions/{leader}/stream"
                    idle = memory.sample().total
                    async with watching(api, path, USER, {"after": "0"}, watch, "after"):
                        start = watch.start = time.perf_counter()
                        response = await post_chat(api, agent_id, leader, "assemble a crew")
                        response.raise_for_status()
                        await wait_event(watch.all_reported, within, "the leader's final answer")
                        wall = watch.final_at - start
                        pss = memory.pss()
                        await wait_for_status(api, leader, "idle", within=60)
                        dissolve_start = time.perf_counter()
                        response = await post_chat(api, agent_id, leader, "dissolve the team")
                        response.raise_for_status()
                        await wait_event(watch.dissolved, 300, "TeamDelete")
                        dissolve = time.perf_counter() - dissolve_start
            finally:
                memory.stop()
    return Result(
        "Troupe",
        wall,
        watch.first_report,
        dissolve,
        memory.peak,
        pss,
        baseline,
        idle,
        watch.reconnects,
        watch.agent_create,
    )


def _other_children(*pids: int) -> set[int]:
    """`pids` plus the children this process has now (e.g. multiprocessing's helper)."""
    return {*pids, *(c.pid for c in psutil.Process().children())}


# --- AgentScope ---------------------------------------------------------------------------------


async def run_agentscope(workers: int, batch: int, within: float) -> Result:
    """The scenario on AgentScope's Agent Service (team tools, Redis storage and bus)."""
    from _agentscope import agentscope_service, make_agentscope_session

    # AgentScope sets its logger to INFO on import (a line per hint delivered) and reads its
    # own deprecated team fields: noise in a benchmark's output.
    logging.getLogger("as").setLevel(logging.WARNING)
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"agentscope\.")
    print(f"AgentScope: starting Redis and the Agent Service; {workers} workers", flush=True)
    headers = {"X-User-ID": "bench"}
    with (
        model_process(workers, batch) as (model_url, model_pid),
        tempfile.TemporaryDirectory(prefix="agentscope-bench-") as workdir,
    ):
        memory = TreeMemory(exclude=_other_children(model_pid))
        with EmbeddedRedis(persistence=False) as redis:
            baseline = psutil.Process().memory_info().rss
            memory.start()
            try:
                async with (
                    agentscope_service(redis.host, redis.port, workdir) as base_url,
                    httpx.AsyncClient(base_url=base_url, timeout=60) as api,
                ):
                    agent_id, leader = await make_agentscope_session(
                        api, model_url, headers, LEADER, LEADER_PROMPT
                    )
                    watch = LeaderWatch("agentscope", workers, memory, time.perf_counter())
                    path = f"/sessions/{leader}/stream"
                    idle = memory.sample().total
                    async with watching(api, path, headers, {"agent_id": agent_id}, watch):
                        start = watch.start = time.perf_counter()
                        await agentscope_chat(api, headers, agent_id, leader, "assemble a crew")
                        await wait_event(watch.all_reported, within, "the leader's final answer")
                        wall = watch.final_at - start
                        pss = memory.pss()
                        dissolve_start = time.perf_counter()
                        await agentscope_chat(api, headers, agent_id, leader, "dissolve the team")
                        await wait_event(watch.dissolved, 300, "TeamDelete")
                        dissolve = time.perf_counter() - dissolve_start
            finally:
                memory.stop()
    return Result(
        "AgentScope",
        wall,
        watch.first_report,
        dissolve,
        memory.peak,
        pss,
        baseline,
        idle,
        watch.reconnects,
        watch.agent_create,
    )


async def agentscope_chat(
    api: httpx.AsyncClient, headers: dict[str, str], agent_id: str, session_id: str, text: str
) -> None:
    """POST /chat/, retrying while the session's previous run still holds it (409)."""
    body = {
        "agent_id": agent_id,
        "session_id": session_id,
        "input": {"name": "user", "role": "user", "content": [{"type": "text", "text": text}]},
    }
    async with asyncio.timeout(60):
        while True:
            response = await api.post("/chat/", json=body, headers=headers)
            if response.status_code != 409:
                response.raise_for_status()
                return
            await asyncio.sleep(0.05)


# --- report -------------------------------------------------------------------------------------


def per_worker(result: Result, workers: int) -> float:
    """Memory per extra worker: (peak RSS sum - RSS sum before the chat) / N, in bytes."""
    return (result.peak.total - result.idle) / workers


def describe(result: Result, workers: int) -> list[str]:
    """The lines printed for one framework."""
    peak = result.peak
    kinds = ", ".join(
        f"{kind} {mib(size)} ({peak.procs_by_kind[kind]})"
        for kind, size in sorted(peak.by_kind.items(), key=lambda kv: -kv[1])
    )
    pss, pss_count = result.pss
    creates = sorted(result.agent_create) or [0.0]
    return [
        f"{result.name}:",
        f"  wall time, chat -> final answer after all reports: {result.wall:7.2f} s "
        f"(first report at {result.first_report:.2f} s)",
        f"  AgentCreate as the leader streams it: {len(result.agent_create)} calls, "
        f"{sum(creates):.1f} s in all, median {statistics.median(creates):.2f} s, "
        f"max {creates[-1]:.2f} s",
        f"  time per worker: {result.wall / workers * 1000:.1f} ms",
        f"  peak memory, RSS sum: {mib(peak.total)} over {peak.count} processes [{kinds}]",
        f"  memory per extra worker: {per_worker(result, workers) / 2**20:.2f} MiB "
        f"(peak {mib(peak.total)} - {mib(result.idle)} before the chat, / {workers})",
        f"  PSS sum after the last report: {mib(pss)} over {pss_count} processes",
        f"  TeamDelete (chat -> 'Team dissolved.'): {result.dissolve:.2f} s; "
        f"driver RSS at start {mib(result.baseline)}; leader stream reconnects: "
        f"{result.reconnects}",
    ]


async def main_async(workers: int, batch: int, only: str | None, within: float) -> None:
    """Run the selected frameworks and print their figures."""
    results: list[Result] = []
    if only in (None, "troupe"):
        results.append(await run_troupe(workers, batch, within))
        gc.collect()
    if only in (None, "agentscope"):
        results.append(await run_agentscope(workers, batch, within))
    print()
    print(
        f"Team of {workers} workers (AgentCreate x{batch} per leader step), scripted "
        f"OpenAI-protocol model in its own process"
    )
    for result in results:
        print("\n".join(describe(result, workers)))
    if len(results) == 2:
        troupe, scope = results
        print(
            f"ratio Troupe/AgentScope: wall {troupe.wall / scope.wall:.2f}, "
            f"peak RSS {troupe.peak.total / scope.peak.total:.2f}, "
            f"PSS {troupe.pss[0] / scope.pss[0]:.2f}, "
            f"per extra worker {per_worker(troupe, workers) / per_worker(scope, workers):.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=100)
    parser.add_argument("--batch", type=int, default=10, help="AgentCreate calls per leader step")
    parser.add_argument("--only", choices=["troupe", "agentscope"])
    parser.add_argument("--timeout", type=float, default=900, help="seconds for the final answer")
    args = parser.parse_args()
    # Troupe's local workspaces default to ./.troupe: keep them out of the working tree.
    with tempfile.TemporaryDirectory(prefix="team-bench-") as cwd:
        os.chdir(cwd)
        asyncio.run(main_async(args.workers, args.batch, args.only, args.timeout))


if __name__ == "__main__":
    main()
