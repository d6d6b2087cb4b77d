"""Turning Redis connection failures into `StorageUnavailable` at the runtime's facades."""

from __future__ import annotations

import functools
import inspect
from typing import Any, TypeVar

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from actors.errors import StorageUnavailable

T = TypeVar("T")


def storage_errors(cls: type[T]) -> type[T]:
    """Make every public coroutine method of `cls` raise StorageUnavailable on Redis failures."""
    for name, method in list(vars(cls).items()):
        if name.startswith("_") or not inspect.iscoroutinefunction(method):
            continue

        @functools.wraps(method)
        async def wrapped(*args: Any, __method: Any = method, **kwargs: Any) -> Any:
            try:
                return await __method(*args, **kwargs)
            except (RedisConnectionError, RedisTimeoutError) as exc:
                raise StorageUnavailable(f"Redis is unavailable: {exc}") from exc

        setattr(cls, name, wrapped)
    return cls
