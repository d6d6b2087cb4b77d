"""POST /chat → first event for never-seen sessions on a warm cluster, and memory per session.

Default settings: sessions are packed onto pre-warmed session hosts. The stack is warm (the API
answers, a host is started, one session has chatted) before measuring. Cold: the first chat
of a new session (placed on a host, activated there). Hot: a later chat of a session already
live on its host. Latency is POST /chat → the first event on the session's SSE stream (opened
before the POST). Memory: the hosts' RSS growth divided by the sessions they took.

Run: python bench/activation.py [--sessions 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

import httpx
import psutil
import ray
from _harness import percentiles, service_stack

from tests.support.api import make_session
from tests.support.ray_actors import host_nodes

USER = {"X-User-ID": "bench"}
NAMESPACE = "troupe-bench"


async def first_event_ms(api: httpx.AsyncClient, agent_id: str, session_id: str) -> float:
    """POST a chat and return ms until the stream's first event; then wait for REPLY_END."""
    body = {
        "agent_id": agent_id,
        "session_id": session_id,
        "input": {"name": "u", "role": "user", "content": "hi"},
    }
    first = 0.0
    async with api.stream("GET", f"/sessions/{session_id}/stream", headers=USER) as sse:
        start = time.perf_counter()
        (await api.post("/chat/", json=body, headers=USER)).raise_for_status()
        async for line in sse.aiter_lines():
            if not line.startswith("data: "):
                continue
            if not first:
                first = (time.perf_counter() - start) * 1000
            if json.loads(line[6:])["type"] == "REPLY_END":
                return first
    raise RuntimeError("stream ended early")


def hosts_rss(names: list[str]) -> float:
    """Summed RSS (MiB) of the session host actors `names`."""
    total = 0
    for name in names:
        pid = ray.get(ray.get_actor(name, namespace=NAMESPACE).pid.remote())
        total += psutil.Process(pid).memory_info().rss
    return total / 2**20


async def run(count: int) -> None:
    with service_stack() as stack:
        async with httpx.AsyncClient(base_url=stack.base_url, timeout=60) as api:
            base = stack.model_server.base_url
            warm = await make_session(api, base, USER)
            await first_event_ms(api, *warm)  # warm up Serve and the code paths
            hosts = sorted(host_nodes(stack.settings))
            before = hosts_rss(hosts)
            sessions = [await make_session(api, base, USER) for _ in range(count)]
            cold = [await first_event_ms(api, *session) for session in sessions]
            hot = [await first_event_ms(api, *session) for session in sessions]
            after_hosts = sorted(host_nodes(stack.settings))
            grown = hosts_rss(after_hosts) - before
    print(f"session hosts: {len(hosts)} warm before, {len(after_hosts)} after {count} sessions")
    print(f"never-seen session, POST /chat -> first event ({count}): {percentiles(cold)}")
    print(f"live session,       POST /chat -> first event ({count}): {percentiles(hot)}")
    print(f"host RSS growth: {grown:.1f} MiB for {count} sessions = {grown / count:.2f} MiB each")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=100)
    asyncio.run(run(parser.parse_args().sessions))


if __name__ == "__main__":
    main()
