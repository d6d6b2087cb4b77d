"""The spec's tool examples not covered by `test_spec_examples.py`, ported and run offline.

Areas: tools, toolkits, tool groups, MCP, skills, permissions (building-blocks.md) and teams
(service-and-team.md). As in `test_spec_examples.py`, each example keeps the spec's code with
`agentscope.` renamed `agent_core.` (the Agent Service's `agentscope.app` is Troupe's `actors`),
and a comment marks each change a port needed. The spec's tables of patterns and flags are
examples too, and are checked row by row.

Not ported: nothing in these areas. (The spec marks only TTS, embedding and realtime models
"coming soon", none of them tool features.)
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from actors.storage.records import TeamMembership, TeamRole
from actors.teams.store import SubAgentTemplate, template_registry
from actors.teams.tools import AgentCreate, TeamContext, team_tools
from agent_core.mcp import HttpMCPConfig, MCPClient
from agent_core.message import ToolCallBlock
from agent_core.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionEngine,
    PermissionMode,
    PermissionRule,
)
from agent_core.skill import Skill
from agent_core.tool import (
    Bash,
    Edit,
    FunctionTool,
    Glob,
    Grep,
    Read,
    TaskCreate,
    TaskGet,
    TaskList,
    TaskUpdate,
    ToolBase,
    Toolkit,
    Write,
)
from tests.support.mcp_servers import DemoHttpServer, collect, serve_demo_http, text_of

# Tool -----------------------------------------------------------------------------------------


def test_tool_base_interface_table() -> None:
    # The ToolBase attributes table: every tool carries them, with these defaults.
    class Minimal(ToolBase):
        name = "Minimal"
        description = "Nothing."
        input_schema = {"type": "object", "properties": {}}  # noqa: RUF012

        async def __call__(self) -> None:  # type: ignore[override]
            return None

    tool = Minimal()
    assert (tool.is_concurrency_safe, tool.is_read_only, tool.is_external_tool) == (
        False,
        False,
        False,
    )
    assert (tool.is_state_injected, tool.is_mcp, tool.mcp_name) == (False, False, None)


def test_built_in_tools_table(tmp_path: Path) -> None:
    # Port: our file and shell tools take their working directory.
    read_only = {
        Bash(tmp_path): False,
        Read(tmp_path): True,
        Write(tmp_path): False,
        Edit(tmp_path): False,
        Glob(tmp_path): True,
        Grep(tmp_path): True,
        TaskCreate(): False,
        TaskGet(): True,
        TaskList(): True,
        TaskUpdate(): False,
    }
    for tool, expected in read_only.items():
        assert tool.is_read_only is expected, tool.name


@pytest.mark.parametrize(
    ("pattern", "command", "matches"),
    [
        ("npm run:*", "npm run build", True),
        ("npm run:*", "npm run test", True),
        ("npm run:*", "npm install", False),
        ("git commit:*", 'git commit -m "fix"', True),
        ("git commit:*", "git push", False),
        ("rm:*", "rm file.txt", True),
        ("rm:*", "rm -rf /tmp/x", True),
        ("rm:*", "ls", False),
    ],
)
def test_bash_match_rule_table(tmp_path: Path, pattern: str, command: str, matches: bool) -> None:
    assert Bash(tmp_path).match_rule(pattern, {"command": command}) is matches


def test_bash_suggests_the_command_prefix(tmp_path: Path) -> None:
    (rule,) = Bash(tmp_path).generate_suggestions({"command": 'git commit -m "fix bug"'})
    assert (rule.tool_name, rule.rule_content, rule.behavior) == (
        "Bash",
        "git commit:*",
        PermissionBehavior.ALLOW,
    )


@pytest.mark.parametrize(
    ("pattern", "file_path", "matches"),
    [
        ("src/**", "src/main.py", True),
        ("src/**", "src/deep/er/x.txt", True),
        ("src/**/*.py", "src/pkg/mod.py", True),
        ("src/**/*.py", "src/pkg/notes.md", False),
        ("config.json", "config.json", True),
        ("config.json", "other.json", False),
    ],
)
@pytest.mark.parametrize("tool_class", [Read, Write, Edit])
def test_file_tools_match_rule_table(
    tmp_path: Path, tool_class: type[Read], pattern: str, file_path: str, matches: bool
) -> None:
    assert tool_class(tmp_path).match_rule(pattern, {"file_path": file_path}) is matches


def test_editing_a_file_suggests_its_directory(tmp_path: Path) -> None:
    # "editing /project/src/main.py produces the suggestion src/**" (our /project: tmp_path).
    (rule,) = Edit(tmp_path).generate_suggestions({"file_path": str(tmp_path / "src/main.py")})
    assert rule.rule_content == "src/**"


def get_weather(city: str, unit: str = "celsius") -> str:
    """Get the current weather for a city.

    Args:
        city: The city name to look up.
        unit: Temperature unit, either "celsius" or "fahrenheit".
    """
    return f"The weather in {city} is 22°{unit[0].upper()}"


def test_function_tool_overrides_table() -> None:
    default = FunctionTool(get_weather)
    custom = FunctionTool(
        get_weather,
        name="weather",
        description="Weather by city.",
        is_concurrency_safe=False,
        is_read_only=True,
        is_state_injected=False,
    )
    assert (default.name, default.is_concurrency_safe, default.is_read_only) == (
        "get_weather",
        True,
        False,
    )
    assert default.is_state_injected is False
    assert (custom.name, custom.description) == ("weather", "Weather by city.")
    assert (custom.is_concurrency_safe, custom.is_read_only) == (False, True)


# MCP ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mcp_server() -> Iterator[DemoHttpServer]:
    # Port: the spec's api.weather.com / api.search.com are the demo MCP server on 127.0.0.1.
    with serve_demo_http() as server:
        yield server


@pytest.mark.integration
async def test_register_a_stateful_http_mcp_client(mcp_server: DemoHttpServer) -> None:
    client = MCPClient(
        name="weather",
        is_stateful=True,
        mcp_config=HttpMCPConfig(
            url=mcp_server.url,
            headers={"Authorization": "Bearer xxx"},
        ),
    )

    await client.connect()

    toolkit = Toolkit(mcps=[client])
    try:
        await toolkit.prepare()
        assert "mcp__weather__echo" in [tool.name for tool in toolkit.tools]
        call = ToolCallBlock(id="c1", name="mcp__weather__add", input='{"a": 2, "b": 3}')
        (chunk,) = [chunk async for chunk in toolkit.call(call)]
        assert text_of(chunk) == "5"
    finally:
        await toolkit.aclose()
        await client.close()


@pytest.mark.integration
async def test_register_a_stateless_http_mcp_client_and_use_it_outside_a_toolkit(
    mcp_server: DemoHttpServer,
) -> None:
    client = MCPClient(
        name="search",
        is_stateful=False,
        mcp_config=HttpMCPConfig(url=mcp_server.url),
    )

    toolkit = Toolkit(mcps=[client])
    await toolkit.prepare()
    assert "mcp__search__echo" in [tool.name for tool in toolkit.tools]

    # "call await client.list_tools() to retrieve MCPTool adapters and use them like any tool"
    tools = {tool.name: tool for tool in await client.list_tools()}
    (echoed,) = await collect(tools["mcp__search__echo"](text="hi"))
    assert text_of(echoed) == "hi"


# Skill ----------------------------------------------------------------------------------------


async def test_how_skill_works(tmp_path: Path) -> None:
    skill_dir = tmp_path / "skills" / "review"
    skill_dir.mkdir(parents=True)
    (skill_dir / "SKILL.md").write_text(
        "---\nname: review\ndescription: Review a pull request.\n---\n\n1. Read the diff.\n"
    )
    toolkit = Toolkit(skills_or_loaders=[str(tmp_path / "skills")])
    await toolkit.prepare()

    # At initialization: the viewer is registered and the prompt lists name and description.
    assert "Skill" in [schema.name for schema in toolkit.schemas()]
    assert "- review: Review a pull request." in toolkit.skills_prompt()
    assert "1. Read the diff." not in toolkit.skills_prompt()
    # At runtime: the viewer returns the full SKILL.md content.
    call = ToolCallBlock(id="c1", name="Skill", input='{"skill": "review"}')
    chunks = [chunk async for chunk in toolkit.call(call)]
    assert "1. Read the diff." in "".join(text_of(c) for c in chunks)
    assert isinstance(toolkit.skills[0], Skill)


# Permission -----------------------------------------------------------------------------------


async def test_pattern_examples_as_rules(tmp_path: Path) -> None:
    npm = PermissionRule(
        tool_name="Bash",
        rule_content="npm run:*",
        behavior=PermissionBehavior.ALLOW,
        source="userSettings",
    )
    src = PermissionRule(
        tool_name="Write",
        rule_content="src/**",
        behavior=PermissionBehavior.ALLOW,
        source="userSettings",
    )
    engine = PermissionEngine(
        PermissionContext(mode=PermissionMode.DEFAULT, allow_rules={"Bash": [npm], "Write": [src]})
    )
    bash, write = Bash(tmp_path), Write(tmp_path)

    assert (await engine.decide(bash, {"command": "npm run build"})).behavior is (
        PermissionBehavior.ALLOW
    )
    assert (await engine.decide(bash, {"command": "npm install"})).behavior is (
        PermissionBehavior.ASK
    )
    allowed = await engine.decide(write, {"file_path": "src/app.py", "content": "x"})
    assert allowed.behavior is PermissionBehavior.ALLOW
    asked = await engine.decide(write, {"file_path": "docs/app.md", "content": "x"})
    assert asked.behavior is PermissionBehavior.ASK


# Team (service-and-team.md) -------------------------------------------------------------------

EXPLORER_PROMPT = """You are {member_name}, an explorer \
agent in team '{team_name}' led by {leader_name}.

Team purpose: {team_description}

Your role: {member_description}

## Responsibilities
- Complete the exploration tasks assigned by the team leader.
- You are read-only: you may inspect files and the codebase, but \
you must never modify, create, or delete anything.

## Reporting
- Always report the task result back to {leader_name} using the \
TeamSay tool, whether the task succeeds or fails."""


def explorer() -> SubAgentTemplate:
    # Port: `agentscope.app.SubAgentTemplate` is `actors.teams.store.SubAgentTemplate`.
    return SubAgentTemplate(
        type="explorer",
        description=(
            "Read-only agents specialized in exploration tasks. "
            "Use this type when you need to investigate the "
            "codebase without making any changes."
        ),
        system_prompt_template=EXPLORER_PROMPT,
        permission_context=PermissionContext(
            mode=PermissionMode.EXPLORE,
        ),
    )


def team_context(templates: list[SubAgentTemplate]) -> TeamContext:
    # Port: `create_app(sub_agent_templates=[...])` is `RuntimeSettings(sub_agent_templates=[...])`,
    # which the session runtime turns into this registry; describing the tools needs no I/O.
    return TeamContext("s", "Lead", None, None, None, template_registry(templates))  # type: ignore[arg-type]


def test_registering_templates_and_the_placeholders() -> None:
    template = explorer()

    prompt = template.render("crew", "map the code", "scout", "finds the entry points", "Lead")

    assert prompt.startswith("You are scout, an explorer agent in team 'crew' led by Lead.")
    assert "Team purpose: map the code" in prompt
    assert "Your role: finds the entry points" in prompt
    assert template.permission_context.mode is PermissionMode.EXPLORE


def test_runtime_behavior_of_sub_agent_types() -> None:
    plain = AgentCreate(team_context([])).input_schema
    custom = AgentCreate(team_context([explorer()])).input_schema

    # No custom templates: no subagent_type at all.
    assert "subagent_type" not in plain["properties"]
    # Custom templates: an enum of every type, "default" included, described for the leader.
    assert set(custom["properties"]["subagent_type"]["enum"]) == {"explorer", "default"}
    assert "Read-only agents specialized" in custom["properties"]["subagent_type"]["description"]
    # Overriding the default; duplicate types are a ValueError at startup.
    mine = SubAgentTemplate(type="default", description="Mine.", system_prompt_template="x")
    assert template_registry([mine])["default"] is mine
    with pytest.raises(ValueError, match="duplicate"):
        template_registry([explorer(), explorer()])


WORKER = TeamMembership(team_id="t", role=TeamRole.WORKER, member_name="w", leader_session_id="s")


def test_leaders_get_the_team_tools_and_workers_only_team_say() -> None:
    worker = WORKER

    leader_tools = [tool.name for tool in team_tools(team_context([]), None)]
    worker_tools = [tool.name for tool in team_tools(team_context([]), worker)]

    assert leader_tools == ["TeamCreate", "AgentCreate", "TeamSay", "TeamDelete"]
    assert worker_tools == ["TeamSay"]


async def test_an_explorer_worker_may_still_report_with_team_say() -> None:
    # An EXPLORE worker is read-only, yet must report back: team tools count as read-only.
    (say,) = team_tools(team_context([explorer()]), WORKER)
    engine = PermissionEngine(explorer().permission_context)

    decision = await engine.decide(say, {"content": "found it"})

    assert decision.behavior is PermissionBehavior.ALLOW
