"""Grouped calls: one batch per round, each caller its own result, a failure to its round."""

from __future__ import annotations

import asyncio

from actors.bus.grouped_calls import GroupedCalls


async def test_callers_get_their_own_results_and_a_failure_reaches_its_round() -> None:
    rounds: list[list[int]] = []

    async def double(batch: list[int]) -> list[int]:
        rounds.append(batch)
        await asyncio.sleep(0)
        if -1 in batch:
            raise ValueError("bad batch")
        return [n * 2 for n in batch]

    calls = GroupedCalls(double)
    assert await asyncio.gather(*(calls(n) for n in range(5))) == [0, 2, 4, 6, 8]
    failed = await asyncio.gather(calls(-1), calls(7), return_exceptions=True)
    assert all(isinstance(r, ValueError) for r in failed)
    assert await calls(9) == 18
    assert rounds == [[0, 1, 2, 3, 4], [-1, 7], [9]]
