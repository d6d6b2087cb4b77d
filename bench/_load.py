"""Cheap HTTP/1.1 load and SSE clients on raw asyncio sockets (httpx costs more than the servers).

`python bench/_load.py post URL BODIES_JSON HEADERS_JSON CLIENTS SECONDS` runs keep-alive POST
loops in this process (client i posts body i modulo the list) and prints `accepted total`.

`python bench/_load.py sse URL HEADERS_JSON SUBSCRIBERS EVENTS TIMEOUT` opens the streams,
prints `ready`, collects until each saw EVENTS timed events (payloads carrying `{"t", "n"}` in
`value` or `input`) or TIMEOUT passes, and prints JSON: latencies (ms), gaps, frames.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable
from urllib.parse import urlsplit


def _request(method: str, url: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    parts = urlsplit(url)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    lines = [f"{method} {target} HTTP/1.1", f"Host: {parts.netloc}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if body or method == "POST":
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def _response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    chunked = False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
        elif name.lower() == b"transfer-encoding" and b"chunked" in value.lower():
            chunked = True
    if chunked:
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    elif length:
        await reader.readexactly(length)
    return status


async def post_loop(
    url: str, bodies: list[bytes], headers: dict[str, str], clients: int, seconds: float
) -> tuple[int, int]:
    """`clients` keep-alive connections POSTing for `seconds`: (accepted, total)."""
    parts = urlsplit(url)
    counts = [0, 0]
    deadline = time.perf_counter() + seconds

    async def client(body: bytes) -> None:
        request = _request("POST", url, headers, body)
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        try:
            while time.perf_counter() < deadline:
                writer.write(request)
                status = await _response(reader)
                counts[1] += 1
                if 200 <= status < 300:
                    counts[0] += 1
        finally:
            writer.close()

    await asyncio.gather(*(client(bodies[i % len(bodies)]) for i in range(clients)))
    return counts[0], counts[1]


async def sse_subscriber(
    url: str, headers: dict[str, str], on_data: Callable[[bytes], None], opened: asyncio.Event
) -> None:
    """Read an SSE stream, calling `on_data` with each `data:` line's payload, until cancelled."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        writer.write(_request("GET", url, {**headers, "Accept": "text/event-stream"}))
        head = await reader.readuntil(b"\r\n\r\n")
        if b" 200 " not in head.split(b"\r\n", 1)[0]:
            raise RuntimeError(head.decode(errors="replace"))
        opened.set()
        buffer = b""
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                return
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                if line.startswith(b"data: "):
                    on_data(line[6:])
    finally:
        writer.close()


async def sse_run(
    url: str, headers: dict[str, str], subscribers: int, events: int, wait: float
) -> dict[str, object]:
    """Open `subscribers` streams, report `ready`, then collect timed events."""
    latencies: list[float] = []
    seen: list[list[int]] = [[] for _ in range(subscribers)]
    done = asyncio.Event()
    finished = [0]

    def collector(index: int) -> Callable[[bytes], None]:
        def on_data(data: bytes) -> None:
            now = time.time()
            payload = json.loads(data)
            timed = payload.get("value") or payload.get("input") or {}
            if "t" not in timed:
                return
            latencies.append((now - timed["t"]) * 1000)
            seen[index].append(timed["n"])
            if len(seen[index]) == events:
                finished[0] += 1
                if finished[0] == subscribers:
                    done.set()

        return on_data

    opened = [asyncio.Event() for _ in range(subscribers)]
    tasks = [
        asyncio.create_task(sse_subscriber(url, headers, collector(i), opened[i]))
        for i in range(subscribers)
    ]
    await asyncio.gather(*(event.wait() for event in opened))
    print("ready", flush=True)
    try:
        async with asyncio.timeout(wait):
            await done.wait()
    except TimeoutError:
        pass
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    gaps = sum(events - len(set(ns)) for ns in seen)
    disorder = sum(ns != sorted(ns) for ns in seen)
    return {"latencies": latencies, "gaps": gaps, "out_of_order": disorder}


def main() -> None:
    if sys.argv[1] == "sse":
        _, _, url, headers, subscribers, events, timeout = sys.argv
        result = asyncio.run(
            sse_run(url, json.loads(headers), int(subscribers), int(events), float(timeout))
        )
        print(json.dumps(result), flush=True)
        return
    _, mode, url, bodies, headers, clients, seconds = sys.argv
    assert mode == "post"
    encoded = [json.dumps(body).encode() for body in json.loads(bodies)]
    accepted, total = asyncio.run(
        post_loop(url, encoded, json.loads(headers), int(clients), float(seconds))
    )
    print(accepted, total)


if __name__ == "__main__":
    main()
