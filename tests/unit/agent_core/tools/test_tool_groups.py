"""Tool groups and reset_tools: final-state activation, hidden tools, state persistence."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_core.errors import ToolError
from agent_core.message import TextBlock, ToolCallBlock, ToolResultState
from agent_core.permission.types import PermissionBehavior, PermissionContext
from agent_core.state import AgentState
from agent_core.tool import FunctionTool, ToolGroup, Toolkit


def ping() -> str:
    """Answer pong."""
    return "pong"


def db_query(sql: str) -> str:
    """Run a query."""
    return f"rows for {sql}"


def db_migrate() -> str:
    """Migrate the schema."""
    return "migrated"


def deploy(target: str) -> str:
    """Deploy a service."""
    return f"deployed {target}"


def remember_state(_agent_state: AgentState) -> str:
    """Report how many tasks the agent has."""
    return str(len(_agent_state.tasks_context.tasks))


def make_toolkit() -> Toolkit:
    return Toolkit(
        [ping],
        tool_groups=[
            ToolGroup(
                name="database",
                description="Tools for database operations.",
                instructions="Always wrap mutations in a transaction.",
                tools=[db_query, db_migrate],
            ),
            ToolGroup(
                name="deployment",
                description="Tools for deploying services.",
                instructions="Confirm the target environment before deploying.",
                tools=[deploy],
            ),
        ],
    )


async def call(
    toolkit: Toolkit, name: str, state: AgentState | None = None, **arguments: Any
) -> tuple[str, ToolResultState]:
    block = ToolCallBlock(id="c", name=name, input=json.dumps(arguments))
    chunks = [chunk async for chunk in toolkit.call(block, state)]
    text = "".join(b.text for c in chunks for b in c.content if isinstance(b, TextBlock))
    return text, chunks[-1].state


def names(toolkit: Toolkit, state: AgentState | None = None) -> list[str]:
    return [schema.name for schema in toolkit.schemas(state)]


def test_only_basic_tools_and_the_meta_tool_start_visible() -> None:
    toolkit = make_toolkit()

    assert names(toolkit) == ["ping", "reset_tools"]
    assert [t.name for t in toolkit.tools] == [
        "ping", "db_query", "db_migrate", "reset_tools", "deploy",
    ]  # fmt: skip
    assert [g.name for g in toolkit.tool_groups] == ["database", "deployment"]


def test_meta_tool_schema_has_one_boolean_per_group() -> None:
    schema = make_toolkit().get("reset_tools").input_schema  # type: ignore[union-attr]

    assert schema == {
        "type": "object",
        "properties": {
            "database": {
                "type": "boolean",
                "default": False,
                "description": "Tools for database operations.",
            },
            "deployment": {
                "type": "boolean",
                "default": False,
                "description": "Tools for deploying services.",
            },
        },
    }


def test_without_groups_there_is_no_meta_tool() -> None:
    assert names(Toolkit([ping])) == ["ping"]


async def test_reset_tools_activates_and_returns_instructions() -> None:
    toolkit = make_toolkit()
    state = AgentState()

    text, result_state = await call(toolkit, "reset_tools", state, database=True)

    assert result_state is ToolResultState.SUCCESS
    assert text == (
        "Active tool groups: database.\n\n"
        "## Instructions for the 'database' tools\nAlways wrap mutations in a transaction."
    )
    assert state.tool_context.activated_groups == ["database"]
    assert names(toolkit, state) == ["ping", "db_query", "db_migrate", "reset_tools"]
    assert await call(toolkit, "db_query", state, sql="select 1") == (
        "rows for select 1",
        ToolResultState.SUCCESS,
    )


async def test_input_is_the_final_state_not_a_change() -> None:
    toolkit = make_toolkit()
    state = AgentState()
    await call(toolkit, "reset_tools", state, database=True)

    text, _ = await call(toolkit, "reset_tools", state, deployment=True)

    assert state.tool_context.activated_groups == ["deployment"]
    assert text == (
        "Active tool groups: deployment.\n\nDeactivated: database.\n\n"
        "## Instructions for the 'deployment' tools\n"
        "Confirm the target environment before deploying."
    )
    assert "db_query" not in names(toolkit, state)

    # Instructions come with a group's activation only, not while it stays active.
    again, _ = await call(toolkit, "reset_tools", state, deployment=True, database=True)
    assert again == (
        "Active tool groups: database, deployment.\n\n"
        "## Instructions for the 'database' tools\nAlways wrap mutations in a transaction."
    )

    none, _ = await call(toolkit, "reset_tools", state)
    assert none.startswith("No tool groups are active")
    assert state.tool_context.activated_groups == []


async def test_inactive_group_tools_are_refused() -> None:
    toolkit = make_toolkit()

    text, result_state = await call(toolkit, "deploy", target="prod")

    assert result_state is ToolResultState.ERROR
    assert text == (
        "Tool 'deploy' belongs to the inactive tool group 'deployment'. "
        "Activate the group with reset_tools before using it."
    )


async def test_unknown_groups_and_non_booleans_change_nothing() -> None:
    toolkit = make_toolkit()
    state = AgentState()
    await call(toolkit, "reset_tools", state, database=True)

    unknown, s1 = await call(toolkit, "reset_tools", state, databse=True)
    wrong, s2 = await call(toolkit, "reset_tools", state, database="yes")

    assert (s1, s2) == (ToolResultState.ERROR, ToolResultState.ERROR)
    assert "Unknown tool group(s): databse" in unknown
    assert '- database: expected boolean, got string "yes"' in wrong
    assert state.tool_context.activated_groups == ["database"]


async def test_activation_lives_in_the_agent_state() -> None:
    toolkit = make_toolkit()
    saved = AgentState()
    await call(toolkit, "reset_tools", saved, deployment=True)

    restored = AgentState.model_validate_json(saved.model_dump_json())

    assert names(make_toolkit(), restored) == ["ping", "reset_tools", "deploy"]
    assert names(toolkit, AgentState()) == ["ping", "reset_tools"]
    # Without a state, the toolkit keeps its own.
    await call(toolkit, "reset_tools", database=True)
    assert toolkit.active_groups() == ["database"]
    assert toolkit.active_groups(saved) == ["deployment"]


async def test_state_is_injected_and_hidden_from_the_model() -> None:
    tool = FunctionTool(remember_state, is_state_injected=True)
    toolkit = Toolkit([tool])
    state = AgentState()
    state.tasks_context.tasks = []

    text, _ = await call(toolkit, "remember_state", state)
    # A state smuggled in by the model is dropped in favour of the real one.
    smuggled, _ = await call(toolkit, "remember_state", state, _agent_state={"bogus": 1})

    assert tool.input_schema["properties"] == {}
    assert (text, smuggled) == ("0", "0")


async def test_meta_tool_is_always_allowed_and_function_tools_ask() -> None:
    toolkit = make_toolkit()
    meta = toolkit.get("reset_tools")
    query = toolkit.get("db_query")
    assert meta is not None
    assert query is not None

    meta_decision = await meta.check_permissions({}, PermissionContext())
    query_decision = await query.check_permissions({"sql": "x"}, PermissionContext())

    assert meta_decision.behavior is PermissionBehavior.ALLOW
    assert query_decision.behavior is PermissionBehavior.ASK


def test_group_and_tool_name_rules() -> None:
    with pytest.raises(ToolError, match="reserved"):
        ToolGroup(name="basic", description="nope")
    with pytest.raises(ToolError, match="invalid tool group name"):
        ToolGroup(name="has space", description="nope")
    with pytest.raises(ToolError, match="already exists"):
        Toolkit(tool_groups=[ToolGroup("g", "d"), ToolGroup("g", "d")])
    with pytest.raises(ToolError, match="'ping' is already registered"):
        Toolkit([ping], tool_groups=[ToolGroup("g", "d", tools=[ping])])
    with pytest.raises(ToolError, match="reserved for the meta tool"):
        Toolkit([FunctionTool(ping, name="reset_tools")])


def test_a_failing_group_adds_nothing() -> None:
    toolkit = Toolkit([ping])

    with pytest.raises(ToolError):
        toolkit.add_group(ToolGroup("g", "d", tools=[db_query, ping]))

    assert [t.name for t in toolkit.tools] == ["ping"]
    assert toolkit.tool_groups == []
