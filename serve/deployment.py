"""The Ray Serve deployment of the API (the only Serve code in Troupe)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from fastapi import FastAPI
from ray import serve
from ray.serve._private.constants import SERVE_LOGGER_NAME
from ray.serve.schema import LoggingConfig
from starlette.middleware import Middleware

from actors.settings import RuntimeSettings
from serve.app import create_app
from serve.auth import AuthMode

APP_NAME = "troupe"


def _app_builder(
    settings_payload: dict[str, Any], middlewares: Sequence[Middleware], auth: AuthMode
) -> Callable[[], FastAPI]:
    # Serve recognises a builder only when it is a plain function, so close over the settings.
    def build() -> FastAPI:
        settings = RuntimeSettings.model_validate(settings_payload)
        return create_app(settings=settings, extra_middlewares=middlewares, auth=auth)

    return build


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
