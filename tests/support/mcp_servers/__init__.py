"""Real MCP servers for tests, and helpers that start them.

``demo.py`` is a server built on the `mcp` SDK; it runs over stdio (`demo_stdio_config`) or
HTTP (`serve_demo_http`, a subprocess on a free 127.0.0.1 port).
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agent_core.mcp import StdioMCPConfig
from agent_core.message import TextBlock
from agent_core.tool import ToolChunk

DEMO_SERVER = Path(__file__).with_name("demo.py")


def demo_stdio_config() -> StdioMCPConfig:
    """Run the demo server as a stdio subprocess."""
    return StdioMCPConfig(command=sys.executable, args=[str(DEMO_SERVER)])


def venv_script(name: str) -> str:
    """The path of a console script installed next to the running interpreter."""
    return str(Path(sys.executable).parent / name)


async def collect(stream: AsyncIterator[ToolChunk]) -> list[ToolChunk]:
    """Every chunk of a tool call."""
    return [chunk async for chunk in stream]


def text_of(chunk: ToolChunk) -> str:
    """The text of a chunk's content."""
    return "".join(block.text for block in chunk.content if isinstance(block, TextBlock))


@dataclass
class DemoHttpServer:
    """A running demo server reached over HTTP."""

    process: subprocess.Popen[bytes]
    url: str


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_listening(process: subprocess.Popen[bytes], port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"demo MCP server exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"demo MCP server not listening on port {port} after {timeout} s")


@contextlib.contextmanager
def serve_demo_http(
    transport: Literal["streamable-http", "sse"] = "streamable-http",
    *,
    stateless: bool = False,
    port: int | None = None,
    timeout: float = 20.0,
) -> Iterator[DemoHttpServer]:
    """Start the demo server over HTTP (on a free port unless given) and stop it on exit."""
    port = port or _free_port()
    command = [sys.executable, str(DEMO_SERVER), "--transport", transport, "--port", str(port)]
    if stateless:
        command.append("--stateless")
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    try:
        _wait_listening(process, port, timeout)
        path = "/sse" if transport == "sse" else "/mcp"
        yield DemoHttpServer(process=process, url=f"http://127.0.0.1:{port}{path}")
    finally:
        process.kill()
        process.wait()
