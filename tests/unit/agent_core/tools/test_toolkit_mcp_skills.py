"""Toolkit(mcps=..., skills_or_loaders=...): prepare(), aclose(), skills_prompt(), mcp_errors."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent_core.agent import Agent
from agent_core.errors import ToolError
from agent_core.mcp import HttpMCPConfig, MCPClient, StdioMCPConfig
from agent_core.message import Msg, TextBlock, ToolCallBlock, ToolResultState, UserMsg
from agent_core.permission import PermissionContext, PermissionMode
from agent_core.skill import LocalSkillLoader, Skill
from agent_core.state import AgentState
from agent_core.testing import ScriptedChatModel, ScriptedResponse, ScriptedToolCall
from agent_core.tool import FunctionTool, ToolChunk, ToolGroup, Toolkit
from tests.support.mcp_servers import demo_stdio_config

REVIEW = "---\nname: review\ndescription: Review a pull request.\n---\n\n1. Read the diff.\n"
DEPLOY = "---\nname: deploy\ndescription: Ship a release.\n---\n\nTag, then push.\n"


def time_server() -> MCPClient:
    config = StdioMCPConfig(
        command=sys.executable, args=["-m", "mcp_server_time", "--local-timezone", "UTC"]
    )
    return MCPClient("time", True, config, timeout=10)


def broken_server(name: str = "broken") -> MCPClient:
    config = StdioMCPConfig(command="/nonexistent/troupe-no-such-mcp-server")
    return MCPClient(name, True, config, timeout=5)


def skill_dir(root: Path, name: str, markdown: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(markdown)
    return folder


async def run(
    toolkit: Toolkit, name: str, arguments: dict[str, object], state: AgentState | None = None
) -> list[ToolChunk]:
    call = ToolCallBlock(id="call_1", name=name, input=json.dumps(arguments))
    return [chunk async for chunk in toolkit.call(call, state)]


def text(chunks: list[ToolChunk]) -> str:
    return "".join(b.text for c in chunks for b in c.content if isinstance(b, TextBlock))


def names(toolkit: Toolkit, state: AgentState | None = None) -> list[str]:
    return [schema.name for schema in toolkit.schemas(state)]


@pytest.mark.integration
async def test_stdio_server_tools_join_the_basic_group_after_prepare() -> None:
    client = MCPClient("demo", True, demo_stdio_config(), timeout=10)
    toolkit = Toolkit(mcps=[client])
    assert names(toolkit) == []

    await toolkit.prepare()
    assert client.is_connected
    assert {"mcp__demo__echo", "mcp__demo__add", "mcp__demo__pid"} <= set(names(toolkit))
    assert toolkit.mcp_errors == {}
    assert text(await run(toolkit, "mcp__demo__add", {"a": 2, "b": 3})) == "5"

    # Idempotent: the same session (server process) and no duplicate tools.
    before = names(toolkit)
    pid = text(await run(toolkit, "mcp__demo__pid", {}))
    await toolkit.prepare()
    assert names(toolkit) == before
    assert text(await run(toolkit, "mcp__demo__pid", {})) == pid

    await toolkit.aclose()
    assert not client.is_connected
    assert names(toolkit) == []
    (chunk,) = await run(toolkit, "mcp__demo__add", {"a": 1, "b": 1})
    assert chunk.state is ToolResultState.ERROR

    # A closed toolkit can be prepared again (a new server process).
    async with toolkit:
        assert text(await run(toolkit, "mcp__demo__add", {"a": 1, "b": 1})) == "2"
        assert text(await run(toolkit, "mcp__demo__pid", {})) != pid
    assert not client.is_connected


@pytest.mark.integration
async def test_a_client_connected_by_its_owner_stays_open_after_aclose() -> None:
    async with MCPClient("demo", True, demo_stdio_config(), timeout=10) as client:
        toolkit = Toolkit(mcps=[client])
        await toolkit.prepare()
        assert "mcp__demo__echo" in names(toolkit)
        await toolkit.aclose()
        assert client.is_connected
        assert len(await client.list_tools()) > 0


@pytest.mark.integration
async def test_a_group_s_mcp_tools_are_hidden_until_the_group_is_active() -> None:
    toolkit = Toolkit(
        tool_groups=[
            ToolGroup(
                name="clock",
                description="Tell the time.",
                instructions="Always ask for UTC.",
                mcps=[time_server()],
            )
        ]
    )
    state = AgentState()
    async with toolkit:
        assert names(toolkit, state) == ["reset_tools"]
        (refused,) = await run(toolkit, "mcp__time__get_current_time", {"timezone": "UTC"}, state)
        assert refused.state is ToolResultState.ERROR
        assert "inactive tool group 'clock'" in text([refused])

        activated = await run(toolkit, "reset_tools", {"clock": True}, state)
        assert "Always ask for UTC." in text(activated)
        assert "mcp__time__get_current_time" in names(toolkit, state)
        result = await run(toolkit, "mcp__time__get_current_time", {"timezone": "UTC"}, state)
        assert result[-1].state is ToolResultState.SUCCESS
        assert json.loads(text(result))["timezone"] == "UTC"


def answer_with_the_time(messages: list[Msg]) -> ScriptedResponse:
    (result,) = messages[-1].get_content_blocks("tool_result")
    now = json.loads(result.output_text())["datetime"]
    return ScriptedResponse(text=f"It is {now} in UTC.")


@pytest.mark.integration
async def test_an_agent_calls_a_third_party_mcp_tool() -> None:
    model = ScriptedChatModel(
        [
            ScriptedResponse(
                tool_calls=[ScriptedToolCall("mcp__time__get_current_time", {"timezone": "UTC"})]
            ),
            answer_with_the_time,
        ]
    )
    toolkit = Toolkit(mcps=[time_server()])
    agent = Agent(
        "clock",
        "You tell the time.",
        model,
        toolkit,
        state=AgentState(permission_context=PermissionContext(mode=PermissionMode.BYPASS)),
    )
    async with toolkit:
        reply = await agent.reply(UserMsg("user", "What time is it?"))

    (result,) = reply.get_content_blocks("tool_result")
    assert result.state is ToolResultState.SUCCESS
    reported = datetime.fromisoformat(json.loads(result.output_text())["datetime"])
    assert abs(reported - datetime.now(UTC)) < timedelta(minutes=5)
    assert reply.get_text_content() == f"It is {reported.isoformat()} in UTC."
    # The model was offered the MCP tool by its namespaced name.
    assert "mcp__time__get_current_time" in [s.name for s in model.tool_schemas[0]]


async def test_a_failing_server_is_recorded_and_the_others_still_work() -> None:
    unreachable = MCPClient(
        "offline", False, HttpMCPConfig(url="http://127.0.0.1:9/mcp", timeout=2), timeout=5
    )
    toolkit = Toolkit([answer_with_the_time], mcps=[broken_server(), unreachable])
    await toolkit.prepare()
    assert set(toolkit.mcp_errors) == {"broken", "offline"}
    assert "troupe-no-such-mcp-server" in toolkit.mcp_errors["broken"]
    assert "cannot list the tools of MCP server 'offline'" in toolkit.mcp_errors["offline"]
    assert names(toolkit) == ["answer_with_the_time"]
    # Failures are not retried by a second prepare(); aclose() forgets them.
    await toolkit.prepare()
    assert set(toolkit.mcp_errors) == {"broken", "offline"}
    await toolkit.aclose()
    assert toolkit.mcp_errors == {}


@pytest.mark.integration
async def test_a_broken_server_does_not_stop_a_working_one() -> None:
    async with Toolkit(mcps=[broken_server(), time_server()]) as toolkit:
        assert list(toolkit.mcp_errors) == ["broken"]
        assert "mcp__time__get_current_time" in names(toolkit)


async def test_skills_from_a_directory_reach_the_prompt_and_the_viewer(tmp_path: Path) -> None:
    skill_dir(tmp_path / "skills", "review", REVIEW)
    toolkit = Toolkit(skills_or_loaders=[str(tmp_path / "skills")])
    assert toolkit.skills_prompt() == ""

    await toolkit.prepare()
    prompt = toolkit.skills_prompt()
    assert "- review: Review a pull request." in prompt
    assert names(toolkit) == ["Skill"]
    viewed = await run(toolkit, "Skill", {"skill": "review"})
    assert viewed[-1].state is ToolResultState.SUCCESS
    assert text(viewed).endswith(REVIEW)
    assert str(tmp_path / "skills" / "review") in text(viewed)


async def test_skills_come_from_skill_objects_paths_and_loaders(tmp_path: Path) -> None:
    review = skill_dir(tmp_path / "a", "review", REVIEW)
    deploy = skill_dir(tmp_path / "b", "deploy", DEPLOY)
    note = Skill.parse("---\nname: note\ndescription: Take notes.\n---\nWrite.\n", "/mem/note")
    toolkit = Toolkit(skills_or_loaders=[note, review, LocalSkillLoader(deploy.parent)])
    await toolkit.prepare()
    assert [skill.name for skill in toolkit.skills] == ["note", "review", "deploy"]
    assert toolkit.skill_errors == {}


async def test_a_group_s_skills_are_listed_only_while_it_is_active(tmp_path: Path) -> None:
    skill_dir(tmp_path / "basic", "review", REVIEW)
    skill_dir(tmp_path / "ops", "deploy", DEPLOY)
    toolkit = Toolkit(
        skills_or_loaders=[tmp_path / "basic"],
        tool_groups=[
            ToolGroup(name="ops", description="Operations.", skills_or_loaders=[tmp_path / "ops"])
        ],
    )
    state = AgentState()
    await toolkit.prepare()
    assert "review" in toolkit.skills_prompt(state)
    assert "deploy" not in toolkit.skills_prompt(state)
    await run(toolkit, "reset_tools", {"ops": True}, state)
    assert "- deploy: Ship a release." in toolkit.skills_prompt(state)
    # The viewer (always active) serves every skill.
    assert text(await run(toolkit, "Skill", {"skill": "deploy"}, state)).endswith(DEPLOY)


async def test_broken_skill_sources_are_recorded(tmp_path: Path) -> None:
    skill_dir(tmp_path / "one", "review", REVIEW)
    skill_dir(tmp_path / "two", "review", REVIEW)
    skill_dir(tmp_path / "bad", "bad", "no frontmatter here")
    missing = tmp_path / "missing"
    toolkit = Toolkit(
        skills_or_loaders=[tmp_path / "one", tmp_path / "two", tmp_path / "bad", missing]
    )
    await toolkit.prepare()
    assert [skill.name for skill in toolkit.skills] == ["review"]
    assert set(toolkit.skill_errors) == {
        str(tmp_path / "two"),
        str(tmp_path / "bad"),
        str(missing),
    }
    assert "already provided by" in toolkit.skill_errors[str(tmp_path / "two")]
    assert "does not exist" in toolkit.skill_errors[str(missing)]


def test_configuration_errors_raise_at_construction() -> None:
    with pytest.raises(ToolError, match="skill source"):
        Toolkit(skills_or_loaders=[42])  # type: ignore[list-item]
    with pytest.raises(ToolError, match="MCP server named 'broken'"):
        Toolkit(mcps=[broken_server()], tool_groups=[ToolGroup("g", "G.", mcps=[broken_server()])])


def test_no_skills_no_viewer_and_an_empty_prompt() -> None:
    toolkit = Toolkit([answer_with_the_time])
    assert toolkit.skills_prompt() == ""
    assert toolkit.skills == []
    assert names(toolkit) == ["answer_with_the_time"]


async def test_a_tool_already_named_skill_keeps_its_name(tmp_path: Path) -> None:
    def level(name: str) -> str:
        """Describe a skill level."""
        return f"{name}: expert"

    skill_dir(tmp_path / "skills", "review", REVIEW)
    toolkit = Toolkit([FunctionTool(level, "Skill")], skills_or_loaders=[tmp_path / "skills"])
    await toolkit.prepare()
    assert "already registered" in toolkit.skill_errors["Skill"]
    assert text(await run(toolkit, "Skill", {"name": "go"})) == "go: expert"
    # The skills are still listed; only the viewer is missing.
    assert "review" in toolkit.skills_prompt()
