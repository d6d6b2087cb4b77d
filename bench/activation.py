"""Cold and hot session activation → first event, and RSS per live session actor.

Cold: the first chat of a new session (Ray creates its actor). Hot: a later chat of a session
whose actor is live and idle. Latency is POST /chat → REPLY_START on the session's SSE stream.

Run: python bench/activation.py [--sessions 20]
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

from actors._remote import session_actor_name
from tests.support.api import make_session

USER = {"X-User-ID": "bench"}


async def first_event_ms(api: httpx.AsyncClient, agent_id: str, session_id: str) -> float:
    """POST a chat and return ms until its REPLY_START; then wait for its REPLY_END."""
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
            kind = json.loads(line[6:])["type"]
            if kind == "REPLY_START" and not first:
                first = (time.perf_counter() - start) * 1000
            if kind == "REPLY_END":
                return first
    raise RuntimeError("stream ended early")


async def run(count: int) -> None:
    with service_stack() as stack:
        async with httpx.AsyncClient(base_url=stack.base_url, timeout=60) as api:
            base = stack.model_server.base_url
            warm = await make_session(api, base, USER)
            await first_event_ms(api, *warm)  # warm up Serve and the code paths
            sessions = [await make_session(api, base, USER) for _ in range(count)]
            cold = [await first_event_ms(api, *session) for session in sessions]
            hot = [await first_event_ms(api, *session) for session in sessions]
            rss = []
            for _, sid in sessions:
                actor = ray.get_actor(session_actor_name(sid), namespace="troupe-bench")
                rss.append(psutil.Process(ray.get(actor.pid.remote())).memory_info().rss / 2**20)
    print(f"cold activation -> first event ({count} sessions): {percentiles(cold)}")
    print(f"hot activation  -> first event ({count} sessions): {percentiles(hot)}")
    print(
        f"RSS per live session actor: mean={sum(rss) / len(rss):.1f} MiB "
        f"min={min(rss):.1f} MiB max={max(rss):.1f} MiB"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=20)
    asyncio.run(run(parser.parse_args().sessions))


if __name__ == "__main__":
    main()
