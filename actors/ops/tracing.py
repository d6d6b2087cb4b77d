"""OpenTelemetry across actor hops: one trace from the HTTP request through every session.

The sender's trace context travels with the delivery, as W3C `traceparent`/`tracestate` in the
inbox item (`stamped`); the session replying to the item continues that trace (`continued`).
So a chat request's span parents the session's `invoke_agent` span, and a leader's `TeamSay` or
`AgentCreate` tool span parents each worker's reply: a team run is one trace.

Spans are made only where a tracer provider is installed. `troupe serve` installs one in every
Ray worker it starts when `OTEL_TRACES_EXPORTER` is set (`console`, or `otlp` with the
`opentelemetry-exporter-otlp` package installed), via Ray's `worker_process_setup_hook`
(`runtime_env()`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from actors.bus.items import ChatItem, HintItem

if TYPE_CHECKING:
    # The SDK loads only where a tracer provider is installed (`configure_from_env`).
    from opentelemetry.sdk.trace.export import SpanExporter

log = logging.getLogger(__name__)

_W3C = TraceContextTextMapPropagator()
EXPORTER_ENV = "OTEL_TRACES_EXPORTER"


def stamped(item: ChatItem | HintItem) -> ChatItem | HintItem:
    """`item` carrying the current trace context (unchanged without one, or if it has one)."""
    if item.trace_context:
        return item
    carrier: dict[str, str] = {}
    _W3C.inject(carrier)
    return item.model_copy(update={"trace_context": carrier}) if carrier else item


@contextmanager
def continued(item: ChatItem | HintItem) -> Iterator[None]:
    """Make the sender's trace (carried by `item`) current inside the block.

    Tasks created inside the block keep it: they copy the context when they are created.
    """
    token = otel_context.attach(_W3C.extract(item.trace_context))
    try:
        yield
    finally:
        otel_context.detach(token)


def _exporter(name: str) -> SpanExporter:
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter

    if name == "console":
        return ConsoleSpanExporter()
    if name == "otlp":
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # type: ignore[import-not-found]
                OTLPSpanExporter,
            )
        except ImportError as exc:
            raise ValueError(
                f"{EXPORTER_ENV}=otlp needs `pip install opentelemetry-exporter-otlp-proto-http`"
            ) from exc
        exporter: SpanExporter = OTLPSpanExporter()  # endpoint: OTEL_EXPORTER_OTLP_ENDPOINT
        return exporter
    raise ValueError(f"{EXPORTER_ENV}={name!r}: Troupe knows `console` and `otlp`")


def configure_from_env() -> None:
    """Install a global tracer provider exporting per `OTEL_TRACES_EXPORTER` (unset: none).

    Raises:
        ValueError: The exporter is unknown or its package is missing.
    """
    name = os.environ.get(EXPORTER_ENV, "").strip().lower()
    if not name or name == "none":
        return
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    service = os.environ.get("OTEL_SERVICE_NAME", "troupe")
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: service}))
    provider.add_span_processor(BatchSpanProcessor(_exporter(name)))
    trace.set_tracer_provider(provider)


def runtime_env() -> dict[str, Any]:
    """Ray runtime-env entries that trace in every worker, when `OTEL_TRACES_EXPORTER` is set.

    The `OTEL_*` variables travel along, so workers on other nodes export like this process.
    """
    if not os.environ.get(EXPORTER_ENV, "").strip():
        return {}
    otel = {k: v for k, v in os.environ.items() if k.startswith("OTEL_")}
    return {
        "worker_process_setup_hook": f"{__name__}.configure_from_env",
        "env_vars": otel,
    }
