"""`troupe serve`: Redis + Ray + the API (with CORS as asked); Ctrl-C leaves nothing behind."""

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

from actors._ports import find_free_port

pytestmark = [pytest.mark.integration, pytest.mark.ray, pytest.mark.redis]


def _wait_for(predicate: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _healthy(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _preflight(port: int, origin: str) -> httpx.Response:
    return httpx.options(
        f"http://127.0.0.1:{port}/sessions/",
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "x-user-id,content-type",
        },
    )


def test_ctrl_c_stops_api_ray_and_embedded_redis(tmp_path: Path) -> None:
    port = find_free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("TROUPE_REDIS_URL", "RAY_ADDRESS")}
    env["TROUPE_CORS_ORIGINS"] = "http://from-env.example"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "serve.cli",
            "serve",
            "--port",
            str(port),
            "--data-dir",
            str(tmp_path / "data"),
            "--cors-origin",
            "http://localhost:5173",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        lines: list[str] = []
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if "listening on" in line:
                break
        assert any(f"http://127.0.0.1:{port}" in line for line in lines), "".join(lines)
        _wait_for(lambda: _healthy(f"http://127.0.0.1:{port}/health"), 60, "the API")
        body = httpx.get(f"http://127.0.0.1:{port}/health").json()
        assert body["components"]["redis"] == "ok"
        for origin in ("http://localhost:5173", "http://from-env.example"):
            allowed = _preflight(port, origin)
            assert allowed.status_code == 200, allowed.text
            assert allowed.headers["access-control-allow-origin"] == origin
            assert "x-user-id" in allowed.headers["access-control-allow-headers"].lower()
        assert "access-control-allow-origin" not in _preflight(port, "http://evil.example").headers
        children = psutil.Process(process.pid).children(recursive=True)
        names = {c.name() for c in children}
        assert any("redis-server" in n for n in names), names
        assert any("raylet" in n or "gcs_server" in n for n in names), names

        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=90) == 0
        _wait_for(
            lambda: (
                not any(c.is_running() and c.status() != psutil.STATUS_ZOMBIE for c in children)
            ),
            60,
            "every child process to exit",
        )
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
