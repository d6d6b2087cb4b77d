"""An E2BWorkspace's sandbox: tagged, found again, paused and resumed with its disk; its gateway."""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_core.errors import MCPError
from agent_core.mcp import MCPClientConfig
from agent_core.message import Base64Source, DataBlock, Msg, TextBlock, ToolResultBlock
from tests.support.e2b_server import REPO, LocalE2B
from tests.support.tool_calls import Agent
from workspaces.e2b import E2BWorkspace
from workspaces.errors import E2BUnavailable, WorkspaceClosed
from workspaces.gateway.client import GatewayConnection

pytestmark = [pytest.mark.e2b, pytest.mark.integration, pytest.mark.asyncio(loop_scope="module")]

DEMO = MCPClientConfig.model_validate(
    {
        "name": "demo",
        "is_stateful": True,
        "mcp_config": {
            "type": "stdio",
            "command": sys.executable,
            "args": [str(REPO / "tests" / "support" / "mcp_servers" / "demo.py")],
        },
    }
)


def skill_dir(tmp_path: Path) -> Path:
    skill = tmp_path / "greet"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greet\ndescription: Say hello.\n---\n\nHello.\n")
    (skill / "scripts" / "run.sh").write_text("echo hello\n")
    return skill


async def test_create_pause_find_again_resume_kill(
    local_e2b: LocalE2B, e2b_options: dict[str, Any]
) -> None:
    workspace = E2BWorkspace("life", user_id="u1", metadata={"team": "t"}, **e2b_options)
    async with workspace:
        sandbox_id = workspace.sandbox_id
        assert sandbox_id is not None
        record = local_e2b.sandboxes[sandbox_id]
        assert record.metadata == {"team": "t", "workspace_id": "life", "user_id": "u1"}
        ok, out = await Agent(workspace.builtin_tools())("Write", file_path="kept.txt", content="k")
        assert ok, out
    assert record.state == "paused"
    assert record.jail is None  # every process of the sandbox is gone
    with pytest.raises(WorkspaceClosed):
        workspace.builtin_tools()

    again = E2BWorkspace("life", user_id="u1", on_close="kill", **e2b_options)
    async with again:
        assert again.sandbox_id == sandbox_id  # found by its tags, resumed
        assert record.state == "running"
        ok, out = await Agent(again.builtin_tools())("Read", file_path="kept.txt")
        assert ok, out
        assert "k" in out
        # Another user's workspace of the same id is another sandbox.
        async with E2BWorkspace("life", user_id="u2", on_close="kill", **e2b_options) as other:
            assert other.sandbox_id not in (None, sandbox_id)
    assert sandbox_id not in local_e2b.sandboxes
    assert not record.directory.exists()


async def test_offloads_skills_and_mcps_persist_in_the_sandbox(
    local_e2b: LocalE2B, e2b_options: dict[str, Any], tmp_path: Path
) -> None:
    png = base64.b64encode(b"\x89PNG fake").decode()
    image = DataBlock(source=Base64Source(data=png, media_type="image/png"))
    async with E2BWorkspace("keep", user_id="u1", **e2b_options) as workspace:
        sandbox_id = workspace.sandbox_id
        skill = skill_dir(tmp_path)
        installed = await workspace.add_skill(skill)
        assert installed.skill.path == "/workspace/skills/greet"
        assert (await workspace.add_skill(skill)).updated_at == installed.updated_at  # unchanged
        context = await workspace.offload_context(
            "s1", [Msg(name="u", role="user", content=[TextBlock(text="hi"), image])]
        )
        assert context == "/workspace/sessions/s1/context.jsonl"
        result = await workspace.offload_tool_result(
            "s1", ToolResultBlock(id="r1", name="Bash", output="x" * 100)
        )
        assert result == "/workspace/sessions/s1/tool_result-r1.txt"
        client = await workspace.add_mcp(DEMO)
        assert {t.mcp_tool.name for t in await client.list_tools()} >= {"echo", "add"}
    assert local_e2b.sandboxes[sandbox_id].state == "paused"

    async with E2BWorkspace("keep", user_id="u1", on_close="kill", **e2b_options) as workspace:
        assert workspace.sandbox_id == sandbox_id
        assert [s.skill.name for s in await workspace.installed_skills()] == ["greet"]
        agent = Agent(workspace.builtin_tools())
        ok, out = await agent("Read", file_path=context)
        assert ok, out
        assert "file:///workspace/data/" in out  # the payload was stored once, by URL
        ok, out = await agent("Bash", command="ls /workspace/data; cat skills/greet/scripts/run.sh")
        assert ok, out
        assert ".png" in out
        assert "echo hello" in out
        ok, out = await agent("Read", file_path=result)
        assert ok, out
        assert "xxxx" in out
        (status,) = await workspace.mcp_statuses()  # found again in .mcp, started in the sandbox
        assert status.is_healthy, status.error
        (mcp,) = await workspace.list_mcps()
        tools = {t.mcp_tool.name: t for t in await mcp.list_tools()}
        chunks = [chunk async for chunk in tools["add"](a=2, b=3)]
        assert chunks[-1].is_last
        assert "5" in "".join(b.text for c in chunks for b in c.content if hasattr(b, "text"))
        await workspace.remove_skill("greet")
        assert await workspace.installed_skills() == []
        await workspace.clear_session("s1")
        ok, out = await agent("Bash", command="ls /workspace/sessions")
        assert "s1" not in out


async def test_the_gateway_wants_its_token(e2b_options: dict[str, Any]) -> None:
    async with E2BWorkspace("gate", user_id="u1", on_close="kill", **e2b_options) as workspace:
        url, headers = workspace._port_route(workspace.gateway_port)
        intruder = GatewayConnection(None, "wrong", url=url, headers=headers)
        try:
            assert await intruder.health()  # reachable ...
            with pytest.raises(MCPError, match="401"):
                await intruder.request("GET", "/mcps")  # ... but refused
        finally:
            await intruder.aclose()


async def test_a_wrong_key_fails_initialize_clearly(
    local_e2b: LocalE2B, e2b_options: dict[str, Any]
) -> None:
    options = {**e2b_options, "api_params": {**e2b_options["api_params"], "api_key": "nope"}}
    with pytest.raises(E2BUnavailable, match="401"):
        await E2BWorkspace("denied", **options).initialize()
