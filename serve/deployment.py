"""The Ray Serve deployment of the API (the only Serve code in Troupe)."""

from __future__ import annotations

import gc
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

import ray
from fastapi import FastAPI
from ray import serve
from ray.exceptions import TaskCancelledError
from ray.serve._private.constants import SERVE_LOGGER_NAME
from ray.serve.schema import LoggingConfig
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from actors.bus.generation import claim_generation
from actors.bus.keys import Keys
from actors.settings import RuntimeSettings
from serve.app import create_app
from serve.auth import AUTH_MODES, AuthMode

APP_NAME = "troupe"
_INGRESS_SETTINGS = "TROUPE_INGRESS_SETTINGS"
_INGRESS_CORS = "TROUPE_INGRESS_CORS_ORIGINS"
_INGRESS_AUTH = "TROUPE_INGRESS_AUTH"


class ClientGone:
    """ASGI middleware: a request Serve cancelled because its client left reads as a disconnect.

    Once the proxy cancels a request (the client closed its connection), a replica's `receive`
    raises Ray's `TaskCancelledError`. A streaming response (every SSE stream) waits on
    `receive` for the disconnect, so without this the error would escape the app: a logged
    traceback for each stream a client closes. ASGI's word for it is `http.disconnect`.
    """

    def __init__(self, app: ASGIApp) -> None:
        """Wrap `app`."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request; a cancelled `receive` answers `http.disconnect`."""

        async def receive_or_disconnect() -> Message:
            try:
                return await receive()
            except TaskCancelledError:
                return {"type": "http.disconnect"}

        await self.app(scope, receive_or_disconnect, send)


def _app_builder(
    settings_payload: dict[str, Any], middlewares: Sequence[Middleware], auth: AuthMode
) -> Callable[[], FastAPI]:
    # Serve recognises a builder only when it is a plain function, so close over the settings.
    def build() -> FastAPI:
        _bind_replica_grpc_to_node_ip()
        settings = RuntimeSettings.model_validate(settings_payload)
        app = create_app(
            settings=settings, extra_middlewares=[Middleware(ClientGone), *middlewares], auth=auth
        )
        _freeze_startup_objects()
        return app

    return build


def _bind_replica_grpc_to_node_ip() -> None:
    """Make this replica's inter-deployment gRPC server listen on the node's address only.

    Serve 2.60 binds it to `[::]:0`, all interfaces, in code and without an option; its callers
    reach it at the replica's node address, so listening there is enough (on a server bound to
    a loopback `--host`, that is 127.0.0.1). Runs in the replica, before Serve starts the server.
    """
    from ray.serve._private import replica

    add_port = replica.add_port_to_grpc_server
    node_ip = ray.util.get_node_ip_address()
    host = f"[{node_ip}]" if ":" in node_ip else node_ip

    def add_port_on_node_ip(server: Any, address: str) -> int:
        if address.startswith("[::]:"):
            address = host + address.removeprefix("[::]")
        port: int = add_port(server, address)
        return port

    replica.add_port_to_grpc_server = add_port_on_node_ip


_HEALTH_CHECK_PERIOD_S = 1.0


def application(
    settings: RuntimeSettings,
    replicas: int = 1,
    extra_middlewares: Sequence[Middleware] = (),
    auth: AuthMode = "dev",
) -> serve.Application:
    """The Serve application: `replicas` FastAPI replicas sharing the Redis-backed runtime.

    SSE streams are long-lived requests, so a replica accepts many at once. The app is built on
    each replica, so `extra_middlewares` must pickle. `auth` is the identity scheme
    (`serve.auth`).
    """

    @serve.deployment(
        name="troupe-api",
        num_replicas=replicas,
        max_ongoing_requests=1000,
        ray_actor_options={"num_cpus": 0},
        # Serve notices a dead replica at its next health check (default: 10 s): every turn
        # waits that long for the API to come back.
        health_check_period_s=_HEALTH_CHECK_PERIOD_S,
    )
    @serve.ingress(_app_builder(settings.model_dump(), list(extra_middlewares), auth))
    class TroupeAPI:
        """Ingress deployment; the FastAPI app is built on each replica."""

    return TroupeAPI.bind()  # type: ignore[attr-defined]


def deploy(
    settings: RuntimeSettings,
    host: str,
    port: int,
    replicas: int = 1,
    proxy_location: str | None = None,
    extra_middlewares: Sequence[Middleware] = (),
    log_level: str = "INFO",
    access_log: bool = True,
    auth: AuthMode = "dev",
) -> None:
    """Start Serve's HTTP proxy on host:port and deploy the API (Ray must be initialised).

    `proxy_location` is Serve's (`HeadOnly`, `EveryNode`); by default a proxy runs on every
    node that hosts a replica. `extra_middlewares` wrap the API (outermost first). `log_level`
    and `access_log` set what Serve's controller, proxies and replicas log (a line per request
    with `access_log`); `auth` is the identity scheme (`serve.auth`). Returns once the
    application is submitted; `status` tells when it runs.
    """
    settings = claimed(settings)
    logging_config = LoggingConfig(log_level=log_level, enable_access_log=access_log)
    # Serve's logger in this process is set up (at INFO) when `ray.serve` is imported.
    logging.getLogger(SERVE_LOGGER_NAME).setLevel(log_level)
    serve.start(
        proxy_location=proxy_location,
        http_options={"host": host, "port": port},
        logging_config=logging_config,
    )
    app = application(settings, replicas, extra_middlewares, auth)
    serve.run(app, name=APP_NAME, route_prefix="/", blocking=False, logging_config=logging_config)


def claimed(settings: RuntimeSettings) -> RuntimeSettings:
    """`settings` with the cluster generation of the Ray this process is connected to.

    The first deployment on a Ray cluster claims a new generation, which fences out every
    process of the servers before it (`actors.bus.generation`).
    """
    # The session name is unique to one start of a Ray cluster (Ray has no public accessor).
    cluster = ray._private.worker.global_worker.node.session_name
    generation = claim_generation(settings.redis_url, Keys(settings.key_prefix), cluster)
    return settings.model_copy(update={"generation": generation})


def status() -> str:
    """The application's Serve status: `NOT_STARTED`, `DEPLOYING`, `RUNNING`, `DEPLOY_FAILED`..."""
    application = serve.status().applications.get(APP_NAME)
    return application.status.value if application is not None else "NOT_STARTED"


def failure() -> str:
    """Serve's message on why the application is not running (empty when none)."""
    application = serve.status().applications.get(APP_NAME)
    return application.message if application is not None else ""


def shutdown() -> None:
    """Tear down the Serve application and proxy."""
    serve.shutdown()


def remove() -> None:
    """Delete the application (its replicas shut down gracefully), leaving Serve running.

    Before `ray.shutdown()` of a Ray this process started, this is the clean stop:
    `shutdown()` also makes the controller kill itself, which Ray reports as a failed task.
    """
    serve.delete(APP_NAME)


def uvicorn_app() -> FastAPI:
    """The API in one worker of the uvicorn ingress (`run_uvicorn`): joins Ray, builds the app.

    Reads the settings and Ray address `run_uvicorn` passes in the environment.
    """
    from serve.app import cors_middleware

    settings = RuntimeSettings.model_validate_json(os.environ[_INGRESS_SETTINGS])
    # `ray.init` replaces the SIGTERM handler with an immediate exit; keep uvicorn's graceful one.
    uvicorn_sigterm = signal.getsignal(signal.SIGTERM)
    ray.init(address=os.environ["RAY_ADDRESS"], namespace=settings.namespace, log_to_driver=False)
    signal.signal(signal.SIGTERM, uvicorn_sigterm)
    origins = [o for o in os.environ.get(_INGRESS_CORS, "").split(",") if o]
    middlewares = [cors_middleware(origins)] if origins else []
    auth = os.environ.get(_INGRESS_AUTH, "dev")
    if auth not in AUTH_MODES:
        raise ValueError(f"{_INGRESS_AUTH} must be one of {AUTH_MODES}, not {auth!r}")
    app = create_app(settings=settings, extra_middlewares=middlewares, auth=auth)
    _freeze_startup_objects()
    return app


def _freeze_startup_objects() -> None:
    """Leave what the server process holds from startup on out of garbage collection.

    Modules, schemas, Ray's and the app's state live as long as the process, hundreds of
    thousands of objects. Under load, request objects outlive a few young collections and
    trigger full ones, each walking them all: 150-300 ms with the event loop stopped, every
    second or so. Frozen, a full collection walks only what came after.
    """
    gc.collect()
    gc.freeze()


def run_uvicorn(
    settings: RuntimeSettings,
    host: str,
    port: int,
    workers: int = 1,
    cors_origins: Sequence[str] = (),
    log_level: str = "warning",
    access_log: bool = False,
    auth: AuthMode = "dev",
) -> subprocess.Popen[bytes]:
    """Serve the API with `workers` uvicorn processes that join this process's Ray cluster.

    The fast ingress: requests go client → uvicorn worker (the same FastAPI app Serve runs) →
    Redis and Ray actors, without Serve's proxy hop. Ray must be initialised here; the workers
    are Ray drivers of its cluster. Returns the uvicorn process (terminate it to stop).
    """
    env = {
        **os.environ,
        _INGRESS_SETTINGS: claimed(settings).model_dump_json(),
        _INGRESS_CORS: ",".join(cors_origins),
        _INGRESS_AUTH: auth,
        "RAY_ADDRESS": ray.get_runtime_context().gcs_address,
    }
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        f"{__name__}:uvicorn_app",
        "--factory",
        "--host",
        host,
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--log-level",
        log_level.lower(),
        "--timeout-graceful-shutdown",
        "5",
    ]
    if not access_log:
        command.append("--no-access-log")
    return subprocess.Popen(command, env=env)
