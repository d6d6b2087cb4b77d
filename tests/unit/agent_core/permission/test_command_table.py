"""The command table: read-only verdicts and engine decisions for realistic commands."""

from __future__ import annotations

from pathlib import Path

import pytest
from command_table import ALLOW, ASK, COMMANDS, DENY, MODE_COMMANDS, OPT_IN, SAFETY
from permission_tools import ShellTool, make_context

from agent_core.permission import (
    PermissionBehavior,
    PermissionEngine,
    PermissionMode,
    analyze_command,
    is_read_only,
)


def test_the_table_is_large_and_has_no_duplicates() -> None:
    commands = [row[0] for row in COMMANDS]
    assert len(commands) >= 200
    assert len(set(commands)) == len(commands)


@pytest.mark.parametrize(("command", "read_only", "decision"), COMMANDS)
async def test_default_mode(project: Path, command: str, read_only: bool, decision: str) -> None:
    engine = PermissionEngine(make_context(project))
    result = await engine.decide(ShellTool(str(project)), {"command": command})

    assert is_read_only(command) is read_only
    expected = PermissionBehavior.ALLOW if decision == ALLOW else PermissionBehavior.ASK
    assert result.behavior is expected, result.message
    assert result.bypass_immune is (decision == SAFETY), result.message


@pytest.mark.parametrize(
    "command", [row[0] for row in COMMANDS if row[2] == ASK and "$" not in row[0]]
)
async def test_accepting_the_suggestions_allows_the_command(project: Path, command: str) -> None:
    engine = PermissionEngine(make_context(project))
    tool, call = ShellTool(str(project)), {"command": command}
    asked = await engine.decide(tool, call)
    assert asked.suggestions

    engine.add_rules(asked.suggestions)

    assert (await engine.decide(tool, call)).behavior is PermissionBehavior.ALLOW


@pytest.mark.parametrize(("mode", "command", "decision"), MODE_COMMANDS)
async def test_other_modes(project: Path, mode: str, command: str, decision: str) -> None:
    engine = PermissionEngine(make_context(project, PermissionMode(mode)))
    result = await engine.decide(ShellTool(str(project)), {"command": command})

    expected = {ALLOW: PermissionBehavior.ALLOW, DENY: PermissionBehavior.DENY}.get(
        decision, PermissionBehavior.ASK
    )
    assert result.behavior is expected, result.message
    assert result.bypass_immune is (decision == SAFETY), result.message


@pytest.mark.parametrize(("command", "extra", "read_only"), OPT_IN)
async def test_opt_in_read_only_commands(
    project: Path, command: str, extra: list[str], read_only: bool
) -> None:
    assert not is_read_only(command)
    assert is_read_only(command, extra) is read_only
    context = make_context(project, extra_read_only_commands=extra)
    for mode in (PermissionMode.DEFAULT, PermissionMode.EXPLORE):
        context.mode = mode
        result = await PermissionEngine(context).decide(
            ShellTool(str(project)), {"command": command}
        )
        assert (result.behavior is PermissionBehavior.ALLOW) is read_only, (mode, result.message)


@pytest.mark.parametrize("command", [row[0] for row in COMMANDS if row[1]])
def test_the_default_list_is_within_what_the_analysis_proves(command: str) -> None:
    assert analyze_command(command).read_only
