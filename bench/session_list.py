"""`GET /sessions/` and `GET /sessions/{id}/status` against the length of the sessions' contexts.

The web UI lists a user's sessions on every load and polls statuses. This bench stores
`--sessions` sessions whose contexts hold N earlier messages (about 1 KB of JSON each) in an
embedded redis-server, serves the app in-process (no Ray: nothing replies) and times the list
and a status read through the ASGI app, for each N.

Run: python bench/session_list.py [--sessions 50] [--lengths 10 100 1000] [--reps 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from commit import context

from actors.client import InProcessDispatcher
from actors.local._ports import find_free_port
from actors.local.embedded_redis import EmbeddedRedis
from actors.settings import RuntimeSettings
from agent_core.state import AgentState
from serve.app import create_app
from tests.support.api import USER, make_session


async def timed(api: httpx.AsyncClient, path: str, reps: int) -> float:
    """Median ms of `reps` GETs of `path`."""
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        response = await api.get(path, headers=USER)
        samples.append(time.perf_counter() - start)
        assert response.status_code == 200, response.text
    return statistics.median(samples) * 1000


async def run(sessions: int, lengths: list[int], reps: int) -> None:
    with EmbeddedRedis(port=find_free_port()) as redis:
        settings = RuntimeSettings(redis_url=redis.url)
        app = create_app(settings=settings, dispatcher=InProcessDispatcher)
        async with app.router.lifespan_context(app):
            storage = app.state.runtime.storage
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://api") as api:
                ids = [await make_session(api, "http://127.0.0.1:9/v1") for _ in range(sessions)]
                print(f"{sessions} sessions, median of {reps} reads")
                for length in lengths:
                    for _, session_id in ids:
                        state = AgentState(session_id=session_id, context=context(length))
                        await storage.save_state(session_id, state)
                    listed = await timed(api, "/sessions/", reps)
                    status = await timed(api, f"/sessions/{ids[0][1]}/status", reps)
                    print(
                        f"  {length:5d} messages each: GET /sessions/ {listed:8.1f} ms, "
                        f"GET /sessions/{{id}}/status {status:6.2f} ms"
                    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(run(args.sessions, args.lengths, args.reps))


if __name__ == "__main__":
    main()
