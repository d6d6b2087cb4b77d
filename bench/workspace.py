"""Workspace tool calls: round trip per backend, and the tool host's memory per live workspace.

A round trip is one `Bash` call through a `Toolkit` (as an agent makes it), from the call to
its final chunk, for two commands: `true` and one printing 1 MiB (the tool reads all of it and
keeps the first 100,000 characters for the model). Backends:

- in-process: `LocalWorkspace` tools, run in this process (the development backend);
- tool host: the tools bound to a plain `python -m workspaces.toolhost` process (no sandbox);
- sandbox: `SandboxWorkspace` (bubblewrap, cgroups when writable; its tool host inside);
- workspace actor: what a service session uses — the sandboxed workspace served by its
  `WorkspaceActor` (a local Ray with an embedded Redis, started for this column), the call
  travelling as JSON over Ray and streaming back.

Memory: `--live` workspaces per process-backed backend are opened and each makes one call; the
RSS of each tool host (with everything the backend starts around it: the bubblewrap processes)
is read from /proc.

Run: python bench/workspace.py [--calls 200] [--big-calls 50] [--live 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil
from _harness import percentiles

from agent_core.message import ToolCallBlock
from agent_core.tool import ToolBase, Toolkit
from agent_core.tool.builtin.runner import workspace_tools
from workspaces import LocalWorkspace
from workspaces._env import agent_environment
from workspaces.sandbox import SandboxWorkspace, sandbox_available
from workspaces.toolhost import ToolHostProcess

REPO = Path(__file__).resolve().parents[1]
MiB = 1024 * 1024
COMMANDS = {"true": "true", "1 MiB out": f"head -c {MiB} /dev/zero | tr '\\0' x"}


@dataclass
class Opened:
    """A live workspace's tools, and the pid of its tool host process (None: in-process)."""

    tools: list[ToolBase]
    host_pid: Callable[[], int | None]


@dataclass
class Backend:
    """A way to run a workspace's tools: `open` is one live workspace in a directory."""

    name: str
    open: Callable[[Path], AbstractAsyncContextManager[Opened]]
    unavailable: str | None = None
    """Why it cannot run here, if it cannot."""


@asynccontextmanager
async def in_process(workdir: Path) -> AsyncIterator[Opened]:
    async with LocalWorkspace(workdir, env=agent_environment(str(workdir))) as workspace:
        yield Opened(workspace.builtin_tools(), lambda: None)


@asynccontextmanager
async def tool_host(workdir: Path) -> AsyncIterator[Opened]:
    await asyncio.to_thread(workdir.mkdir, parents=True, exist_ok=True)
    env = {**agent_environment(str(workdir)), "PYTHONPATH": str(REPO)}
    host = ToolHostProcess([sys.executable, "-m", "workspaces.toolhost"], env=env)
    try:
        yield Opened([t.bind(host) for t in workspace_tools(workdir)], lambda: host.pid)
    finally:
        await host.aclose()


@asynccontextmanager
async def sandbox(workdir: Path) -> AsyncIterator[Opened]:
    async with SandboxWorkspace(workdir, f"bench-{uuid.uuid4().hex[:8]}") as workspace:
        host = workspace._host  # the bench reads the process's memory: its pid is enough
        yield Opened(workspace.builtin_tools(), lambda: host.pid)


@asynccontextmanager
async def workspace_actor(workdir: Path) -> AsyncIterator[Opened]:
    import ray

    from actors.local.embedded_redis import EmbeddedRedis
    from actors.settings import RuntimeSettings
    from actors.workspaces.ray_service import RayWorkspaceService
    from actors.workspaces.requests import WorkspaceRequest
    from actors.workspaces.session_workspaces import session_kit

    with EmbeddedRedis() as redis_server:
        ray.init(address="local", num_cpus=2, include_dashboard=False, namespace="bench-ws")
        try:
            settings = RuntimeSettings(
                redis_url=redis_server.url,
                namespace="bench-ws",
                workspace_root=str(workdir.parent),
                workspace_backend="sandbox",
            )
            service = RayWorkspaceService(settings)
            request = WorkspaceRequest(user_id="bench", agent_id=workdir.name, session_id="s")
            view = await service.open(request, None)
            yield Opened(session_kit(service, request, view).tools, lambda: None)
            await service.aclose()
        finally:
            ray.shutdown()


BACKENDS = [
    Backend("in-process", in_process),
    Backend("tool host", tool_host),
    Backend("sandbox", sandbox, sandbox_available()),
    Backend("workspace actor (sandbox)", workspace_actor, sandbox_available()),
]


async def call_ms(toolkit: Toolkit, command: str) -> float:
    call = ToolCallBlock(id="bench", name="Bash", input=json.dumps({"command": command}))
    start = time.perf_counter()
    async for chunk in toolkit.call(call):
        if chunk.is_last:
            assert chunk.metadata.get("exit_code") == 0, chunk
    return (time.perf_counter() - start) * 1000


async def round_trips(opened: Opened, calls: int, big_calls: int) -> dict[str, list[float]]:
    toolkit = Toolkit(opened.tools)
    samples: dict[str, list[float]] = {}
    for label, command in COMMANDS.items():
        count = calls if label == "true" else big_calls
        for _ in range(3):  # warm up: the tool host starts on the first call
            await call_ms(toolkit, command)
        samples[label] = [await call_ms(toolkit, command) for _ in range(count)]
    return samples


def tree_rss(pid: int) -> tuple[int, int]:
    """RSS of the tool host, and of the whole process tree started for it (`pid` is its root)."""
    tree = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    # Under a sandbox `pid` is a launcher; the tool host is the Python process inside.
    host = next(p for p in reversed(tree) if p.name().startswith("python"))
    return host.memory_info().rss, sum(p.memory_info().rss for p in tree)


async def memory(backend: Backend, root: Path, live: int) -> str:
    async with AsyncExitStack() as stack:
        pids = []
        for i in range(live):
            opened = await stack.enter_async_context(backend.open(root / f"live-{i}"))
            await call_ms(Toolkit(opened.tools), "true")
            pid = opened.host_pid()
            assert pid is not None
            pids.append(pid)
        sizes = [tree_rss(pid) for pid in pids]
    host = statistics.fmean(s[0] for s in sizes) / MiB
    tree = statistics.fmean(s[1] for s in sizes) / MiB
    return f"{live} live: tool host RSS {host:.1f} MiB each, {tree:.1f} MiB with its launchers"


async def main(calls: int, big_calls: int, live: int) -> None:
    print(f"Bash round trip through a Toolkit; {calls} x `true`, {big_calls} x 1 MiB output")
    with tempfile.TemporaryDirectory(prefix="troupe-bench-") as tmp:
        root = Path(tmp)
        for i, backend in enumerate(BACKENDS):
            if backend.unavailable is not None:
                print(f"\n{backend.name}: skipped ({backend.unavailable})")
                continue
            async with backend.open(root / f"ws-{i}") as opened:
                samples = await round_trips(opened, calls, big_calls)
                has_process = opened.host_pid() is not None
            print(f"\n{backend.name}")
            for label, values in samples.items():
                print(f"  {label:<10} {percentiles(values)}")
            if has_process:
                print(f"  memory     {await memory(backend, root / f'live-{i}', live)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--big-calls", type=int, default=50)
    parser.add_argument("--live", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.big_calls, args.live))
