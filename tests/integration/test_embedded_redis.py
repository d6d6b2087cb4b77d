"""The embedded redis-server serves, keeps data across restarts, never outlives its owner."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest
import redis

from actors.local._ports import find_free_port
from actors.local.embedded_redis import EmbeddedRedis, EmbeddedRedisError

pytestmark = [pytest.mark.integration, pytest.mark.redis]


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _client(server: EmbeddedRedis) -> redis.Redis:
    return redis.Redis.from_url(server.url, decode_responses=True)


def test_serves_on_loopback_with_private_dir(tmp_path: Path) -> None:
    with EmbeddedRedis(data_dir=tmp_path) as server:
        client = _client(server)
        try:
            assert client.ping() is True
            assert client.config_get("bind") == {"bind": "127.0.0.1"}
            assert client.config_get("dir") == {"dir": str(tmp_path.resolve())}
        finally:
            client.close()
        assert server.url == f"redis://127.0.0.1:{server.port}/0"
        assert server.pid is not None


def test_persisted_data_survives_restart_on_same_port(tmp_path: Path) -> None:
    with EmbeddedRedis(persistence=True, data_dir=tmp_path) as server:
        port, first_pid = server.port, server.pid
        client = _client(server)
        try:
            client.set("greeting", "hello")
            client.xadd("events", {"n": "1"})
        finally:
            client.close()

        server.restart()

        assert server.port == port
        assert server.pid not in (None, first_pid)
        client = _client(server)
        try:
            assert client.get("greeting") == "hello"
            assert client.xlen("events") == 1
        finally:
            client.close()


def test_without_persistence_restart_starts_empty(tmp_path: Path) -> None:
    with EmbeddedRedis(persistence=False, data_dir=tmp_path) as server:
        client = _client(server)
        try:
            client.set("greeting", "hello")
        finally:
            client.close()

        server.restart()

        client = _client(server)
        try:
            assert client.dbsize() == 0
        finally:
            client.close()
    assert not list(tmp_path.glob("*.aof"))
    assert not list(tmp_path.glob("*.rdb"))


def test_stop_leaves_no_process() -> None:
    server = EmbeddedRedis()
    server.start()
    pid = server.pid
    assert pid is not None
    assert _process_exists(pid)

    server.stop()

    assert server.pid is None
    assert not _process_exists(pid)
    client = _client(server)
    try:
        with pytest.raises(redis.ConnectionError):
            client.ping()
    finally:
        client.close()
    server.close()


def test_close_deletes_the_temporary_data_dir() -> None:
    with EmbeddedRedis() as server:
        data_dir = server.data_dir
        assert data_dir.is_dir()
    assert not data_dir.exists()


def test_garbage_collection_stops_the_server() -> None:
    server = EmbeddedRedis()
    server.start()
    pid = server.pid
    assert pid is not None

    del server
    gc.collect()

    assert not _process_exists(pid)


def test_two_instances_get_different_ports() -> None:
    with EmbeddedRedis() as first, EmbeddedRedis() as second:
        assert first.port != second.port
        clients = [_client(first), _client(second)]
        try:
            clients[0].set("owner", "first")
            assert clients[1].get("owner") is None
        finally:
            for client in clients:
                client.close()


def test_taken_port_is_reported() -> None:
    with EmbeddedRedis() as first:
        second = EmbeddedRedis(port=first.port)
        with pytest.raises(EmbeddedRedisError, match="already in use"):
            second.start()
        assert second.pid is None
        second.close()


def test_startup_failure_quotes_the_server_log(tmp_path: Path) -> None:
    fake = tmp_path / "redis-server"
    fake.write_text("#!/bin/sh\necho 'FATAL: cannot start for a reason' >&2\nexit 3\n")
    fake.chmod(0o755)
    server = EmbeddedRedis(executable=fake, port=find_free_port())
    with pytest.raises(EmbeddedRedisError, match=r"(?s)code 3.*cannot start for a reason"):
        server.start()
    server.close()


@pytest.mark.parametrize("run", ["first", "second"])
def test_redis_url_fixture_hands_out_an_empty_database(redis_url: str, run: str) -> None:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        assert client.dbsize() == 0
        client.set("written-by", run)
    finally:
        client.close()
