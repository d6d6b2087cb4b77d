"""SSE fan-out: N subscribers on one session, events at a steady rate; vs plain uvicorn, same run.

Starts the stack (embedded Redis, local Ray, the API), opens `--subscribers` streams on one
session (raw sockets, a separate process), appends `--events` timed events to the session's log
at `--rate` per second, and measures, per delivered frame: latency from append to receipt
(p50/p99), gaps (events a subscriber never got), and the servers' CPU (Serve's proxy and
replica, or the uvicorn worker). Then the same against a plain FastAPI SSE endpoint fed from
memory on uvicorn. While the streams are open it also checks `POST /chat/` and `/health` answer.

Run: python bench/fanout.py [--subscribers 200] [--events 200] [--rate 49] [--ingress serve]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
from _harness import percentiles, service_stack
from _procs import cpu_delta, cpu_seconds

from actors.bus.keys import Keys
from actors.bus.message_bus import RedisMessageBus
from actors.bus.redis_connect import connect
from actors.local._ports import find_free_port
from agent_core.event import CustomEvent
from tests.support.api import make_session

HERE = Path(__file__).resolve().parent
USER = {"X-User-ID": "bench"}


def subscribers(url: str, count: int, events: int) -> subprocess.Popen[str]:
    """Start the subscriber process and wait until every stream is open."""
    proc = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "_load.py"),
            "sse",
            url,
            json.dumps(USER),
            str(count),
            str(events),
            "120",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != "ready":
        proc.kill()
        raise RuntimeError(f"subscribers did not open: {line!r}")
    return proc


def results(proc: subprocess.Popen[str]) -> dict[str, object]:
    out, _ = proc.communicate(timeout=180)
    return json.loads(out.strip().splitlines()[-1])


async def emit(send: object, events: int, rate: float) -> None:
    start = time.perf_counter()
    for n in range(events):
        await send(n)  # type: ignore[operator]
        delay = start + (n + 1) / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)


def report(name: str, result: dict[str, object], cpu_ms: float, expected: int) -> None:
    latencies = result["latencies"]
    assert isinstance(latencies, list)
    frames = len(latencies)
    print(
        f"  {name}: {frames}/{expected} frames, gaps {result['gaps']}, "
        f"out of order {result['out_of_order']}"
    )
    if frames:
        print(f"    delivery latency {percentiles(latencies)}")
        print(f"    server CPU {cpu_ms / frames:.3f} ms per delivered frame")


def troupe(args: argparse.Namespace) -> None:
    with service_stack(ingress=args.ingress) as stack:
        settings = stack.settings

        async def setup() -> tuple[str, str]:
            async with httpx.AsyncClient(base_url=stack.base_url, timeout=60) as api:
                return await make_session(api, stack.model_server.base_url, USER)

        agent_id, session_id = asyncio.run(setup())
        proc = subscribers(
            f"{stack.base_url}/sessions/{session_id}/stream", args.subscribers, args.events
        )
        procs = stack.server_processes()

        async def run() -> tuple[int, int]:
            redis = connect(settings.redis_url)
            bus = RedisMessageBus(redis, Keys(settings.key_prefix))
            async with httpx.AsyncClient(base_url=stack.base_url, headers=USER, timeout=30) as api:
                health = (await api.get("/health")).status_code
                message = {"name": "u", "role": "user", "content": "hi"}
                body = {"agent_id": agent_id, "session_id": session_id, "input": message}
                chat = (await api.post("/chat/", json=body)).status_code
            await asyncio.sleep(2)  # let that reply's events pass

            async def send(n: int) -> None:
                value = {"t": time.time(), "n": n}
                await bus.append_service_event(session_id, CustomEvent(name="bench", value=value))

            await emit(send, args.events, args.rate)
            await redis.aclose()
            return health, chat

        before = cpu_seconds(procs)
        health, chat = asyncio.run(run())
        result = results(proc)
        spent = sum(cpu_delta(before, cpu_seconds(procs)).values()) * 1000
    print(
        f"troupe ({args.ingress}), {args.subscribers} subscribers, {args.events} events at "
        f"{args.rate}/s; with the streams open: /health {health}, POST /chat/ {chat}"
    )
    report("troupe", result, spent, args.subscribers * args.events)


def plain(args: argparse.Namespace) -> None:
    port = find_free_port()
    server = subprocess.Popen([sys.executable, str(HERE / "_plain_app.py"), str(port)])
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{base}/docs", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        proc = subscribers(f"{base}/stream", args.subscribers, args.events)
        procs = {"uvicorn": psutil.Process(server.pid)}

        async def run() -> None:
            async with httpx.AsyncClient(base_url=base, timeout=30) as api:

                async def send(n: int) -> None:
                    body = {"agent_id": "a", "session_id": "s", "input": {"t": time.time(), "n": n}}
                    await api.post("/emit", json=body)

                await emit(send, args.events, args.rate)

        before = cpu_seconds(procs)
        asyncio.run(run())
        result = results(proc)
        spent = sum(cpu_delta(before, cpu_seconds(procs)).values()) * 1000
    finally:
        server.terminate()
        server.wait()
    print("plain uvicorn, same load:")
    report("plain uvicorn", result, spent, args.subscribers * args.events)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subscribers", type=int, default=200)
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--rate", type=float, default=49.0)
    parser.add_argument("--ingress", choices=["serve", "uvicorn"], default="serve")
    args = parser.parse_args()
    troupe(args)
    plain(args)


if __name__ == "__main__":
    main()
