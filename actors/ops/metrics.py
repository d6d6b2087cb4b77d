"""Troupe's Ray metrics (`ray.util.metrics`), exported with Ray's own on every node.

Scrape them where Ray's metrics go (each node's metrics export port, Prometheus format):

======================  =========  =========  ==============================================
metric                  kind       tags       what
======================  =========  =========  ==============================================
troupe_deliveries       counter    kind       inbox deliveries (chat, hint); rate = per second
troupe_session_hosts    gauge      host       1 per live session host (sum = hosts)
troupe_live_sessions    gauge      host       sessions live in each host (sum = live sessions)
troupe_inbox_depth      histogram             items waiting when a session reads its inbox
troupe_reply_seconds    histogram             a reply, from its first event to its last
troupe_tool_seconds     histogram  tool       one tool call's execution
======================  =========  =========  ==============================================

Each process creates the metrics once, on first use; recording is a no-op outside Ray.
`MetricsMiddleware` (in `actors.ops.metrics_middleware`) records the reply and tool latencies.
"""

from __future__ import annotations

import functools

import ray
from ray.util.metrics import Counter, Gauge, Histogram

_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]
_DEPTH = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]


@functools.cache
def _deliveries() -> Counter:
    return Counter("troupe_deliveries", "Inbox deliveries.", tag_keys=("kind",))


@functools.cache
def _hosts() -> Gauge:
    return Gauge("troupe_session_hosts", "1 per live session host.", tag_keys=("host",))


@functools.cache
def _live() -> Gauge:
    return Gauge("troupe_live_sessions", "Sessions live in a host.", tag_keys=("host",))


@functools.cache
def _depth() -> Histogram:
    return Histogram(
        "troupe_inbox_depth", "Items waiting when a session reads its inbox.", boundaries=_DEPTH
    )


@functools.cache
def _replies() -> Histogram:
    return Histogram("troupe_reply_seconds", "Reply latency.", boundaries=_SECONDS)


@functools.cache
def _tools() -> Histogram:
    return Histogram(
        "troupe_tool_seconds", "Tool call latency.", boundaries=_SECONDS, tag_keys=("tool",)
    )


def _on() -> bool:
    return bool(ray.is_initialized())


def delivered(kind: str) -> None:
    """Count one inbox delivery of `kind` (`chat`, `hint`)."""
    if _on():
        _deliveries().inc(1, tags={"kind": kind})


def host_sessions(host: str, live: int) -> None:
    """Report that `host` is up and hosts `live` sessions."""
    if _on():
        _hosts().set(1, tags={"host": host})
        _live().set(live, tags={"host": host})


def inbox_read(depth: int) -> None:
    """Record the inbox depth a session found when it read its inbox."""
    if _on():
        _depth().observe(depth)


def reply_took(seconds: float) -> None:
    """Record one reply's latency."""
    if _on():
        _replies().observe(seconds)


def tool_took(tool: str, seconds: float) -> None:
    """Record one call of `tool`'s latency."""
    if _on():
        _tools().observe(seconds, tags={"tool": tool})
