"""`troupe serve`: Redis + Ray + the API (with CORS as asked); Ctrl-C leaves nothing behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from actors.local._ports import find_free_port

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


# -- start-up and shutdown as a user meets them ----------------------------------------------


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("TROUPE_REDIS_URL", "RAY_ADDRESS")}


def _serve_cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "serve.cli", "serve", *args]


def _run_fails(*args: str) -> tuple[int, str]:
    done = subprocess.run(
        _serve_cli(*args), capture_output=True, text=True, env=_clean_env(), timeout=120
    )
    return done.returncode, done.stderr


class _Server:
    """A `troupe serve` child whose output is collected by a thread."""

    def __init__(self, port: int, data_dir: Path, *args: str) -> None:
        self.port = port
        self.data_dir = data_dir
        self.process = subprocess.Popen(
            _serve_cli("--port", str(port), "--data-dir", str(data_dir), *args),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=_clean_env(),
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)

    def output(self) -> str:
        return "".join(self.lines)

    def saw(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        code = self.process.wait(timeout=90)
        self._reader.join(timeout=10)
        return code


@pytest.fixture(scope="module")
def started(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[_Server, list[Any]]]:
    """One server for the module, with what `/health` answered while it was starting."""
    server = _Server(find_free_port(), tmp_path_factory.mktemp("serve") / "data")
    during_startup: list[Any] = []
    try:
        _wait_for(lambda: server.saw("[1/4]") or server.process.poll() is not None, 60, "[1/4]")
        url = f"http://127.0.0.1:{server.port}/health"

        def ready() -> bool:
            try:
                response = httpx.get(url, timeout=2)
            except httpx.HTTPError:
                return False
            if response.status_code != 200:
                during_startup.append((response.status_code, response.json()))
            return server.saw("Press Ctrl-C to stop")

        _wait_for(ready, 180, "the banner")
        yield server, during_startup
    finally:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()


def test_health_answers_json_from_the_start_and_a_banner_follows(
    started: tuple[_Server, list[Any]],
) -> None:
    server, during_startup = started
    assert during_startup, "no answer was seen before the API served"
    status, body = during_startup[0]
    assert status == 503
    assert body["status"] == "starting"
    assert body["step"]
    out = server.output()
    for step in ("[1/4]", "[2/4]", "[3/4]", "[4/4]"):
        assert step in out, out
    base = f"http://127.0.0.1:{server.port}"
    assert f"docs    {base}/docs" in out, out
    assert f"console {base}/console" in out, out
    assert httpx.get(f"{base}/health").json()["status"] == "ok"
    # Quiet by default: no Serve access lines nor route dumps.
    httpx.get(f"{base}/health")
    assert "GET /health" not in server.output()
    assert "Deployed app" not in server.output()
    assert "ready at" not in server.output()
    assert server.output().count("TROUPE_SECRET_KEY is unset") == 1


def test_second_server_on_the_same_port_exits_with_one_line(
    started: tuple[_Server, list[Any]], tmp_path: Path
) -> None:
    server, _ = started
    code, err = _run_fails("--port", str(server.port), "--data-dir", str(tmp_path / "other"))
    assert code == 2
    lines = err.strip().splitlines()
    assert lines == [
        f"troupe: port {server.port} on 127.0.0.1 is already in use by process "
        f"{_listener_pid(server)} ({psutil.Process(_listener_pid(server)).name()}); "
        "stop it or pick another --port"
    ], err
    assert not (tmp_path / "other" / "redis").exists()


def test_second_server_on_the_same_data_dir_exits_with_one_line(
    started: tuple[_Server, list[Any]],
) -> None:
    server, _ = started
    code, err = _run_fails("--port", str(find_free_port()), "--data-dir", str(server.data_dir))
    assert code == 2
    assert err.strip().splitlines() == [
        f"troupe: the redis data dir {server.data_dir.resolve() / 'redis'} is in use by "
        f"process {server.process.pid}"
    ], err


def _listener_pid(server: _Server) -> int:
    for proc in [psutil.Process(server.process.pid), *_tree(server)]:
        for conn in proc.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr.port == server.port:
                return int(proc.pid)
    raise AssertionError("nobody listens on the API port")


def _tree(server: _Server) -> list[psutil.Process]:
    return psutil.Process(server.process.pid).children(recursive=True)


def test_every_listener_of_the_server_is_on_loopback(started: tuple[_Server, list[Any]]) -> None:
    server, _ = started
    listeners = {
        (proc.name(), conn.laddr.ip, conn.laddr.port)
        for proc in [psutil.Process(server.process.pid), *_tree(server)]
        for conn in proc.net_connections(kind="tcp")
        if conn.status == psutil.CONN_LISTEN
    }
    assert any(port == server.port for _, _, port in listeners)
    names = {name for name, _, _ in listeners}
    assert {"gcs_server", "raylet"} <= names, listeners
    # The API replica's own gRPC server (Serve binds it to all interfaces unless told).
    assert sum(name.startswith("ray::ServeReplica") for name, _, _ in listeners) >= 2, listeners
    loopback = ("127.0.0.1", "::ffff:127.0.0.1", "::1")
    assert {entry for entry in listeners if entry[1] not in loopback} == set()


def _role(proc: psutil.Process) -> str:
    """A process's name, or for a Python interpreter the script it runs ("" once it has gone)."""
    try:
        cmdline = proc.cmdline()
        name = proc.name()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return ""
    scripts = [Path(arg).name for arg in cmdline if arg.endswith(".py")]
    if name.startswith("python") and scripts:
        return scripts[0]
    # A Ray worker renames itself (setproctitle) once its actor starts; the kernel's name is cut
    # at 15 characters, so the title is read from the command line.
    return cmdline[0] if cmdline and cmdline[0].startswith("ray::") else name


def _roles(server: _Server) -> set[str]:
    return {_role(proc) for proc in _tree(server)}


def test_no_dashboard_processes_run_without_dashboard(started: tuple[_Server, list[Any]]) -> None:
    server, _ = started
    expected = {"gcs_server", "raylet", "ray::ServeController", "ray::ProxyActor"}
    # Workers take their actor's title a moment after they start: wait for it, not for a fixed time.
    _wait_for(lambda: expected <= _roles(server), 30, f"the processes {sorted(expected)}")
    roles = _roles(server)
    unused = {"dashboard.py", "agent.py", "ray::DashboardAgent", "monitor.py", "log_monitor.py"}
    assert not roles & unused, roles
    assert "  console " in server.output()
    assert "Ray dashboard" not in server.output()


def test_ctrl_c_stops_cleanly_without_a_traceback(started: tuple[_Server, list[Any]]) -> None:
    server, _ = started
    children = _tree(server)
    assert server.stop() == 0
    out = server.output()
    assert "Traceback" not in out, out
    assert "KeyboardInterrupt" not in out, out
    assert "graceful_shutdown" not in out, out
    _wait_for(
        lambda: not any(c.is_running() and c.status() != psutil.STATUS_ZOMBIE for c in children),
        60,
        "every child process to exit",
    )


def test_unreachable_ray_address_fails_in_bounded_time(tmp_path: Path) -> None:
    port = find_free_port()  # nothing listens there
    code, err = _run_fails(
        "--port",
        str(find_free_port()),
        "--data-dir",
        str(tmp_path / "data"),
        "--ray-address",
        f"127.0.0.1:{port}",
        "--ray-timeout",
        "2",
    )
    assert code == 2
    errors = [line for line in err.splitlines() if not line.startswith("WARNING: ")]
    assert len(errors) == 1, err
    assert errors[0].startswith(f"troupe: no Ray cluster answers at 127.0.0.1:{port} after 2s")


def test_unreachable_redis_fails_with_one_line(tmp_path: Path) -> None:
    port = find_free_port()  # nothing listens there
    code, err = _run_fails(
        "--port",
        str(find_free_port()),
        "--data-dir",
        str(tmp_path / "data"),
        "--redis-url",
        f"redis://127.0.0.1:{port}/0",
    )
    assert code == 2
    errors = [line for line in err.splitlines() if not line.startswith("WARNING: ")]
    assert len(errors) == 1, err
    assert errors[0].startswith("troupe: cannot reach Redis:")


def test_ctrl_c_while_starting_exits_without_a_traceback(tmp_path: Path) -> None:
    server = _Server(find_free_port(), tmp_path / "data")
    try:
        _wait_for(lambda: server.saw("[3/4]") or server.process.poll() is not None, 60, "[3/4]")
        code = server.stop()
        out = server.output()
        assert code in (0, 130), out
        assert "Traceback" not in out, out
    finally:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()


def test_dashboard_runs_on_the_host_when_asked(tmp_path: Path) -> None:
    server = _Server(find_free_port(), tmp_path / "data", "--dashboard")
    try:
        _wait_for(
            lambda: server.saw("Press Ctrl-C to stop") or server.process.poll() is not None,
            300,
            "the banner",
        )
        lines = [line for line in server.lines if "Ray dashboard" in line]
        assert len(lines) == 1, server.output()
        url = lines[0].split()[-1]
        assert url.startswith("http://127.0.0.1:"), lines
        assert httpx.get(url, timeout=10).status_code == 200
        roles = {_role(proc) for proc in _tree(server)}
        assert {"dashboard.py", "ray::DashboardAgent"} <= roles, roles
        loopback = ("127.0.0.1", "::ffff:127.0.0.1", "::1")
        outside = {
            (proc.name(), conn.laddr.ip, conn.laddr.port)
            for proc in [psutil.Process(server.process.pid), *_tree(server)]
            for conn in proc.net_connections(kind="tcp")
            if conn.status == psutil.CONN_LISTEN and conn.laddr.ip not in loopback
        }
        assert outside == set()
        assert server.stop() == 0
    finally:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()
