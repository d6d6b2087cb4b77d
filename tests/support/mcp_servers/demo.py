"""A small MCP server (built on the `mcp` SDK) that the MCP client tests talk to.

Run it over stdio (the default) or HTTP::

    python tests/support/mcp_servers/demo.py
    python tests/support/mcp_servers/demo.py --transport streamable-http --port 8123 [--stateless]
    python tests/support/mcp_servers/demo.py --transport sse --port 8123
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import EmbeddedResource, TextResourceContents, ToolAnnotations

# A 1x1 transparent PNG.
PNG_1PX = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

server = MCPServer("demo", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def slow(steps: int, delay: float, ctx: Context) -> str:
    """Count to `steps`, reporting progress after each `delay`-second step."""
    for step in range(1, steps + 1):
        await asyncio.sleep(delay)
        await ctx.report_progress(step, steps, f"step {step}/{steps}")
    return f"done after {steps} steps"


@server.tool()
def fail(message: str) -> str:
    """Always raise with `message`."""
    raise ToolError(message)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def peek() -> str:
    """Read something without changing anything."""
    return "nothing changed"


@server.tool()
def image() -> Image:
    """Return a one-pixel PNG."""
    return Image(data=PNG_1PX, format="png")


@server.tool()
def note() -> list[EmbeddedResource]:
    """Return an embedded text resource."""
    contents = TextResourceContents(uri="memo://note", mime_type="text/plain", text="remember")
    return [EmbeddedResource(type="resource", resource=contents)]


@server.tool()
def pid() -> int:
    """Return the server's process id (the tests kill it)."""
    return os.getpid()


@server.tool()
def crash() -> str:
    """Exit the server process in the middle of the call."""
    os._exit(3)


def main() -> None:
    """Serve over the transport named on the command line."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "streamable-http", "sse"], default="stdio")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--stateless", action="store_true")
    args = parser.parse_args()
    if args.transport == "stdio":
        server.run()
    elif args.transport == "sse":
        server.run("sse", host="127.0.0.1", port=args.port)
    else:
        server.run(
            "streamable-http", host="127.0.0.1", port=args.port, stateless_http=args.stateless
        )


if __name__ == "__main__":
    main()
