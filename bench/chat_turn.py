"""POST /chat → REPLY_END latency over the full stack, and the RSS of the session's host.

Run: python bench/chat_turn.py [--turns 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

import httpx
import psutil
from _harness import percentiles, service_stack

from tests.support.api import make_session
from tests.support.ray_actors import home_pid

USER = {"X-User-ID": "bench"}


async def run(turns: int) -> None:
    with service_stack() as stack:
        async with httpx.AsyncClient(base_url=stack.base_url, timeout=60) as api:
            agent_id, session_id = await make_session(api, stack.model_server.base_url, USER)
            body = {
                "agent_id": agent_id,
                "session_id": session_id,
                "input": {"name": "u", "role": "user", "content": "hi"},
            }
            latencies: list[float] = []
            async with api.stream("GET", f"/sessions/{session_id}/stream", headers=USER) as sse:
                lines = sse.aiter_lines()
                for turn in range(turns + 5):
                    start = time.perf_counter()
                    response = await api.post("/chat/", json=body, headers=USER)
                    response.raise_for_status()
                    async for line in lines:
                        if (
                            line.startswith("data: ")
                            and json.loads(line[6:])["type"] == "REPLY_END"
                        ):
                            break
                    if turn >= 5:  # the first turns pay for actor activation and warm-up
                        latencies.append((time.perf_counter() - start) * 1000)
            pid = home_pid(stack.settings, session_id, namespace="troupe-bench")
            rss = psutil.Process(pid).memory_info().rss / 2**20
    print(
        f"chat turn (POST /chat -> REPLY_END, {turns} turns, instant model): "
        f"{percentiles(latencies)}"
    )
    print(f"session host RSS after {turns + 5} turns: {rss:.1f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=100)
    asyncio.run(run(parser.parse_args().turns))


if __name__ == "__main__":
    main()
