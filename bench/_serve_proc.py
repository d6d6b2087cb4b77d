"""`troupe serve` as a child process group, to kill outright (`kill -9 -PGID`) and restart."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil

from actors.local._ports import find_free_port
from actors.settings import RuntimeSettings
from tests.support.openai_server import OpenAIWireServer

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class ServeProcess:
    """A `troupe serve` (embedded Redis, local Ray, the API) in a process group of its own."""

    port: int
    data_dir: Path
    model_server: OpenAIWireServer
    process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def settings(self) -> RuntimeSettings:
        """The server's settings as this process reaches them (its Redis port changes)."""
        return RuntimeSettings(redis_url=self._redis_url())

    def start(self, within: float = 180.0) -> float:
        """Start the server on `data_dir`; return the seconds until its API answered."""
        env = {k: v for k, v in os.environ.items() if k not in ("TROUPE_REDIS_URL", "RAY_ADDRESS")}
        env["PYTHONPATH"] = str(ROOT)
        env["TROUPE_WORKSPACE_ROOT"] = str(self.data_dir / "workspaces")
        log = (self.data_dir / "serve.log").open("ab")
        command = [sys.executable, "-m", "serve.cli", "serve", "--port", str(self.port)]
        started = time.monotonic()
        self.process = subprocess.Popen(
            [*command, "--data-dir", str(self.data_dir)],
            cwd=self.data_dir,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        deadline = started + within
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                tail = (self.data_dir / "serve.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"troupe serve exited {self.process.returncode}:\n{tail}")
            try:
                health = httpx.get(f"{self.base_url}/health", timeout=2)
                if health.status_code == 200 and health.json().get("status") == "ok":
                    return time.monotonic() - started
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise TimeoutError(f"troupe serve did not answer within {within:.0f} s")

    def kill(self) -> None:
        """SIGKILL the server's whole process group (Ray's head, the API, Redis) at once."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        # Serve's proxy (a Ray worker, outside the group) lets go of the port a moment later.
        while not _port_free(self.port):
            time.sleep(0.05)

    def _redis_url(self) -> str:
        assert self.process is not None
        for child in psutil.Process(self.process.pid).children():
            # redis-server retitles itself `redis-server 127.0.0.1:PORT`.
            title = " ".join(child.cmdline())
            if "redis-server" in title:
                return f"redis://127.0.0.1:{title.split()[1].rsplit(':', 1)[1]}/0"
        raise RuntimeError("the server runs no embedded redis-server")


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@contextmanager
def serve_process(data_dir: Path) -> Iterator[ServeProcess]:
    """A started `troupe serve` on `data_dir` with a model server; both stop on exit."""
    with OpenAIWireServer() as model_server:
        server = ServeProcess(find_free_port(), data_dir, model_server)
        server.start()
        try:
            yield server
        finally:
            if server.process is not None and server.process.poll() is None:
                server.process.send_signal(signal.SIGINT)
                try:
                    server.process.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    server.kill()
