"""A `troupe serve` killed outright (its whole process group) leaves no Ray worker serving on.

Ray's workers run in process groups of their own, so they outlive such a kill until they
notice their raylet is gone; Ray's own check for that is turned off here (a minute-long
interval), so only the server's watch can end them in time.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

from actors.local._ports import find_free_port

pytestmark = [pytest.mark.integration, pytest.mark.ray, pytest.mark.redis]

ROOT = Path(__file__).resolve().parents[2]


def wait_for(predicate: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def serving(url: str) -> bool:
    try:
        response = httpx.get(f"{url}/health", timeout=2)
    except httpx.HTTPError:
        return False
    return response.status_code == 200 and response.json().get("status") != "starting"


def ray_actors(server: psutil.Process) -> list[psutil.Process]:
    """The Ray worker processes of `server` that host an actor (idle ones run no code)."""
    found = []
    for proc in server.children(recursive=True):
        try:
            title = " ".join(proc.cmdline())
        except psutil.Error:
            continue
        if title.startswith("ray::") and not title.startswith("ray::IDLE"):
            found.append(proc)
    return found


def gone(proc: psutil.Process) -> bool:
    try:
        return proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_killing_the_servers_process_group_kills_its_ray_workers(tmp_path: Path) -> None:
    port = find_free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("TROUPE_REDIS_URL", "RAY_ADDRESS")}
    env["PYTHONPATH"] = str(ROOT)
    env["RAY_raylet_death_check_interval_milliseconds"] = "60000"
    process = subprocess.Popen(
        [sys.executable, "-m", "serve.cli", "serve", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(lambda: serving(f"http://127.0.0.1:{port}"), 180, "the API")
        workers = ray_actors(psutil.Process(process.pid))
        roles = {" ".join(w.cmdline()).split()[0] for w in workers}
        assert {"ray::ServeReplica:troupe:troupe-api", "ray::ProxyActor"} <= roles
        assert any(os.getpgid(w.pid) != process.pid for w in workers)  # outside the group

        os.killpg(process.pid, signal.SIGKILL)

        wait_for(lambda: all(gone(w) for w in workers), 20, "the Ray workers to die")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
