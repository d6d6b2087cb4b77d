"""The `troupe` command: `troupe serve` runs the API on Ray with Redis (embedded by default).

The other commands (`troupe agent|credential|session|chat|logs|status`) live in
`serve.cli_commands`.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from serve.startup import StartingListener, StartupError, claim_port, wait_for_ray_address

if TYPE_CHECKING:
    from serve.auth import AuthMode

CORS_ENV = "TROUPE_CORS_ORIGINS"


LOG_LEVELS = ("debug", "info", "warning", "error")
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_STEPS = 4
_READY_POLL_S = 0.5
_CLEANUP_GRACE_S = 30.0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="troupe", description="Troupe agent service.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "serve",
        help="serve the REST/SSE API on Ray Serve",
        description="Serve the REST/SSE API on Ray Serve, with Redis (embedded by default).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    run.add_argument(
        "--host",
        default="127.0.0.1",
        help="HTTP bind address; a local Ray listens on this host only when it is a loopback "
        "address (otherwise Ray listens on all interfaces)",
    )
    run.add_argument("--port", type=int, default=8000, help="HTTP port")
    run.add_argument(
        "--redis-url",
        default=os.environ.get("TROUPE_REDIS_URL"),
        help="Redis to use; unset: start an embedded redis-server (TROUPE_REDIS_URL)",
    )
    run.add_argument(
        "--ray-address",
        default=os.environ.get("RAY_ADDRESS"),
        help="Ray cluster to join (host:port or auto); unset: start a local Ray (RAY_ADDRESS)",
    )
    run.add_argument(
        "--ray-timeout",
        type=float,
        default=30.0,
        help="seconds to wait for --ray-address to answer",
    )
    run.add_argument("--replicas", type=int, default=1, help="API replicas (or uvicorn workers)")
    run.add_argument(
        "--ingress",
        choices=["serve", "uvicorn"],
        default="serve",
        help="serve: a Ray Serve deployment; uvicorn: the same app on uvicorn workers that "
        "join Ray (no proxy hop: several times less CPU per request)",
    )
    run.add_argument(
        "--auth",
        choices=["dev", "keys"],
        default=os.environ.get("TROUPE_AUTH"),
        help="how callers are identified: keys (an API key, `troupe apikey create`) or dev "
        "(the X-User-ID header, trusted); default: dev on a loopback --host, else keys "
        "(TROUPE_AUTH)",
    )
    run.add_argument(
        "--workspace-backend",
        choices=["auto", "sandbox", "docker", "e2b", "local"],
        default=os.environ.get("TROUPE_WORKSPACE_BACKEND", "auto"),
        help="where agents' tools run (auto: sandbox where bubblewrap exists, else "
        "local with a warning; TROUPE_WORKSPACE_BACKEND)",
    )
    run.add_argument(
        "--cors-origin",
        action="append",
        dest="cors_origins",
        default=[o.strip() for o in os.environ.get(CORS_ENV, "").split(",") if o.strip()],
        metavar="ORIGIN",
        help=f"let browser pages from ORIGIN call the API (repeatable; {CORS_ENV}, "
        "comma-separated, adds to these)",
    )
    run.add_argument(
        "--data-dir",
        type=Path,
        default=Path(".troupe"),
        help="the server's own data: the embedded redis-server keeps its append-only file in "
        "DATA_DIR/redis, locked so that one server at a time uses it",
    )
    run.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default="warning",
        help="what Troupe, Ray and Serve log; info and debug also show the output of Ray's "
        "workers and raylet (otherwise only in Ray's session logs)",
    )
    run.add_argument(
        "--access-log",
        action="store_true",
        help="log a line per HTTP request",
    )
    run.add_argument(
        "--dashboard",
        action="store_true",
        help="run Ray's dashboard (local Ray only), on --host port 8265 or the next free one",
    )
    return parser


def _env_list(name: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


def _wait_for_signal() -> None:
    _check_interrupted()
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    # A second Ctrl-C while stopping must not cut the clean-up short with a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


_interrupted = threading.Event()


def _interrupt_starting(signum: int, frame: object) -> None:
    """SIGINT during start-up: stop at the next step, with the clean-up bounded.

    The interrupt is not raised from here: it could land inside one of Ray's C callbacks,
    which would print it and carry on starting. `_check_interrupted` raises it between steps
    and while waiting. After `_CLEANUP_GRACE_S` the process exits anyway (a stop begun while
    Ray is half up can block); the node's processes go with it (Ray's reaper watches this one).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _interrupted.set()

    def give_up() -> None:
        print("troupe: interrupted (clean-up cut short)", file=sys.stderr, flush=True)
        os._exit(130)

    timer = threading.Timer(_CLEANUP_GRACE_S, give_up)
    timer.daemon = True
    timer.start()


def _check_interrupted() -> None:
    """Raise KeyboardInterrupt if Ctrl-C was pressed during start-up."""
    if _interrupted.is_set():
        raise KeyboardInterrupt


def _progress(number: int, text: str, listener: StartingListener | None = None) -> None:
    _check_interrupted()
    print(f"[{number}/{_STEPS}] {text}", flush=True)
    if listener is not None:
        listener.step(text)


def _url_host(host: str) -> str:
    """The host to put in a URL for `host` (all-interfaces binds are reached on loopback)."""
    reachable = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    return f"[{reachable}]" if ":" in reachable else reachable


def _wait_until_served(base_url: str, listener: StartingListener) -> dict[str, Any]:
    """Wait for the application to run, hand the port to Serve's proxy, wait for `/health`."""
    from serve import deployment

    while (state := deployment.status()) != "RUNNING":
        if state in ("DEPLOY_FAILED", "UNHEALTHY"):
            message = deployment.failure().strip().splitlines()
            raise StartupError(f"the API did not deploy: {message[-1] if message else state}")
        time.sleep(_READY_POLL_S)
        _check_interrupted()
    listener.close()
    return _wait_until_answered(base_url)


def _wait_until_answered(
    base_url: str, server: subprocess.Popen[bytes] | None = None
) -> dict[str, Any]:
    """Wait for `/health` to answer 200 (while `server`, if given, runs); return its body."""
    import httpx

    while True:
        if server is not None and server.poll() is not None:
            raise StartupError(f"the uvicorn ingress exited with status {server.returncode}")
        try:
            response = httpx.get(f"{base_url}/health", timeout=5)
            if response.status_code == 200:
                body: dict[str, Any] = response.json()
                return body
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(_READY_POLL_S)
        _check_interrupted()


def _start_ray(args: argparse.Namespace, namespace: str, stack: ExitStack) -> str | None:
    """Start or join Ray (stopped or left by `stack`); return the dashboard's address if any."""
    import ray

    level = args.log_level.upper()
    # Worker and raylet output (in Ray's session logs anyway) reaches this console only when
    # asked for: by default it is per-actor noise and a raylet line on every clean stop.
    verbose = args.log_level in ("debug", "info")
    if not args.ray_address:
        from actors.local.ray_node import LocalRay

        local = LocalRay(
            namespace=namespace,
            dashboard=args.dashboard,
            dashboard_host=args.host,
            log_to_driver=verbose,
            logging_level=level,
        )
        try:
            return stack.enter_context(local).dashboard_url
        except Exception as exc:  # Ray raises plain exceptions when its node cannot start
            lines = str(exc).strip().splitlines()
            raise StartupError(f"cannot start Ray: {lines[0] if lines else repr(exc)}") from exc
    wait_for_ray_address(args.ray_address, args.ray_timeout, _check_interrupted)
    try:
        context = ray.init(
            address=args.ray_address,
            namespace=namespace,
            logging_level=level,
            log_to_driver=verbose,
        )
    except ConnectionError as exc:
        raise StartupError(f"cannot join Ray at {args.ray_address}: {exc}") from exc
    stack.callback(ray.shutdown)
    url: str | None = context.dashboard_url
    return url or None


def serve_command(args: argparse.Namespace) -> None:
    """Start (or join) Redis and Ray, deploy the API, and run until interrupted.

    The port is claimed first and answers `{"status": "starting"}` until the API serves; the
    runtime's modules are imported only then (they take seconds).
    """
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    signal.signal(signal.SIGINT, _interrupt_starting)
    if args.host in _LOOPBACK and not args.ray_address:
        # Ray then takes the loopback address as the node's (as it does on macOS), so its GCS,
        # raylet, agents and workers listen on 127.0.0.1 only. Read when `ray` is imported.
        os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    with ExitStack() as stack:
        _progress(1, f"claiming {args.host}:{args.port}")
        claim_port(args.host, args.port)
        listener = StartingListener(args.host, args.port)
        stack.callback(listener.close)
        from redis.exceptions import ConnectionError as RedisConnectionError

        from actors.local.embedded_redis import EmbeddedRedisError
        from workspaces import WorkspaceError

        try:
            _serve(args, stack, listener)
        except (EmbeddedRedisError, WorkspaceError) as exc:
            raise StartupError(str(exc).splitlines()[0]) from exc
        except RedisConnectionError as exc:  # the deployment claims its generation there
            raise StartupError(f"cannot reach Redis: {exc}") from exc


def _serve(args: argparse.Namespace, stack: ExitStack, listener: StartingListener) -> None:
    from actors.local.embedded_redis import EmbeddedRedis
    from actors.settings import RuntimeSettings
    from actors.storage.crypto import GENERATED_KEY_WARNING
    from actors.workspaces.backends import resolve_backend

    redis_url = args.redis_url
    if redis_url:
        _progress(2, "using Redis at " + redis_url.split("@")[-1], listener)
    else:
        _progress(2, f"starting redis-server (data in {args.data_dir / 'redis'})", listener)
        redis_url = stack.enter_context(EmbeddedRedis(data_dir=args.data_dir / "redis")).url
    settings = RuntimeSettings.from_env(redis_url).model_copy(
        update={"workspace_backend": args.workspace_backend}
    )
    backend, warning = resolve_backend(settings)
    if warning:
        print(f"WARNING: {warning}", file=sys.stderr, flush=True)
    if settings.secret_key is None:
        print(f"WARNING: {GENERATED_KEY_WARNING}", file=sys.stderr, flush=True)
    where = f"joining Ray at {args.ray_address}" if args.ray_address else "starting Ray"
    _progress(3, where, listener)
    dashboard_url = _start_ray(args, settings.namespace, stack)
    from serve import deployment
    from serve.app import cors_middleware

    # Before anything is deployed: a Redis that cannot be reached stops the start-up here.
    settings = deployment.claimed(settings)

    base_url = f"http://{_url_host(args.host)}:{args.port}"
    auth = _auth_mode(args)
    if args.ingress == "uvicorn":
        _progress(4, f"starting {args.replicas} uvicorn worker(s) (tools: {backend})", listener)
        listener.close()  # uvicorn binds the port itself
        server = deployment.run_uvicorn(
            settings,
            args.host,
            args.port,
            args.replicas,
            cors_origins=args.cors_origins,
            log_level=args.log_level,
            access_log=args.access_log,
            auth=auth,
        )
        stack.callback(server.wait)
        stack.callback(server.terminate)
        health = _wait_until_answered(base_url, server)
        _banner(base_url, health, dashboard_url)
        _wait_for_signal()
        print("shutting down", flush=True)
        return
    _progress(4, f"deploying the API ({args.replicas} replica(s), tools: {backend})", listener)
    middlewares = [cors_middleware(args.cors_origins)] if args.cors_origins else []
    stack.callback(deployment.shutdown if args.ray_address else deployment.remove)
    deployment.deploy(
        settings,
        args.host,
        args.port,
        args.replicas,
        extra_middlewares=middlewares,
        log_level=args.log_level.upper(),
        access_log=args.access_log,
        auth=auth,
    )
    health = _wait_until_served(base_url, listener)
    _banner(base_url, health, dashboard_url)
    _wait_for_signal()
    print("shutting down", flush=True)


def _stop_ray() -> None:
    """Shut down a Ray that an interrupted start-up left initialised (a no-op otherwise)."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()


def _auth_mode(args: argparse.Namespace) -> AuthMode:
    """`--auth` (or `TROUPE_AUTH`, which argparse does not check), else by where the API listens."""
    from serve.auth import AUTH_MODES

    chosen = args.auth or ("dev" if args.host in _LOOPBACK else "keys")
    for mode in AUTH_MODES:
        if chosen == mode:
            return mode
    raise StartupError(f"--auth/TROUPE_AUTH must be one of {', '.join(AUTH_MODES)}, not {chosen!r}")


def _banner(base_url: str, health: dict[str, Any], dashboard_url: str | None) -> None:
    if health.get("status") != "ok":
        print(f"WARNING: /health is {health.get('status')}: {health.get('components')}", flush=True)
    lines = [
        f"Troupe API listening on {base_url}",
        f"  API     {base_url}/",
        f"  docs    {base_url}/docs",
        f"  console {base_url}/console",
        f"  health  {base_url}/health",
    ]
    if dashboard_url:
        lines.append(f"  Ray dashboard http://{dashboard_url}")
    lines.append("Press Ctrl-C to stop.")
    print("\n".join(lines), flush=True)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `troupe` console script."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] != ["serve"]:
        # Every other command talks to a running server over its HTTP API.
        from serve.cli_commands import cli

        cli.main(args=argv, prog_name="troupe")
    args = _parser().parse_args(argv)
    if args.command == "serve":
        try:
            serve_command(args)
        except StartupError as exc:
            print(f"troupe: {exc}", file=sys.stderr, flush=True)
            raise SystemExit(2) from None
        except KeyboardInterrupt:
            # Stopping now: a further Ctrl-C (or one Ray relays) must not cut the clean-up.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            _stop_ray()
            print("troupe: interrupted", file=sys.stderr, flush=True)
            sys.stdout.flush()
            # Everything this process started is stopped; exit now, without the interpreter's
            # shutdown, where Ray's own exit hooks can turn the interrupt into a SIGINT death.
            os._exit(130)
    sys.exit(0)


if __name__ == "__main__":
    main()
