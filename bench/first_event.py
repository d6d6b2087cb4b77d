"""Hot session: POST /chat/ → the first event of the reply on an open stream, vs a Ray actor call.

The session's actor is live and idle and its stream is open; each sample posts a message and
waits for the reply's first event (its REPLY_START: the previous reply's trailing
`session_updated` does not count), then for that reply's end. The POST's own round trip is
printed too. The reference in the same run is a round trip to a trivial Ray actor method from
the bench process.

Run: python bench/first_event.py [--turns 50] [--ingress serve|uvicorn]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

import httpx
import ray
from _harness import percentiles, service_stack

from tests.support.api import make_session

USER = {"X-User-ID": "bench"}


@ray.remote(num_cpus=0)
class Echo:
    """The reference: a trivial actor method."""

    def ping(self) -> int:
        return 1


async def run(args: argparse.Namespace) -> None:
    with service_stack(ingress=args.ingress) as stack:
        async with httpx.AsyncClient(base_url=stack.base_url, timeout=60, headers=USER) as api:
            agent_id, session_id = await make_session(api, stack.model_server.base_url, USER)
            message = {"name": "u", "role": "user", "content": "hi"}
            body = {"agent_id": agent_id, "session_id": session_id, "input": message}
            firsts: list[float] = []
            posts: list[float] = []
            async with api.stream("GET", f"/sessions/{session_id}/stream") as sse:
                lines = sse.aiter_lines()
                for turn in range(args.turns + 3):
                    start = time.perf_counter()
                    (await api.post("/chat/", json=body)).raise_for_status()
                    posted = time.perf_counter()
                    first = None
                    async for line in lines:
                        if not line.startswith("data: "):
                            continue
                        kind = json.loads(line[6:])["type"]
                        if kind == "REPLY_START" and first is None:
                            first = time.perf_counter()
                        if kind == "REPLY_END":
                            break
                    if turn >= 3 and first is not None:  # the first turns warm up
                        firsts.append((first - start) * 1000)
                        posts.append((posted - start) * 1000)
        echo = Echo.remote()  # type: ignore[attr-defined]
        await echo.ping.remote()
        calls = []
        for _ in range(200):
            start = time.perf_counter()
            await echo.ping.remote()
            calls.append((time.perf_counter() - start) * 1000)
    print(f"hot session POST /chat/ -> first event ({args.ingress}): {percentiles(firsts)}")
    print(f"POST /chat/ round trip, same turns:            {percentiles(posts)}")
    print(f"plain Ray actor call, same run:              {percentiles(calls)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--ingress", choices=["serve", "uvicorn"], default="serve")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
