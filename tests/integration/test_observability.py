"""Observability on a real Ray: a team run is one trace; `troupe status` shows what runs where;
Troupe's metrics reach the node's Prometheus endpoint.

Tracing: HTTP request → leader's session actor → worker sessions and back. Every Ray worker
exports its spans to a collector actor (`tests.support.span_collector`); the test's own client
span is kept by an in-memory exporter. The trace context crosses each actor hop in the inbox item
(W3C `traceparent`), so each session's reply hangs under the span that delivered to it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import ray
from click.testing import CliRunner
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import set_span_in_context
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from prometheus_client.parser import text_string_to_metric_families
from ray import serve
from redis.asyncio import Redis

from actors.bus.items import HintItem
from actors.bus.keys import Keys
from actors.bus.message_bus import RedisMessageBus
from actors.local._ports import find_free_port
from actors.local.embedded_redis import EmbeddedRedis
from serve.cli_commands import cli
from serve.client import TroupeClient
from tests.integration.conftest import LiveService, deploy_service
from tests.support.api import USER, make_session, user_text
from tests.support.openai_server import OpenAIWireServer, ScriptedReply
from tests.support.span_collector import COLLECTOR, HOOK, NAMESPACE, SpanCollector
from tests.support.sse import read_frames, reply_end_after_text
from tests.support.tool_calls import eventually

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.integration, pytest.mark.ray, pytest.mark.redis]

WORKERS = ["w1", "w2"]
DONE = "Both reported."


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return content or ""


def scripted_team(body: dict[str, Any]) -> ScriptedReply:
    """The leader creates a team of two; each worker reports once; the leader sums up."""
    messages = [m for m in body["messages"] if "<current-time>" not in _text(m)]
    system, last = _text(messages[0]), messages[-1]
    if "a member of the team" in system:
        member = system.split()[2].rstrip(",")
        if last["role"] == "tool":
            return ScriptedReply(text="reported")
        say = {"to": "Lead", "content": f"report from {member}"}
        return ScriptedReply(tool_calls=[(f"say-{member}", "TeamSay", say)])
    called = {c["function"]["name"] for m in messages for c in m.get("tool_calls") or []}
    if "TeamCreate" not in called:
        return ScriptedReply(
            tool_calls=[("tc", "TeamCreate", {"name": "crew", "description": "2"})]
        )
    if "AgentCreate" not in called:
        spawn = {"description": "a worker", "prompt": "report"}
        calls = [(f"ac-{w}", "AgentCreate", {"name": w, **spawn}) for w in WORKERS]
        return ScriptedReply(tool_calls=calls)
    reports = sum(_text(m).count("report from") for m in messages if m["role"] == "user")
    return ScriptedReply(text=DONE if reports == len(WORKERS) else f"{reports} so far.")


def _descends(span: dict[str, Any], ancestor_id: str, by_id: dict[str, dict[str, Any]]) -> bool:
    while span["parent_id"] is not None:
        if span["parent_id"] == ancestor_id:
            return True
        if span["parent_id"] not in by_id:
            return False
        span = by_id[span["parent_id"]]
    return False


@pytest.fixture(scope="module")
def metrics_port() -> int:
    """The node's Prometheus endpoint (Ray's metrics export port), on the loopback."""
    return find_free_port()


@pytest.fixture(scope="module")
def collector(metrics_port: int) -> Iterator[Any]:
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        namespace=NAMESPACE,
        # The hook is imported before the driver's sys.path reaches the worker: point the
        # workers at the checkout so that `tests.support` imports.
        runtime_env={"worker_process_setup_hook": HOOK, "env_vars": {"PYTHONPATH": str(REPO)}},
        _node_ip_address="127.0.0.1",
        _metrics_export_port=metrics_port,
        # Workers push their metrics to the node every second rather than every ten.
        _system_config={"metrics_report_interval_ms": 1000},
    )
    yield SpanCollector.options(name=COLLECTOR, namespace=NAMESPACE).remote()  # type: ignore[attr-defined]
    ray.shutdown()


@pytest.fixture(scope="module")
def service(collector: Any, redis_server: EmbeddedRedis) -> Iterator[LiveService]:
    yield deploy_service(redis_server.url)
    serve.shutdown()


@pytest.fixture(scope="module")
def model() -> Iterator[OpenAIWireServer]:
    with OpenAIWireServer(reply_func=scripted_team) as server:
        yield server


@pytest.fixture
async def api(service: LiveService) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=service.base_url, timeout=30) as client:
        yield client


async def test_a_team_run_is_one_trace(
    api: httpx.AsyncClient, model: OpenAIWireServer, collector: Any
) -> None:
    agent_id, leader = await make_session(api, model.base_url, name="Lead")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    client_span = provider.get_tracer("test").start_span("client: assemble a crew")
    headers = {**USER}
    TraceContextTextMapPropagator().inject(headers, context=set_span_in_context(client_span))
    done = asyncio.create_task(
        read_frames(
            api,
            f"/sessions/{leader}/stream",
            USER,
            reply_end_after_text(DONE),
            params={"after": "0"},
        )
    )
    body = {"agent_id": agent_id, "session_id": leader, "input": user_text("assemble a crew")}
    assert (await api.post("/chat/", json=body, headers=headers)).status_code == 200
    await asyncio.wait_for(done, 120)
    client_span.end()
    (ours,) = exporter.get_finished_spans()
    trace_id = format(ours.context.trace_id, "032x")

    def mine() -> list[dict[str, Any]]:
        spans: list[dict[str, Any]] = ray.get(collector.spans.remote())
        return [s for s in spans if s["trace_id"] == trace_id]

    async def all_replies_ended() -> bool:
        names = [s["name"] for s in mine()]
        return names.count("execute_tool TeamSay") == len(WORKERS) and all(
            names.count(f"invoke_agent {w}") >= 1 for w in WORKERS
        )

    assert await eventually(all_replies_ended, within=30)
    spans = mine()
    by_id = {s["span_id"]: s for s in spans}

    def parent(span: dict[str, Any]) -> dict[str, Any]:
        """The nearest ancestor that is ours (Serve adds spans of its own in between)."""
        found = by_id[span["parent_id"]]
        while found["scope"] not in ("agent_core", "troupe.serve"):
            found = by_id[found["parent_id"]]
        return found

    request = next(s for s in spans if s["scope"] == "troupe.serve" and s["name"] == "POST /chat/")
    assert request["name"] == "POST /chat/"
    assert request["attributes"]["http.response.status_code"] == 200
    assert _descends(request, format(ours.context.span_id, "016x"), by_id)
    first_reply = next(s for s in spans if s["name"] == "invoke_agent Lead")
    assert parent(first_reply) is request  # the hop API replica -> leader's actor
    for worker in WORKERS:
        reply = next(s for s in spans if s["name"] == f"invoke_agent {worker}")
        spawner = parent(reply)  # the hop leader -> worker: the leader's AgentCreate call
        assert spawner["name"] == "execute_tool AgentCreate"
        assert parent(spawner) is first_reply
        (say,) = [s for s in spans if s["attributes"].get("gen_ai.tool.call.id") == f"say-{worker}"]
        assert parent(say)["name"] == f"invoke_agent {worker}"
    # Any later reply of the leader was woken by a worker's TeamSay.
    woken = [s for s in spans if s["name"] == "invoke_agent Lead" and s is not first_reply]
    assert {parent(s)["name"] for s in woken} <= {"execute_tool TeamSay"}


async def test_troupe_status_shows_nodes_hosts_sessions_and_inboxes(
    api: httpx.AsyncClient,
    model: OpenAIWireServer,
    service: LiveService,
    redis_server: EmbeddedRedis,
) -> None:
    agent_id, session_id = await make_session(api, model.base_url, name="Solo")
    model.push(ScriptedReply(text="hello"))
    done = asyncio.create_task(
        read_frames(
            api,
            f"/sessions/{session_id}/stream",
            USER,
            reply_end_after_text("hello"),
            params={"after": "0"},
        )
    )
    body = {"agent_id": agent_id, "session_id": session_id, "input": user_text("hi")}
    assert (await api.post("/chat/", json=body, headers=USER)).status_code == 200
    await asyncio.wait_for(done, 60)
    # An inbox nobody drains (no session behind it): its depth shows.
    keys = Keys(service.settings.key_prefix)
    async with RedisMessageBus(Redis.from_url(redis_server.url), keys) as bus:
        await bus.put("parked-session", HintItem(hint="wait"))

    async with TroupeClient(service.base_url, user="alice") as troupe:
        cluster = await troupe.cluster_status()
    result = await asyncio.to_thread(
        CliRunner().invoke, cli, ["status"], env={"TROUPE_SERVER": service.base_url}
    )

    (node,) = cluster.nodes
    assert node.alive
    host = next(h for h in cluster.hosts if session_id in h.sessions)
    assert host.node_id == node.node_id
    assert cluster.live_sessions >= 1
    assert [(i.session_id, i.depth) for i in cluster.inboxes] == [("parked-session", 1)]
    assert result.exit_code == 0, result.output
    assert "nodes: 1" in result.output
    assert session_id in result.output
    assert "parked-session  depth=1" in result.output


async def scrape(port: int) -> dict[str, list[tuple[dict[str, str], float]]]:
    """The node's Prometheus samples: name -> [(labels, value)]."""
    async with httpx.AsyncClient() as client:
        text = (await client.get(f"http://127.0.0.1:{port}/metrics", timeout=10)).text
    samples: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append((sample.labels, sample.value))
    return samples


def total(samples: dict[str, list[tuple[dict[str, str], float]]], name: str, **tags: str) -> float:
    """The sum of `name` over the samples carrying `tags`."""
    return sum(
        value
        for labels, value in samples.get(name, [])
        if all(labels.get(k) == v for k, v in tags.items())
    )


async def test_metrics_are_exported_after_a_chat(
    api: httpx.AsyncClient, model: OpenAIWireServer, metrics_port: int
) -> None:
    agent_id, session_id = await make_session(api, model.base_url, name="Metered")
    model.push(
        ScriptedReply(tool_calls=[("clock", "get_current_time", {})]),
        ScriptedReply(text="metered"),
    )
    done = asyncio.create_task(
        read_frames(
            api,
            f"/sessions/{session_id}/stream",
            USER,
            reply_end_after_text("metered"),
            params={"after": "0"},
        )
    )
    body = {"agent_id": agent_id, "session_id": session_id, "input": user_text("time?")}
    assert (await api.post("/chat/", json=body, headers=USER)).status_code == 200
    await asyncio.wait_for(done, 60)

    samples: dict[str, list[tuple[dict[str, str], float]]] = {}

    async def exported() -> bool:
        nonlocal samples
        samples = await scrape(metrics_port)
        return (
            total(samples, "ray_troupe_deliveries_total", kind="chat") >= 1
            and total(samples, "ray_troupe_tool_seconds_count", tool="get_current_time") >= 1
            and total(samples, "ray_troupe_reply_seconds_count") >= 1
            and total(samples, "ray_troupe_inbox_depth_count") >= 1
            and total(samples, "ray_troupe_session_hosts") >= 1
            and total(samples, "ray_troupe_live_sessions") >= 1
        )

    assert await eventually(exported, within=60), sorted(
        name for name in samples if "troupe" in name
    )
    # Histograms carry their buckets: every call falls in the last one.
    calls = total(samples, "ray_troupe_tool_seconds_count", tool="get_current_time")
    assert total(samples, "ray_troupe_tool_seconds_bucket", tool="get_current_time", le="+Inf") == (
        calls
    )
