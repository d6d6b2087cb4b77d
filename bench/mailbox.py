"""Mailbox latency: a team message (TeamSay's delivery path) → the recipient's HINT_BLOCK on SSE.

The recipient is a live, idle session actor. Each sample delivers one `<team-message>` through
`Mailbox.deliver` (inbox append + actor wake, exactly what TeamSay does) and waits for the
HINT_BLOCK on the recipient's event stream, then for that reply to end.

Run: python bench/mailbox.py [--messages 200] [--ingress serve|uvicorn]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

import httpx
from _harness import percentiles, service_stack

from actors._remote.session_actor import RayDispatcher
from actors.bus.keys import Keys
from actors.bus.mailbox import Mailbox
from actors.bus.message_bus import RedisMessageBus
from actors.bus.redis_connect import connect
from actors.teams.tools import team_message
from tests.support.api import make_session

USER = {"X-User-ID": "bench"}


async def run(count: int, ingress: str) -> None:
    with service_stack(ingress=ingress) as stack:
        settings = stack.settings
        redis = connect(settings.redis_url)
        bus = RedisMessageBus(
            redis, Keys(settings.key_prefix), settings.inbox_maxlen, settings.event_log_maxlen
        )
        mailbox = Mailbox(bus, RayDispatcher(settings))
        async with httpx.AsyncClient(base_url=stack.base_url, timeout=60) as api:
            _, session_id = await make_session(api, stack.model_server.base_url, USER)
            samples: list[float] = []
            async with api.stream("GET", f"/sessions/{session_id}/stream", headers=USER) as sse:
                lines = sse.aiter_lines()
                for index in range(count + 5):
                    start = time.perf_counter()
                    await mailbox.deliver(session_id, team_message("leader", f"task {index}"))
                    hint_at = 0.0
                    async for line in lines:
                        if not line.startswith("data: "):
                            continue
                        kind = json.loads(line[6:])["type"]
                        if kind == "HINT_BLOCK" and not hint_at:
                            hint_at = time.perf_counter()
                        if kind == "REPLY_END":
                            break
                    if index >= 5:  # the first deliveries activate the actor and warm up
                        samples.append((hint_at - start) * 1000)
        await redis.aclose()
    print(
        f"team message -> recipient HINT_BLOCK ({count} messages, live actor, {ingress}): "
        f"{percentiles(samples)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--ingress", choices=["serve", "uvicorn"], default="serve")
    args = parser.parse_args()
    asyncio.run(run(args.messages, args.ingress))


if __name__ == "__main__":
    main()
