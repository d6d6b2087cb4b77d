"""The dashboard agent's stand-in: ports published as unavailable, gone with its parent."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil

import actors.local._agent_stand_in as stand_in

NODE_ID = "ab" * 28
PORT_FILES = ("metrics_agent_port", "metrics_export_port", "dashboard_agent_listen_port")


def _wait_for(predicate: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_it_publishes_every_port_as_unavailable_and_exits_with_its_parent(tmp_path: Path) -> None:
    # A parent that starts the stand-in (with the arguments a raylet gives the agent) and
    # then waits for a line on stdin, so the test decides when the parent goes.
    agent = [
        sys.executable,
        "-I",
        "-S",
        stand_in.__file__,
        f"--node-id={NODE_ID}",
        "--node-ip-address=127.0.0.1",
        f"--session-dir={tmp_path}",
        "--head",
        "--agent-id",
        "7",
    ]
    parent_code = (
        "import subprocess, sys\n"
        f"child = subprocess.Popen({agent!r})\n"
        "print(child.pid, flush=True)\n"
        "sys.stdin.readline()\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", parent_code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None
    assert parent.stdin is not None
    child = psutil.Process(int(parent.stdout.readline()))
    try:
        files = [tmp_path / f"{name}_{NODE_ID}" for name in PORT_FILES]
        _wait_for(lambda: all(f.exists() for f in files), 30, "the port files")
        assert [f.read_text() for f in files] == ["-1", "-1", "-1"]
        assert child.is_running()
        assert child.memory_info().rss < 32 * 2**20

        parent.stdin.write("\n")
        parent.stdin.flush()
        assert parent.wait(timeout=30) == 0
        _wait_for(
            lambda: not child.is_running() or child.status() == psutil.STATUS_ZOMBIE,
            30,
            "the stand-in to exit after its parent",
        )
    finally:
        if child.is_running():
            child.kill()
        if parent.poll() is None:
            parent.kill()
            parent.wait()
