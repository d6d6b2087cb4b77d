"""Cheap HTTP/1.1 load and SSE clients on raw asyncio sockets (httpx costs more than the servers).

`python bench/_load.py post URL BODIES_JSON HEADERS_JSON CLIENTS SECONDS` runs keep-alive POST
loops in this process (client i posts body i modulo the list) and prints `accepted total`.
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


def main() -> None:
    _, mode, url, bodies, headers, clients, seconds = sys.argv
    assert mode == "post"
    encoded = [json.dumps(body).encode() for body in json.loads(bodies)]
    accepted, total = asyncio.run(
        post_loop(url, encoded, json.loads(headers), int(clients), float(seconds))
    )
    print(accepted, total)


if __name__ == "__main__":
    main()
