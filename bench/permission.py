"""Permission decisions per second over the shell command table of the permission tests.

Runs `PermissionEngine.decide` (DEFAULT mode, a Bash tool wired like the built-in one) on every
command of `tests/unit/agent_core/permission/command_table.py`, N rounds, and prints:

- cold: the analysis cache is cleared before each round, so every decision parses its command;
- warm: the analysis is cached (the common case: the engine asks several hooks about one call);
- analysis: `analyze_command` alone, uncached.

Usage: python bench/permission.py [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_core.permission import PermissionEngine, analyze_command
from tests.unit.agent_core.permission.command_table import COMMANDS
from tests.unit.agent_core.permission.permission_tools import ShellTool, make_context


async def _timed(rounds: int, body: Callable[[], Coroutine[Any, Any, None]]) -> float:
    start = time.perf_counter()
    for _ in range(rounds):
        await body()
    return time.perf_counter() - start


def _report(label: str, seconds: float, count: int) -> None:
    print(
        f"{label:<9} {count / seconds:>12,.0f} commands/s {seconds / count * 1e6:>9.1f} µs/decision"
    )


async def main(rounds: int) -> None:
    commands = [row[0] for row in COMMANDS]
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "proj"
        (project / "src").mkdir(parents=True)
        engine = PermissionEngine(make_context(project))
        tool = ShellTool(str(project))

        async def decide_all() -> None:
            for command in commands:
                await engine.decide(tool, {"command": command})

        async def cold_round() -> None:
            analyze_command.cache_clear()
            await decide_all()

        async def analyze_all() -> None:
            analyze_command.cache_clear()
            for command in commands:
                analyze_command(command)

        await decide_all()  # warm-up
        count = rounds * len(commands)
        print(f"{len(commands)} commands x {rounds} rounds")
        _report("cold", await _timed(rounds, cold_round), count)
        await decide_all()
        _report("warm", await _timed(rounds, decide_all), count)
        _report("analysis", await _timed(rounds, analyze_all), count)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    asyncio.run(main(parser.parse_args().rounds))
