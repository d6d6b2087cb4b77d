"""Fixtures shared by every test package.

Only Redis lives here; Ray fixtures live in their own conftest files next to the tests using them.

Redis
-----
``redis_server`` (session)  an `EmbeddedRedis` with persistence on, started once per run. Tests that
                            stop/restart Redis on purpose should start their own `EmbeddedRedis`
                            instead, so they do not disturb this shared one.
``redis_url`` (function)    the URL of an empty Redis database: every test that asks for it starts
                            with no keys. With ``TROUPE_REDIS_URL`` set, that external Redis is used
                            instead of the embedded one (the production-like pass); only the
                            database named in the URL is flushed (FLUSHDB), never the others.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import redis

from actors.local.embedded_redis import EmbeddedRedis

EXTERNAL_REDIS_ENV = "TROUPE_REDIS_URL"


@pytest.fixture(scope="session", autouse=True)
def workspace_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Keep every workspace the suite creates out of the working tree."""
    root = str(tmp_path_factory.mktemp("workspaces"))
    previous = os.environ.get("TROUPE_WORKSPACE_ROOT")
    os.environ["TROUPE_WORKSPACE_ROOT"] = root
    yield root
    if previous is None:
        os.environ.pop("TROUPE_WORKSPACE_ROOT", None)
    else:
        os.environ["TROUPE_WORKSPACE_ROOT"] = previous


@pytest.fixture(scope="session")
def redis_server() -> Iterator[EmbeddedRedis]:
    """A started embedded redis-server (AOF persistence on), shared by the whole session."""
    with EmbeddedRedis(persistence=True) as server:
        yield server


@pytest.fixture
def redis_url(request: pytest.FixtureRequest) -> str:
    """The URL of a Redis database emptied just before the test."""
    external = os.environ.get(EXTERNAL_REDIS_ENV)
    if external:
        url, flush_all = external, False
    else:
        # Resolved lazily so that a run against an external Redis starts no embedded server.
        server: EmbeddedRedis = request.getfixturevalue("redis_server")
        url, flush_all = server.url, True
    client = redis.Redis.from_url(url)
    try:
        if flush_all:
            client.flushall()
        else:
            client.flushdb()
    finally:
        client.close()
    return url
