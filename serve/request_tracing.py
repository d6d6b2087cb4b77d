"""`TraceRequests`: an OpenTelemetry server span per HTTP request (ASGI middleware).

The span continues the caller's trace when the request carries W3C `traceparent` (or nests in
the current span, when the server traces requests itself), and is
current while the app handles the request, so whatever the request delivers to a session
carries it on (`actors.ops.tracing`). It ends when the response does (an SSE stream's with the
stream). Without a configured tracer provider the middleware only passes requests through.
"""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.trace import (
    NoOpTracerProvider,
    ProxyTracerProvider,
    SpanKind,
    Status,
    StatusCode,
)
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import agent_core

_W3C = TraceContextTextMapPropagator()


class TraceRequests:
    """Wrap each HTTP request in a `SERVER` span named `{method} {route}`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Handle one ASGI connection."""
        provider = trace.get_tracer_provider()
        if scope["type"] != "http" or isinstance(
            provider, ProxyTracerProvider | NoOpTracerProvider
        ):
            await self.app(scope, receive, send)
            return
        tracer = provider.get_tracer("troupe.serve", agent_core.__version__)
        carrier = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        method = scope["method"]
        # Under a host that traces requests itself (Ray Serve does, with a provider installed),
        # its span is current and already continues the caller's trace: nest under it.
        inherited = trace.get_current_span().get_span_context().is_valid
        span = tracer.start_span(
            f"{method} {scope['path']}",
            context=None if inherited else _W3C.extract(carrier),
            kind=SpanKind.SERVER,
            attributes={"http.request.method": method, "url.path": scope["path"]},
        )

        async def send_traced(message: Message) -> None:
            if message["type"] == "http.response.start":
                status = int(message["status"])
                span.set_attribute("http.response.status_code", status)
                if status >= 500:
                    span.set_status(Status(StatusCode.ERROR))
            await send(message)

        try:
            with trace.use_span(span, record_exception=True, set_status_on_exception=True):
                await self.app(scope, receive, send_traced)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None)
            if template:
                span.update_name(f"{method} {template}")
                span.set_attribute("http.route", template)
            span.end()
