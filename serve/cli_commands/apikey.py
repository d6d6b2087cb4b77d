"""`troupe apikey create|list|revoke`: the operator's API keys, written straight to Redis.

These run where the server's Redis is reachable (on a cluster: the head), not through the API:
making the first key cannot require a key. Keys are stored hashed (`actors.storage.api_keys`); the
secret is printed once, by `create`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import click

from serve.cli_commands._exit import BadUsage, NotFound

T = TypeVar("T")

_REDIS = click.option(
    "--redis-url",
    envvar="TROUPE_REDIS_URL",
    required=True,
    help="The server's Redis ($TROUPE_REDIS_URL).",
)
_PREFIX = click.option(
    "--key-prefix",
    envvar="TROUPE_KEY_PREFIX",
    default="troupe",
    show_default=True,
    help="The server's Redis key prefix ($TROUPE_KEY_PREFIX).",
)


def _with_store(redis_url: str, prefix: str, use: Callable[[Any], Awaitable[T]]) -> T:
    # The runtime's modules load in seconds; only these commands need them.
    from actors.bus.keys import Keys
    from actors.bus.redis_connect import connect
    from actors.storage.api_keys import ApiKeyStore

    async def main() -> T:
        redis = connect(redis_url)
        try:
            return await use(ApiKeyStore(redis, Keys(prefix)))
        finally:
            await redis.aclose()

    return asyncio.run(main())


@click.group()
def apikey() -> None:
    """Manage API keys (servers running --auth keys); talks to the server's Redis."""


@apikey.command("create")
@click.option("--user", "user_id", required=True, metavar="ID", help="The user the key acts as.")
@click.option("--name", default="", help="A label for the key (who or what uses it).")
@click.option("--admin", is_flag=True, help="Also allow cluster-wide views (`troupe status`).")
@_REDIS
@_PREFIX
def create(user_id: str, name: str, admin: bool, redis_url: str, key_prefix: str) -> None:
    """Create a key for a user and print it (it is shown only this once)."""
    try:
        token, _ = _with_store(
            redis_url, key_prefix, lambda store: store.create(user_id, name, admin)
        )
    except ValueError as exc:
        raise BadUsage(str(exc)) from exc
    click.echo(token)


@apikey.command("list")
@click.option("--user", "user_id", metavar="ID", help="Only this user's keys.")
@_REDIS
@_PREFIX
def list_keys(user_id: str | None, redis_url: str, key_prefix: str) -> None:
    """List keys (ids, users, labels; never the secrets) as JSON lines."""
    for key in _with_store(redis_url, key_prefix, lambda store: store.list(user_id)):
        click.echo(json.dumps(key.model_dump(exclude={"secret_sha256", "type"})))


@apikey.command("revoke")
@click.argument("key_id")
@_REDIS
@_PREFIX
def revoke(key_id: str, redis_url: str, key_prefix: str) -> None:
    """Revoke the key KEY_ID (`trp_<KEY_ID>.…`): requests with it fail from now on."""
    key_id = key_id.removeprefix("trp_").split(".", 1)[0]
    if not _with_store(redis_url, key_prefix, lambda store: store.revoke(key_id)):
        raise NotFound(f"no API key {key_id}")


__all__ = ["apikey"]
