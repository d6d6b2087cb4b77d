"""Timing helpers of the in-process benchmarks: interleaved runs and cProfile summaries."""

from __future__ import annotations

import cProfile
import io
import pstats
from collections.abc import Awaitable, Callable


async def interleaved(
    runs: dict[str, Callable[[], Awaitable[float]]], reps: int
) -> dict[str, list[float]]:
    """Seconds of each run, `reps` rounds taking every run in turn (after one warm-up each).

    Interleaving makes drift on the machine hit every run alike.
    """
    for run_once in runs.values():
        await run_once()
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(reps):
        for name, run_once in runs.items():
            samples[name].append(await run_once())
    return samples


def print_top(
    profiler: cProfile.Profile, title: str, top: int, sort: str = "tottime", only: str = ""
) -> None:
    """Print the `top` functions of a profile by `sort` (those matching `only`, if given)."""
    out = io.StringIO()
    restrictions = (only, top) if only else (top,)
    pstats.Stats(profiler, stream=out).sort_stats(sort).print_stats(*restrictions)
    print(f"\n--- {title} ---")
    print(out.getvalue().split("\n", 4)[-1].rstrip())
