"""`EventFanout`: one reader per watched event log in this process, shared by its subscribers.

Each session's log is read once (a blocking XREAD on a pool of its own) into a bounded buffer;
every subscriber of that session replays what it missed from Redis, then follows the buffer.
So N subscribers cost one Redis connection and one parse per event, not N, and streams can
never take the connections request handlers need.
"""

from __future__ import annotations

import asyncio
from bisect import bisect_right
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from operator import itemgetter
from typing import Any, TypeVar

from redis.asyncio import Redis
from redis.exceptions import RedisError, ResponseError

from actors.bus.keys import Keys
from actors.bus.stream_ids import ORIGIN, StreamId
from actors.errors import StorageUnavailable
from agent_core.event import CustomEvent, event_to_json

BUFFER = 4_096
"""Events a session's feed keeps for subscribers that lag (beyond it they re-read Redis)."""
_BATCH = 500
_RETRY_SECONDS = 1.0
_T = TypeVar("_T")

Frame = tuple[str, str]
"""(stream id, event JSON); ("", "") is an idle period, ("", JSON) an event without an id."""


@dataclass(frozen=True)
class _LogInfo:
    newest: StreamId
    first: StreamId | None
    trimmed_up_to: StreamId | None  # entries up to here were trimmed (None: none, or unknown)


class _Feed:
    """A session's shared tail: the newest events read and a signal when more arrive."""

    def __init__(self) -> None:
        self.entries: list[tuple[StreamId, str, str]] = []
        self.base = 0  # position of entries[0] since the feed started
        self.floor = ORIGIN  # the feed holds every entry after this id
        self.changed = asyncio.Event()
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.error: StorageUnavailable | None = None
        self.subscribers = 0
        self.task: asyncio.Task[None] | None = None

    @property
    def end(self) -> int:
        return self.base + len(self.entries)

    def publish(self, batch: list[tuple[StreamId, str, str]]) -> None:
        self.entries.extend(batch)
        excess = len(self.entries) - BUFFER
        if excess > 0:
            self.floor = self.entries[excess - 1][0]
            del self.entries[:excess]
            self.base += excess
        self.notify()

    def fail(self, error: StorageUnavailable) -> None:
        self.error = error
        if not self.ready.done():
            self.ready.set_exception(error)
            self.ready.exception()  # retrieved: subscribers read `error`
        self.notify()

    def notify(self) -> None:
        changed, self.changed = self.changed, asyncio.Event()
        changed.set()


class EventFanout:
    """Live tails of session event logs for this process's SSE subscribers."""

    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        *,
        block_ms: int,
        outage_grace: float,
        log_maxlen: int,
    ) -> None:
        """Tail logs through `redis` (a client this object owns and closes).

        Args:
            redis: The streams' own client (its pool bounds how many logs are watched).
            keys: The deployment's key layout.
            block_ms: Longest blocking read; a subscriber gets an idle mark after it.
            outage_grace: Seconds a Redis outage is ridden out before subscribers fail.
            log_maxlen: The logs' approximate cap (tells a trimmed log on Redis < 7).
        """
        self.redis = redis
        self.keys = keys
        self.block_ms = block_ms
        self.outage_grace = outage_grace
        self.log_maxlen = log_maxlen
        self._feeds: dict[str, _Feed] = {}

    @property
    def watched(self) -> int:
        """How many session logs this process reads now."""
        return len(self._feeds)

    async def aclose(self) -> None:
        """Stop every reader and close the streams' connection pool."""
        tasks = [feed.task for feed in self._feeds.values() if feed.task is not None]
        self._feeds.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.redis.aclose()

    async def subscribe(self, session_id: str, after: StreamId) -> AsyncIterator[Frame]:
        """The events after `after`, then live ones; ("", "") on each idle period.

        Where the stream starts is settled before this returns, so every event appended after
        that is delivered: a cursor past the newest event starts at the newest, and one older
        than what the log still holds first yields a `CUSTOM events_dropped` event (no id).
        The iterator raises `StorageUnavailable` when Redis stays away longer than the grace
        period.

        Raises:
            StorageUnavailable: Redis stayed away longer than the grace period.
        """
        key = self.keys.events(session_id)
        info = await self._patiently(partial(self._log_info, key))
        notice = None
        if info.trimmed_up_to is not None and after < info.trimmed_up_to:
            notice = _dropped(after, info.first)
        return self._follow(key, min(after, info.newest), notice)

    async def _follow(self, key: str, last: StreamId, notice: str | None) -> AsyncIterator[Frame]:
        feed = self._join(key)
        try:
            await asyncio.shield(feed.ready)
            if notice is not None:
                yield "", notice
            position = -1  # where in the feed the event after `last` is (found when needed)
            while True:
                if feed.error is not None:
                    raise feed.error
                if last < feed.floor:  # the feed no longer holds what follows: read Redis
                    async for frame in self._replay(key, last):
                        last = StreamId.parse(frame[0])
                        yield frame
                    last = max(last, feed.floor)
                    position = -1
                    continue
                if position < feed.base:
                    position = feed.base + bisect_right(feed.entries, last, key=itemgetter(0))
                if position < feed.end:
                    stream_id, event_id, payload = feed.entries[position - feed.base]
                    position += 1
                    if stream_id > last:
                        last = stream_id
                        yield event_id, payload
                    continue
                changed = feed.changed
                try:
                    async with asyncio.timeout(self.block_ms / 1000):
                        await changed.wait()
                except TimeoutError:
                    yield "", ""
        finally:
            self._leave(key, feed)

    def _join(self, key: str) -> _Feed:
        feed = self._feeds.get(key)
        if feed is None:
            feed = self._feeds[key] = _Feed()
            feed.task = asyncio.get_running_loop().create_task(self._read(key, feed))
        feed.subscribers += 1
        return feed

    def _leave(self, key: str, feed: _Feed) -> None:
        feed.subscribers -= 1
        if feed.subscribers == 0 and self._feeds.get(key) is feed:
            del self._feeds[key]
            if feed.task is not None:
                feed.task.cancel()

    async def _read(self, key: str, feed: _Feed) -> None:
        """The feed's one reader: XREAD after the newest entry, publish each batch."""
        try:
            feed.floor = await self._patiently(partial(self._newest, key))
            feed.ready.set_result(None)
            cursor = str(feed.floor)
            while True:
                reply = await self._patiently(
                    partial(self.redis.xread, {key: cursor}, count=_BATCH, block=self.block_ms)
                )
                if reply:
                    batch = [_entry(eid, fields) for eid, fields in reply[0][1]]
                    cursor = batch[-1][1]
                    feed.publish(batch)
        except StorageUnavailable as exc:
            feed.fail(exc)

    async def _replay(self, key: str, after: StreamId) -> AsyncIterator[Frame]:
        """Yield the entries after `after` as they stand now, in batches."""
        start = after
        while True:
            entries: list[Any] = await self._patiently(
                partial(self.redis.xrange, key, f"({start}", "+", count=_BATCH)
            )
            for eid, fields in entries:
                stream_id, event_id, payload = _entry(eid, fields)
                start = stream_id
                yield event_id, payload
            if len(entries) < _BATCH:
                return

    async def _newest(self, key: str) -> StreamId:
        newest = await self.redis.xrevrange(key, "+", "-", count=1)
        return StreamId.parse(newest[0][0]) if newest else ORIGIN

    async def _log_info(self, key: str) -> _LogInfo:
        try:
            info = await self.redis.xinfo_stream(key)
        except ResponseError:  # no such key: nothing logged yet
            return _LogInfo(ORIGIN, None, None)
        first = StreamId.parse(info["first-entry"][0]) if info.get("first-entry") else None
        deleted = info.get("max-deleted-entry-id")  # Redis >= 7 tells exactly
        if deleted is not None:
            trimmed = StreamId.parse(deleted)
            trimmed_up_to = trimmed if trimmed > ORIGIN else None
        else:  # an approximate cap trims whole nodes, so a trimmed log holds >= the cap
            trimmed_up_to = first if first and int(info["length"]) >= self.log_maxlen else None
        return _LogInfo(StreamId.parse(info["last-generated-id"]), first, trimmed_up_to)

    async def _patiently(self, call: Callable[[], Awaitable[_T]]) -> _T:
        """`call()`, retried through a Redis outage of up to the grace period."""
        loop = asyncio.get_running_loop()
        since: float | None = None
        while True:
            try:
                return await call()
            except (RedisError, OSError) as exc:
                since = since or loop.time()
                if loop.time() - since > self.outage_grace:
                    raise StorageUnavailable(str(exc)) from exc
                await asyncio.sleep(_RETRY_SECONDS)


def _entry(eid: bytes, fields: dict[bytes, bytes]) -> tuple[StreamId, str, str]:
    event_id = eid.decode()
    return StreamId.parse(event_id), event_id, fields[b"e"].decode()


def _dropped(after: StreamId, first: StreamId | None) -> str:
    value = {"after": str(after), "first_id": str(first) if first else None}
    return event_to_json(CustomEvent(name="events_dropped", value=value))
