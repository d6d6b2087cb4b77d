"""The `troupe` command: `troupe serve` runs the API on Ray with Redis (embedded by default).

The other commands (`troupe agent|credential|session|chat|logs|status`) live in
`serve.cli_commands`.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from contextlib import ExitStack
from pathlib import Path

from actors.embedded_redis import EmbeddedRedis
from actors.settings import RuntimeSettings
from actors.workspace_backends import resolve_backend
from workspaces import WorkspaceError

CORS_ENV = "TROUPE_CORS_ORIGINS"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="troupe", description="Troupe agent service.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("serve", help="serve the REST/SSE API on Ray Serve")
    run.add_argument("--host", default="127.0.0.1", help="HTTP bind address")
    run.add_argument("--port", type=int, default=8000, help="HTTP port")
    run.add_argument(
        "--redis-url",
        default=os.environ.get("TROUPE_REDIS_URL"),
        help="Redis to use (default: start an embedded redis-server)",
    )
    run.add_argument(
        "--ray-address",
        default=os.environ.get("RAY_ADDRESS"),
        help="Ray cluster to join (default: start a local Ray)",
    )
    run.add_argument("--replicas", type=int, default=1, help="API replicas")
    run.add_argument(
        "--workspace-backend",
        choices=["auto", "sandbox", "docker", "e2b", "local"],
        default=os.environ.get("TROUPE_WORKSPACE_BACKEND", "auto"),
        help="where agents' tools run (default auto: sandbox where bubblewrap exists, else "
        "local with a warning)",
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
        help="where the embedded redis-server keeps its data",
    )
    return parser


def _env_list(name: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


def _wait_for_signal() -> None:
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()


def serve_command(args: argparse.Namespace) -> None:
    """Start (or join) Redis and Ray, deploy the API, and run until interrupted."""
    import ray

    from serve import deployment
    from serve.app import cors_middleware

    with ExitStack() as stack:
        redis_url = args.redis_url
        if not redis_url:
            args.data_dir.mkdir(parents=True, exist_ok=True)
            redis = stack.enter_context(EmbeddedRedis(data_dir=args.data_dir / "redis"))
            redis_url = redis.url
            print(f"embedded redis-server on {redis_url}", flush=True)
        settings = RuntimeSettings.from_env(redis_url).model_copy(
            update={"workspace_backend": args.workspace_backend}
        )
        backend, warning = resolve_backend(settings)
        print(f"workspace backend: {backend}", flush=True)
        if warning:
            print(f"WARNING: {warning}", file=sys.stderr, flush=True)
        if args.ray_address:
            ray.init(address=args.ray_address, namespace=settings.namespace)
        else:
            ray.init(address="local", include_dashboard=False, namespace=settings.namespace)
        stack.callback(ray.shutdown)
        middlewares = [cors_middleware(args.cors_origins)] if args.cors_origins else []
        deployment.deploy(
            settings, args.host, args.port, args.replicas, extra_middlewares=middlewares
        )
        stack.callback(deployment.shutdown)
        print(f"Troupe API listening on http://{args.host}:{args.port}", flush=True)
        _wait_for_signal()
        print("shutting down", flush=True)


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
        except WorkspaceError as exc:
            print(f"troupe: {exc}", file=sys.stderr, flush=True)
            raise SystemExit(2) from exc
    sys.exit(0)


if __name__ == "__main__":
    main()
