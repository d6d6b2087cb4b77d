"""The built-in tools of an E2BWorkspace run in its sandbox, streaming, with the agent's paths."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.support.e2b_server import LocalE2B
from tests.support.tool_calls import (
    Agent,
    bash_tool,
    check_bash_output_streams,
    check_cancelling_kills_the_command,
)
from workspaces.e2b import E2BWorkspace

pytestmark = [pytest.mark.e2b, pytest.mark.integration, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def workspace(e2b_options: dict[str, Any]) -> AsyncIterator[E2BWorkspace]:
    async with E2BWorkspace("tools", user_id="u1", on_close="kill", **e2b_options) as opened:
        yield opened


@pytest.fixture
def agent(workspace: E2BWorkspace) -> Agent:
    return Agent(workspace.builtin_tools())


def disk(local_e2b: LocalE2B, workspace: E2BWorkspace) -> Path:
    """The sandbox's `/workspace`, as the local E2B keeps it."""
    assert workspace.sandbox_id is not None
    return local_e2b.sandboxes[workspace.sandbox_id].directory / "workspace"


async def test_the_six_tools_work_in_the_sandbox(
    workspace: E2BWorkspace, agent: Agent, local_e2b: LocalE2B
) -> None:
    assert workspace.workdir == Path("/workspace")
    ok, out = await agent("Write", file_path="notes/a.txt", content="alpha\nbeta\n")
    assert ok, out
    assert (disk(local_e2b, workspace) / "notes" / "a.txt").read_text() == "alpha\nbeta\n"
    ok, out = await agent("Read", file_path="/workspace/notes/a.txt")
    assert ok, out
    assert "beta" in out
    ok, out = await agent("Edit", file_path="notes/a.txt", old_string="beta", new_string="gamma")
    assert ok, out
    assert (disk(local_e2b, workspace) / "notes" / "a.txt").read_text() == "alpha\ngamma\n"
    ok, out = await agent("Glob", pattern="**/*.txt")
    assert ok, out
    assert "/workspace/notes/a.txt" in out
    ok, out = await agent("Grep", pattern="gam+a", output_mode="content")
    assert ok, out
    assert "gamma" in out
    ok, out = await agent("Bash", command="pwd; cat notes/a.txt; id -u; env")
    assert ok, out
    assert out.splitlines()[:4] == ["/workspace", "alpha", "gamma", "1000"]
    assert "PYTHONPATH" not in out  # the agent's commands get a scrubbed environment
    fragment = await workspace.system_prompt_fragment()
    assert "/workspace" in fragment


async def test_bash_output_streams(workspace: E2BWorkspace, local_e2b: LocalE2B) -> None:
    await check_bash_output_streams(
        bash_tool(workspace.builtin_tools()), disk(local_e2b, workspace) / "go"
    )


async def test_cancelling_a_call_kills_its_command(workspace: E2BWorkspace, agent: Agent) -> None:
    await check_cancelling_kills_the_command(bash_tool(workspace.builtin_tools()), agent)


async def test_the_bookkeeping_is_out_of_the_agents_reach(
    workspace: E2BWorkspace, agent: Agent, local_e2b: LocalE2B
) -> None:
    mcp_file = disk(local_e2b, workspace) / ".mcp"
    before = mcp_file.read_bytes()
    attempts = [
        "rm -f /workspace/.mcp",
        "echo '[]' > /workspace/.mcp",
        "mv /workspace/.mcp /workspace/old",
        "mv /workspace /elsewhere",
        "touch /workspace/skills/x /workspace/sessions/x /workspace/data/x",
        "rm -rf /workspace/sessions",
        "ln -s / /workspace/skills/root",
    ]
    for attempt in attempts:
        ok, out = await agent("Bash", command=f"{attempt} 2>&1; echo status=$?")
        assert "status=0" not in out, (attempt, out)
    assert mcp_file.read_bytes() == before
    ok, out = await agent("Bash", command="cat /workspace/.mcp && touch /workspace/mine && echo ok")
    assert ok, out
    assert out.rstrip().endswith("ok")  # it may read the bookkeeping and use the workspace
