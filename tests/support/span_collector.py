"""Collecting the spans of every Ray worker in one in-memory exporter, for tracing tests.

`install` is a Ray `worker_process_setup_hook`: each worker gets a tracer provider whose spans
go, as they end, to the `span-collector` actor (an `InMemorySpanExporter` behind a Ray actor),
so a test reads the spans of every process (API replicas, session actors) in one place::

    ray.init(..., runtime_env={"worker_process_setup_hook": HOOK})
    collector = SpanCollector.options(name=COLLECTOR, namespace=NAMESPACE).remote()
    ...
    spans = ray.get(collector.spans.remote())
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ray
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

COLLECTOR = "span-collector"
NAMESPACE = "troupe-test"
HOOK = f"{__name__}.install"


@ray.remote(num_cpus=0)
class SpanCollector:
    """Holds every span the workers exported, as plain dicts."""

    def __init__(self) -> None:
        self._spans: list[dict[str, Any]] = []

    def add(self, spans: list[dict[str, Any]]) -> None:
        """Keep exported spans."""
        self._spans.extend(spans)

    def spans(self) -> list[dict[str, Any]]:
        """Every span kept so far."""
        return list(self._spans)


def as_dict(span: ReadableSpan) -> dict[str, Any]:
    """What the tests read of a span (ids as hex)."""
    context = span.get_span_context()
    assert context is not None
    return {
        "name": span.name,
        "scope": span.instrumentation_scope.name if span.instrumentation_scope else "",
        "trace_id": format(context.trace_id, "032x"),
        "span_id": format(context.span_id, "016x"),
        "parent_id": format(span.parent.span_id, "016x") if span.parent else None,
        "attributes": dict(span.attributes or {}),
    }


class _ToCollector(SpanExporter):
    def __init__(self) -> None:
        self._collector: Any = None

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._collector is None:
            try:
                self._collector = ray.get_actor(COLLECTOR, namespace=NAMESPACE)
            except ValueError:
                return SpanExportResult.FAILURE
        self._collector.add.remote([as_dict(span) for span in spans])
        return SpanExportResult.SUCCESS


def install() -> None:
    """Ray worker setup hook: trace into the collector."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_ToCollector()))
    trace.set_tracer_provider(provider)
