"""Docker workspace figures: container start, built-in tool and MCP round trips.

Starts a private dockerd and the offline test image (`tests/support/docker.py`), then opens
N Docker workspaces one after the other (each with the demo MCP server) and prints:

- start: `initialize()` (container created and started, gateway healthy, MCPs connected);
- first call: the first `Bash` call (the tool host was started during `initialize()`);
- tool round trip: `Read` of a small file through the tool host, median of M calls;
- MCP round trip: `echo` on the demo server through the gateway, median of M calls;
- close: `close()` (MCPs stopped, container removed).

Usage: python bench/docker_workspace.py [--workspaces N] [--calls M]  (as root)
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.docker import DockerDaemon, build_test_image, image_mounts
from tests.support.tool_calls import Agent
from tests.unit.workspaces._helpers import demo_mcp
from workspaces.docker import DockerWorkspace


async def measure(url: str, workspaces: int, calls: int) -> None:
    image = await build_test_image(url)
    options = {"image": image, "python": sys.executable, "mounts": image_mounts()}
    starts, firsts, closes, reads, echoes = [], [], [], [], []
    for n in range(workspaces):
        directory = Path(tempfile.mkdtemp()) / f"ws{n}"
        workspace = DockerWorkspace(directory, default_mcps=[demo_mcp()], docker_url=url, **options)
        began = time.perf_counter()
        await workspace.initialize()
        starts.append(time.perf_counter() - began)
        agent = Agent(workspace.builtin_tools())
        began = time.perf_counter()
        assert (await agent("Bash", command="true"))[0]
        firsts.append(time.perf_counter() - began)
        assert (await agent("Write", file_path="f.txt", content="hello\n"))[0]
        for _ in range(calls):
            began = time.perf_counter()
            assert (await agent("Read", file_path="f.txt"))[0]
            reads.append(time.perf_counter() - began)
        (client,) = await workspace.list_mcps()
        echo = {t.mcp_tool.name: t for t in await client.list_tools()}["echo"]
        for _ in range(calls):
            began = time.perf_counter()
            [chunk async for chunk in echo(text="x")]
            echoes.append(time.perf_counter() - began)
        began = time.perf_counter()
        await workspace.close()
        closes.append(time.perf_counter() - began)

    def ms(values: list[float]) -> str:
        return f"median {statistics.median(values) * 1000:.0f} ms (min {min(values) * 1000:.0f})"

    print(f"start: {ms(starts)} over {workspaces} workspaces")
    print(f"first Bash call: {ms(firsts)}")
    print(f"Read round trip: {ms(reads)} over {len(reads)} calls")
    print(f"MCP echo round trip: {ms(echoes)} over {len(echoes)} calls")
    print(f"close: {ms(closes)}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workspaces", type=int, default=3)
    parser.add_argument("--calls", type=int, default=30)
    args = parser.parse_args()
    with DockerDaemon.start() as daemon:
        asyncio.run(measure(daemon.url, args.workspaces, args.calls))


if __name__ == "__main__":
    main()
