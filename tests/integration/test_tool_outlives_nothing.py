"""A running tool's processes die with the process that hosts its workspace.

A Ray actor hosting workspaces can be killed outright (SIGKILL, OOM, a whole-server crash): the
commands its tools started must not go on running, unowned, in the background.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest

from workspaces.sandbox import sandbox_available

pytestmark = [pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[2]

HOST = """
import asyncio, sys
from pathlib import Path
from tests.support.tool_calls import Agent
from workspaces.local import LocalWorkspace
from workspaces.sandbox import SandboxWorkspace

BACKENDS = {"sandbox": SandboxWorkspace, "local": LocalWorkspace}

async def main() -> None:
    async with BACKENDS[sys.argv[3]](Path(sys.argv[1]), "w1") as workspace:
        agent = Agent(workspace.builtin_tools())
        await agent("Bash", command=sys.argv[2], timeout=600_000)

asyncio.run(main())
"""


def processes_running(marker: str) -> list[psutil.Process]:
    return [
        proc
        for proc in psutil.process_iter(["cmdline", "status"])
        if proc.info["cmdline"] == ["sleep", marker] and proc.info["status"] != "zombie"
    ]


def wait_for(predicate: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


SANDBOX = pytest.param(
    "sandbox",
    marks=pytest.mark.skipif(sandbox_available() is not None, reason=f"{sandbox_available()}"),
)


@pytest.mark.parametrize("backend", [SANDBOX, "local"])
def test_a_commands_children_die_with_the_workspaces_host(tmp_path: Path, backend: str) -> None:
    marker = str(4000 + uuid.uuid4().int % 1000)
    command = f"sleep {marker} & sleep {marker} & touch started; wait"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    host = subprocess.Popen(
        [sys.executable, "-c", HOST, str(tmp_path / "w"), command, backend], env=env, cwd=tmp_path
    )
    try:
        wait_for(lambda: (tmp_path / "w" / "started").exists(), 60, "the command to start")
        assert len(processes_running(marker)) == 2

        host.send_signal(signal.SIGKILL)
        host.wait()

        wait_for(lambda: not processes_running(marker), 10, "the command's processes to die")
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()
