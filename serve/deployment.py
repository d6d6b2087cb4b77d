"""The Ray Serve deployment of the API (the only Serve code in Troupe)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fastapi import FastAPI
from ray import serve

from actors.client import RuntimeClient, ray_dispatcher
from actors.settings import RuntimeSettings
from serve.app import build_app

APP_NAME = "troupe"


def _app_builder(
    settings_payload: dict[str, Any], cors_origins: list[str]
) -> Callable[[], FastAPI]:
    # Serve recognises a builder only when it is a plain function, so close over the settings.
    def build() -> FastAPI:
        settings = RuntimeSettings.model_validate(settings_payload)
        return build_app(lambda: RuntimeClient(settings, ray_dispatcher(settings)), cors_origins)

    return build


def application(
    settings: RuntimeSettings, replicas: int = 1, cors_origins: Sequence[str] = ()
) -> serve.Application:
    """The Serve application: `replicas` FastAPI replicas sharing the Redis-backed runtime.

    SSE streams are long-lived requests, so a replica accepts many at once.
    """

    @serve.deployment(
        name="troupe-api",
        num_replicas=replicas,
        max_ongoing_requests=1000,
        ray_actor_options={"num_cpus": 0},
    )
    @serve.ingress(_app_builder(settings.model_dump(), list(cors_origins)))
    class TroupeAPI:
        """Ingress deployment; the FastAPI app is built on each replica."""

    return TroupeAPI.bind()  # type: ignore[attr-defined]


def deploy(
    settings: RuntimeSettings,
    host: str,
    port: int,
    replicas: int = 1,
    proxy_location: str | None = None,
    cors_origins: Sequence[str] = (),
) -> None:
    """Start Serve's HTTP proxy on host:port and deploy the API (Ray must be initialised).

    `proxy_location` is Serve's (`HeadOnly`, `EveryNode`); by default a proxy runs on every
    node that hosts a replica. `cors_origins` are the browser origins allowed to call the API.
    """
    serve.start(proxy_location=proxy_location, http_options={"host": host, "port": port})
    app = application(settings, replicas, cors_origins)
    serve.run(app, name=APP_NAME, route_prefix="/", blocking=False)


def shutdown() -> None:
    """Tear down the Serve application and proxy."""
    serve.shutdown()
