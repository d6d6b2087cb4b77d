"""The tool host over a plain subprocess: delegated calls, the read cache, cancel and death."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_core.tool.builtin.runner import workspace_tools
from tests.support.tool_calls import Agent, eventually, text
from workspaces._env import agent_environment
from workspaces.toolhost import ToolHostProcess, toolhost_command

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[ToolHostProcess]:
    env = agent_environment(str(tmp_path))
    argv = toolhost_command(sys.executable, agent_env=env, child_limits={"cpu": 60})
    process = ToolHostProcess(argv, env={**env, "PYTHONPATH": str(REPO)}, cwd=str(tmp_path))
    yield process
    await process.aclose()


def agent_on(host: ToolHostProcess, cwd: Path) -> Agent:
    return Agent([tool.bind(host) for tool in workspace_tools(cwd)])


async def test_the_read_cache_travels_both_ways(host: ToolHostProcess, tmp_path: Path) -> None:
    agent = agent_on(host, tmp_path)
    assert (await agent("Write", file_path="a.txt", content="one\ntwo\n"))[0]
    ok, out = await agent("Read", file_path="a.txt")
    assert ok, out
    assert [e.file_path for e in agent.state.tool_context.read_file_cache] == [
        str(tmp_path / "a.txt")
    ]
    ok, out = await agent("Edit", file_path="a.txt", old_string="two", new_string="three")
    assert ok, out
    assert (tmp_path / "a.txt").read_text() == "one\nthree\n"


async def test_cancel_kills_the_command_and_death_is_reported(
    host: ToolHostProcess, tmp_path: Path
) -> None:
    (bash,) = [t.bind(host) for t in workspace_tools(tmp_path) if t.name == "Bash"]
    async with contextlib.aclosing(bash(command="echo $$ > pid; echo up; sleep 4243")) as stream:
        async for chunk in stream:
            if "up" in text([chunk]):
                break
    shell = int((tmp_path / "pid").read_text())

    async def gone() -> bool:
        return not await asyncio.to_thread(os.path.exists, f"/proc/{shell}")

    assert await eventually(gone, within=10)

    first = host.pid
    assert first is not None
    async with contextlib.aclosing(bash(command="echo up; sleep 4244")) as stream:
        chunks = []
        async for chunk in stream:
            chunks.append(chunk)
            if len(chunks) == 1:
                os.kill(first, signal.SIGKILL)
    assert chunks[-1].is_last
    assert "died" in text(chunks[-1:])
    agent = agent_on(host, tmp_path)
    assert await agent("Bash", command="echo again") == (True, "again\n")
    assert host.pid not in (None, first)
