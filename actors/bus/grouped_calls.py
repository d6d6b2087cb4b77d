"""`GroupedCalls`: concurrent calls of one coroutine folded into batched rounds (group commit).

Request handlers of one process often make the same Redis call at the same moment. Folding
them makes each round one batched call (a pipeline, an MGET) whatever its size: the first
call starts a round at once, the calls that arrive while it is in flight go together in the
next. An idle process pays nothing extra: a lone call is a round of one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class GroupedCalls(Generic[T, R]):
    """Calls `run_batch` with the arguments of concurrent calls; each caller gets its result.

    `run_batch` takes the arguments in arrival order and returns one result per argument, in
    the same order; if it raises, every caller of that round gets the exception.
    """

    def __init__(self, run_batch: Callable[[list[T]], Awaitable[list[R]]]) -> None:
        self._run_batch = run_batch
        self._waiting: list[tuple[T, asyncio.Future[R]]] = []
        self._rounds: asyncio.Task[None] | None = None

    async def __call__(self, argument: T) -> R:
        """The result `run_batch` gave for `argument` in the round that took it."""
        loop = asyncio.get_running_loop()
        result: asyncio.Future[R] = loop.create_future()
        self._waiting.append((argument, result))
        if self._rounds is None:
            self._rounds = loop.create_task(self._run_rounds())
        return await result

    async def _run_rounds(self) -> None:
        batch: list[tuple[T, asyncio.Future[R]]] = []
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, []
                try:
                    results = await self._run_batch([argument for argument, _ in batch])
                except Exception as exc:  # each caller gets the round's failure
                    _settle(batch, exc)
                    continue
                for (_, future), value in zip(batch, results, strict=True):
                    if not future.done():  # its caller may have gone (cancelled)
                        future.set_result(value)
        except asyncio.CancelledError:  # the loop is closing: nobody is left hanging
            _settle([*batch, *self._waiting], None)
            self._waiting = []
            raise
        finally:
            self._rounds = None


def _settle(pending: list[tuple[T, asyncio.Future[R]]], error: Exception | None) -> None:
    """Fail the callers still waiting with `error` (None: cancel them)."""
    for _, future in pending:
        if future.done():
            continue
        if error is None:
            future.cancel()
        else:
            future.set_exception(error)
