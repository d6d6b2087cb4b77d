"""The chaos bench in its short form: a few sessions through each fault lose nothing.

`bench/chaos.py` runs as a user runs it; its audit (transcripts, event logs, error replies)
must find every turn answered exactly once, none stuck, none answered with an error.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.ray, pytest.mark.redis]

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "fault", ["actor", "replica", "redis", pytest.param("all", marks=pytest.mark.slow)]
)
def test_a_fault_loses_duplicates_and_strands_no_turn(fault: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("TROUPE_REDIS_URL", "RAY_ADDRESS")}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "chaos.py", "--fault", fault, "--sessions", "3", "--turns", "2"],
        cwd=ROOT / "bench",
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line.strip() for line in done.stdout.splitlines()]
    assert "lost=0 duplicated=0 stuck=0 error_answers=0" in lines, done.stdout
    assert "invariant violations (doctor): 0" in lines, done.stdout
