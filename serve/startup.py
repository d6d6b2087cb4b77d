"""What `troupe serve` does before the API is up: the port, a placeholder, the Ray address.

- `claim_port` fails at once, in one line, when something already listens on host:port;
- `StartingListener` answers every request on that port with 503 and a JSON body
  `{"status": "starting", "step": ...}` while Redis, Ray and Serve start. Its socket has
  SO_REUSEPORT, as Serve's proxy has, so the proxy binds next to it; a one-instruction socket
  filter sends every new connection to the first socket of the port (the placeholder), so
  Serve's proxy gets none while it has no routes yet (it would answer a plain 404). Closing
  the placeholder hands the port over: no moment without an answer;
- `wait_for_ray_address` bounds the wait for a cluster to join (`ray.init` alone retries for
  minutes).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

_PROBE_INTERVAL_S = 0.5
# Linux: SO_ATTACH_REUSEPORT_CBPF, and a classic BPF program `ret #0` (BPF_RET|BPF_K): pick the
# port's first socket for every new connection.
_SO_ATTACH_REUSEPORT_CBPF = 51
_BPF_RET_FIRST = struct.pack("HBBI", 0x06, 0, 0, 0)


class StartupError(RuntimeError):
    """`troupe serve` cannot start; the message is the one line shown to the user."""


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _listening_inodes(port: int) -> set[str]:
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            # local_address is HEXIP:HEXPORT; state 0A is LISTEN; field 9 is the socket inode.
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    return inodes


def _listener(port: int) -> str:
    """Name the process listening on `port` (from /proc), or say it cannot be seen."""
    inodes = {f"socket:[{inode}]" for inode in _listening_inodes(port)}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                if os.readlink(fd) in inodes:
                    name = (proc / "comm").read_text().strip()
                    return f"process {proc.name} ({name})"
        except OSError:
            continue
    return "another program"


def claim_port(host: str, port: int) -> None:
    """Check that nothing listens on host:port (a plain bind, without SO_REUSEPORT).

    Raises:
        StartupError: The port is taken (naming the process when it can be seen), or the
            address cannot be bound at all.
    """
    with socket.socket(_family(host), socket.SOCK_STREAM) as sock:
        # SO_REUSEADDR skips sockets in TIME_WAIT (a server just stopped), never a listener.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise StartupError(
                    f"port {port} on {host} is already in use by {_listener(port)}; "
                    "stop it or pick another --port"
                ) from exc
            raise StartupError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, host: str, port: int, status: dict[str, Any]) -> None:
        self.address_family = _family(host)
        self.status = status
        super().__init__((host, port), _StartingHandler, bind_and_activate=False)

    def server_bind(self) -> None:
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        super().server_bind()
        _steer_to_first(self.socket)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Say nothing of a client that left before its answer; report anything else."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _steer_to_first(sock: socket.socket) -> None:
    """Send the port's new connections to its first socket (here, the first bound: this one).

    Without the filter (another kernel) the proxy would take a share of them early; harmless
    but for plain 404s while it has no routes.
    """
    program = ctypes.create_string_buffer(_BPF_RET_FIRST)
    fprog = struct.pack("@HP", 1, ctypes.addressof(program))
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, _SO_ATTACH_REUSEPORT_CBPF, fprog)


class _StartingHandler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        if self.path.split("?", 1)[0] == "/health":
            body = dict(self.server.status)
        else:
            body = {"detail": "Troupe is starting; retry shortly", **self.server.status}
        payload = json.dumps(body).encode()
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Retry-After", "1")
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: start-up progress is printed by the CLI."""

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _answer


class StartingListener:
    """Serve `{"status": "starting", "step": ...}` on host:port until `close()`.

    Args:
        host: Address to bind (the API's).
        port: Port to bind (the API's).

    Raises:
        StartupError: The port cannot be bound.
    """

    def __init__(self, host: str, port: int) -> None:
        self._status: dict[str, Any] = {"status": "starting", "step": "starting"}
        try:
            self._server = _Server(host, port, self._status)
            self._server.server_bind()
            self._server.server_activate()
        except OSError as exc:
            self._server.server_close()
            raise StartupError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="troupe-starting", daemon=True
        )
        self._thread.start()

    def step(self, description: str) -> None:
        """Report `description` as the current start-up step."""
        self._status["step"] = description

    def close(self) -> None:
        """Stop answering and free the socket; idempotent."""
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()


def wait_for_ray_address(
    address: str, timeout: float, between_probes: Callable[[], None] = lambda: None
) -> None:
    """Wait until the Ray cluster at `address` accepts TCP connections, at most `timeout` s.

    `auto` and `local` are left to Ray (they fail fast on their own). `between_probes` runs
    after each failed probe (it may raise to stop waiting).

    Raises:
        StartupError: The address is malformed or nothing answered in time.
    """
    target = address.removeprefix("ray://")
    if target in ("auto", "local"):
        return
    host, sep, port_text = target.rpartition(":")
    if not sep or not port_text.isdigit():
        raise StartupError(f"--ray-address {address!r} is not host:port (or auto)")
    host = host.strip("[]")
    deadline = time.monotonic() + timeout
    last: OSError | None = None
    while True:
        try:
            with socket.create_connection((host, int(port_text)), timeout=_PROBE_INTERVAL_S * 4):
                return
        except OSError as exc:
            last = exc
        if time.monotonic() >= deadline:
            reason = last.strerror or str(last) if last else "no answer"
            raise StartupError(
                f"no Ray cluster answers at {address} after {timeout:g}s ({reason}); "
                "start one with `ray start --head` or omit --ray-address to run a local Ray"
            )
        time.sleep(_PROBE_INTERVAL_S)
        between_probes()
