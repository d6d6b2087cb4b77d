"""Schemathesis against the app's own OpenAPI: no generated request is ever answered by a 5xx.

The app runs as `troupe serve` runs it (create_app, real Redis, real HTTP on 127.0.0.1; sessions
in-process), in a thread of its own, since Schemathesis calls it synchronously. Each operation
gets a dozen requests in each mode (valid and invalid data), which keeps the run to a couple
of minutes; the hand-made cases are `test_bad_input.py`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
import requests
import schemathesis
import uvicorn
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

from actors.inprocess import InProcessDispatcher
from actors.local._ports import find_free_port
from actors.local.embedded_redis import EmbeddedRedis
from actors.settings import RuntimeSettings
from serve.app import create_app
from tests.unit.serve._service import SECRET_KEY

pytestmark = [pytest.mark.redis, pytest.mark.slow]

USER = {"X-User-ID": "fuzz"}
# An endless stream cannot answer within a fuzzing budget; its cursors are tested apart.
ENDLESS = "/sessions/{session_id}/stream"
EXAMPLES = 12
"""Requests per operation and mode (some 1,200 in all)."""


@pytest.fixture(scope="module")
def base_url(redis_server: EmbeddedRedis) -> Iterator[str]:
    settings = RuntimeSettings(redis_url=redis_server.url, key_prefix="fuzz", secret_key=SECRET_KEY)
    app = create_app(settings=settings, dispatcher=InProcessDispatcher)
    port = find_free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, name="fuzzed-api", daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive(), "the API stopped during start-up"
        assert time.monotonic() < deadline, "the API did not start"
        time.sleep(0.05)
    # Records to find: some generated ids then name real ones of this user.
    agent = requests.post(f"{url}/agent/", json={"name": "fuzzed"}, headers=USER, timeout=30)
    requests.post(
        f"{url}/sessions/", json={"agent_id": agent.json()["agent_id"]}, headers=USER, timeout=30
    )
    yield url
    server.should_exit = True
    thread.join(30)


def test_no_request_is_answered_by_a_server_error(base_url: str) -> None:
    # Schemathesis's pytest plugin does not load under this pytest; its strategies are driven
    # by Hypothesis directly, one operation and mode at a time, collecting every failure.
    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json").exclude(path=ENDLESS)
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) > 40
    for operation in operations:
        for mode in GenerationMode:
            strategy = operation.as_strategy(generation_mode=mode, headers=USER)

            @given(case=strategy)
            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                suppress_health_check=list(HealthCheck),
                derandomize=True,
                phases=[Phase.explicit, Phase.generate],
                database=None,
            )
            def call(case: schemathesis.Case) -> None:
                case.call_and_validate(base_url=base_url, checks=[not_a_server_error])

            try:
                call()
            except Unsatisfiable:  # nothing to make invalid: every parameter is fixed
                continue
            except Exception as exc:
                failures.append(f"{operation.label} ({mode.value}): {exc}")
    assert not failures, "\n\n".join(failures)
