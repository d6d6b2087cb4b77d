"""The runtime's composition root: one place wires keys, storage, bus and mailbox.

Every process of the runtime (an API replica's `RuntimeClient`, the in-process dispatcher, the
session, workspace and scheduler actors) builds its parts here, on one Redis connection pool,
and hands them to what it runs: nothing else builds storage, bus or mailbox.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from redis.asyncio import Redis

from actors.bus.mailbox import Mailbox, SessionDispatcher
from actors.bus.message_bus import RedisMessageBus
from actors.bus.redis_connect import connect
from actors.schedules.store import ScheduleKeys, ScheduleStore
from actors.sessions.extensions import register_credential_types
from actors.settings import RuntimeSettings
from actors.storage.redis_storage import RedisStorage
from actors.teams.store import TeamStore

D = TypeVar("D", bound=SessionDispatcher, covariant=True)


@dataclass(frozen=True)
class RuntimeParts(Generic[D]):
    """What a runtime process works with, all on one Redis connection pool.

    `keys` is the whole layout (schedules' keys included), so any part can be given it.
    """

    settings: RuntimeSettings
    redis: Redis
    keys: ScheduleKeys
    storage: RedisStorage
    bus: RedisMessageBus
    dispatcher: D
    mailbox: Mailbox
    teams: TeamStore

    def stream_pool(self) -> Redis:
        """A new pool for blocking stream reads (`stream_connections` connections at most).

        Apart from `redis`, so that readers parked on event logs never take the connections
        requests need.
        """
        return connect(self.settings.redis_url, self.settings.stream_connections)

    def schedule_store(self) -> ScheduleStore:
        """The schedule records, on the parts' connection pool."""
        return ScheduleStore(self.redis, self.keys)


def wire(settings: RuntimeSettings, dispatcher: Callable[[Redis], D]) -> RuntimeParts[D]:
    """Connect to the deployment's Redis and build the parts of one process on it.

    `dispatcher` builds what wakes sessions, given the parts' connection (Ray actors share it;
    a dispatcher built beforehand ignores it). The deployment's extra credential types are
    registered first, so every record the parts read parses.
    """
    register_credential_types(settings.credential_types)
    redis = connect(settings.redis_url)
    keys = ScheduleKeys(settings.key_prefix)
    bus = RedisMessageBus(
        redis,
        keys,
        settings.inbox_maxlen,
        settings.event_log_maxlen,
        generation=settings.generation,
    )
    dispatch = dispatcher(redis)
    return RuntimeParts(
        settings=settings,
        redis=redis,
        keys=keys,
        storage=RedisStorage(redis, keys, settings.secret_key, generation=settings.generation),
        bus=bus,
        dispatcher=dispatch,
        mailbox=Mailbox(bus, dispatch),
        teams=TeamStore(redis, keys),
    )
