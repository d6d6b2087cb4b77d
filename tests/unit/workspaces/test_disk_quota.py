"""`DiskQuota`: the per-workspace disk quota kept around the calls that write.

The calls run in this process (a `WorkspaceToolRunner`); the sandbox's escape suite checks the
same quota through bubblewrap.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_core.tool.builtin.runner import WorkspaceToolRunner, workspace_tools
from tests.unit.agent_core.tools._helpers import Runner
from workspaces._quota import DiskQuota, disk_usage

KiB = 1024
LIMIT = 1024 * KiB


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture
def run(ws: Path) -> Runner:
    quota = DiskQuota(WorkspaceToolRunner(), ws, LIMIT)
    return Runner(*(tool.bind(quota) for tool in workspace_tools(ws)))


def test_usage_counts_blocks_once_and_does_not_follow_symlinks(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "big").write_bytes(b"x" * 512 * KiB)
    empty = disk_usage(ws)
    (ws / "a").write_bytes(b"x" * 64 * KiB)
    os.link(ws / "a", ws / "a-again")
    (ws / "out").symlink_to(outside)
    (ws / "sparse").touch()
    os.truncate(ws / "sparse", 100 * LIMIT)

    grown = disk_usage(ws) - empty

    assert 64 * KiB <= grown < 80 * KiB


async def test_a_growing_call_is_stopped(ws: Path, run: Runner) -> None:
    fill = await run(
        "Bash", command="i=0; while :; do head -c 65536 /dev/zero > f-$i; i=$((i+1)); done"
    )

    assert not fill.ok
    assert "The call was stopped: The workspace is over its disk quota" in fill.text
    assert disk_usage(ws) > LIMIT


async def test_over_the_quota_writes_are_refused_and_the_shell_frees_space(
    ws: Path, run: Runner
) -> None:
    (ws / "kept.txt").write_text("kept\n")
    assert (await run("Read", file_path="kept.txt")).ok

    over = await run("Write", file_path="big.txt", content="x" * (LIMIT + KiB))
    write = await run("Write", file_path="small.txt", content="x")
    edit = await run("Edit", file_path="kept.txt", old_string="kept", new_string="k")
    cleaned = await run("Bash", command="rm big.txt && echo freed")
    after = await run("Write", file_path="small.txt", content="x")

    assert not over.ok
    assert "over its disk quota" in over.text
    assert (not write.ok, not edit.ok) == (True, True)
    assert "Delete files to free space" in write.text
    assert cleaned.ok  # `rm` without -f: the over-quota write did land
    assert "freed" in cleaned.text
    assert after.ok, after.text


async def test_reads_are_not_watched(ws: Path, run: Runner) -> None:
    (ws / "big.bin").write_bytes(b"\0" * 2 * LIMIT)  # over the quota already
    (ws / "small.txt").write_text("small\n")

    read = await run("Read", file_path="small.txt")
    found = await run("Glob", pattern="*.bin")
    grepped = await run("Grep", pattern="small")

    assert (read.ok, found.ok, grepped.ok) == (True, True, True)
