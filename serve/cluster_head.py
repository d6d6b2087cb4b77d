"""`python -m serve.cluster_head start|stop`: Troupe on a cluster's head, as `cluster.yaml` runs it.

`start` (after `ray start --head`) brings up, under one supervising process:

1. the secret key: `TROUPE_SECRET_KEY`, else the one stored in `DATA_DIR/secret_key`, else a new
   one generated and stored there (mode 600), so credentials stay readable across `ray up`s;
2. Redis, unless `TROUPE_REDIS_URL` is given: redis-server on the head's address (the one Ray
   registered for this node) with an append-only file in `DATA_DIR/redis` and a password kept
   in `DATA_DIR/redis_password`;
3. `troupe serve --auth keys` on the head's address, joined to the head's Ray.

It writes `DATA_DIR/env` (mode 600: `TROUPE_REDIS_URL`, `TROUPE_SECRET_KEY`), which operators
source on the head to run `troupe apikey create`. It stops everything it started when the
local Ray stops (`ray down`, or `ray stop` before a restart) or when `troupe serve` exits, so
nothing outlives the cluster; `stop` stops a running supervisor (its pid is in `DATA_DIR`).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from cryptography.fernet import Fernet

log = logging.getLogger(__name__)

_PID_FILE = "head.pid"
_RAY_CHECK_S = 2.0
_RAY_MISSES = 3
_STOP_TIMEOUT_S = 30.0


def _private(path: Path, text: str) -> None:
    """Write `text` to a file only its owner can read."""
    path.touch(mode=0o600, exist_ok=True)
    path.chmod(0o600)
    path.write_text(text)


def stored_secret(data_dir: Path, name: str, generate: str) -> str:
    """The secret kept in `data_dir/name`, generated (`generate`) and stored on first use."""
    path = data_dir / name
    if path.exists():
        return path.read_text().strip()
    _private(path, generate)
    return generate


def secret_key(data_dir: Path) -> str:
    """`TROUPE_SECRET_KEY`, else the stored key (generated once)."""
    given = os.environ.get("TROUPE_SECRET_KEY", "").strip()
    if given:
        return given
    return stored_secret(data_dir, "secret_key", Fernet.generate_key().decode())


def _ray_answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def _start(args: argparse.Namespace) -> None:
    from ray.util import get_node_ip_address

    from actors.local.embedded_redis import EmbeddedRedis

    data_dir: Path = args.data_dir.expanduser()
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    (data_dir / _PID_FILE).write_text(str(os.getpid()))
    address = args.host or get_node_ip_address()
    env = {**os.environ, "TROUPE_SECRET_KEY": secret_key(data_dir)}
    with contextlib.ExitStack() as stack:
        redis_url = os.environ.get("TROUPE_REDIS_URL", "").strip()
        if not redis_url:
            password = stored_secret(data_dir, "redis_password", os.urandom(24).hex())
            redis = EmbeddedRedis(
                data_dir=data_dir / "redis", port=args.redis_port, host=address, password=password
            )
            redis_url = stack.enter_context(redis).url
        env["TROUPE_REDIS_URL"] = redis_url
        _private(
            data_dir / "env",
            "".join(f"export {k}={env[k]}\n" for k in ("TROUPE_REDIS_URL", "TROUPE_SECRET_KEY")),
        )
        command = [
            *(sys.executable, "-m", "serve.cli", "serve"),
            *("--ray-address", f"{address}:{args.ray_port}"),
            *("--host", address, "--port", str(args.port)),
            *("--auth", "keys", "--redis-url", redis_url, *args.serve_args),
        ]
        server = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL)
        stack.callback(_terminate, server)
        _supervise(server, address, args.ray_port)


def _terminate(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)  # `troupe serve` stops Serve and Ray's driver cleanly
        try:
            process.wait(_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _supervise(server: subprocess.Popen[bytes], host: str, ray_port: int) -> None:
    """Return when `troupe serve` exits, Ray stops answering, or SIGTERM/SIGINT arrives."""
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    misses = 0
    while not stop.wait(_RAY_CHECK_S) and server.poll() is None:
        misses = 0 if _ray_answers(host, ray_port) else misses + 1
        if misses >= _RAY_MISSES:
            log.info("Ray stopped answering at %s:%d; stopping Troupe", host, ray_port)
            return


def _stop(args: argparse.Namespace) -> None:
    pid_file = args.data_dir.expanduser() / _PID_FILE
    try:
        pid = int(pid_file.read_text())
    except (OSError, ValueError):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + _STOP_TIMEOUT_S + 5
        while time.monotonic() < deadline:
            os.kill(pid, 0)
            time.sleep(0.2)
    pid_file.unlink(missing_ok=True)


def parser() -> argparse.ArgumentParser:
    """The command line of `python -m serve.cluster_head`."""
    parser = argparse.ArgumentParser(prog="python -m serve.cluster_head")
    parser.add_argument("action", choices=["start", "stop"])
    parser.add_argument("--data-dir", type=Path, default=Path("~/.troupe"))
    parser.add_argument("--host", help="the API's and Redis's address (default: Ray's node IP)")
    parser.add_argument("--port", type=int, default=8000, help="the API's port")
    parser.add_argument("--redis-port", type=int, default=6379)
    parser.add_argument("--ray-port", type=int, default=6380, help="the head's GCS port")
    parser.epilog = "Arguments after `--` are passed on to `troupe serve`."
    return parser


def split_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """This command's arguments, and those after `--` (for `troupe serve`)."""
    if "--" not in argv:
        return argv, []
    cut = argv.index("--")
    return argv[:cut], argv[cut + 1 :]


def main(argv: list[str] | None = None) -> None:
    """Entry point: `start` or `stop` (see the module docstring)."""
    logging.basicConfig(level="INFO", format="%(asctime)s troupe head: %(message)s")
    own, serve_args = split_args(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(own)
    args.serve_args = serve_args
    _start(args) if args.action == "start" else _stop(args)


if __name__ == "__main__":
    main()
