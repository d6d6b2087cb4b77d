"""`BuiltinTool.bind`: workspace tools validate locally and run their calls through an executor.

The executor here is in memory: a real `WorkspaceToolRunner` that records what it is asked,
optionally replaced by scripted frames for one call.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest

from agent_core.message import TextBlock, ToolResultState
from agent_core.permission import (
    AdditionalWorkingDirectory,
    PermissionContext,
    PermissionEngine,
    PermissionMode,
    PermissionRule,
)
from agent_core.permission.types import PermissionBehavior
from agent_core.state import ReadCacheEntry, ToolContext
from agent_core.tool import Bash, Edit, Glob, Grep, Read, TaskCreate, ToolChunk, Write
from agent_core.tool.builtin._base import BuiltinTool
from agent_core.tool.builtin.runner import WorkspaceToolRunner, workspace_tools
from agent_core.tool.execution import ToolInvocation, ToolOutput, final_error
from tests.unit.agent_core.tools._helpers import Runner


class ScriptedExecutor:
    """Runs calls with a `WorkspaceToolRunner`, records them, and can answer with a script."""

    def __init__(self) -> None:
        self.runner = WorkspaceToolRunner()
        self.invocations: list[ToolInvocation] = []
        self.script: list[ToolOutput] | None = None
        self.closed: list[str] = []

    async def execute(self, invocation: ToolInvocation) -> AsyncGenerator[ToolOutput, None]:
        self.invocations.append(invocation)
        try:
            if self.script is not None:
                for output in self.script:
                    yield output
                return
            async for output in self.runner.execute(invocation):
                yield output
        finally:
            self.closed.append(invocation.call_id)


@pytest.fixture
def executor() -> ScriptedExecutor:
    return ScriptedExecutor()


@pytest.fixture
def bound(ws: Path, executor: ScriptedExecutor) -> Runner:
    return Runner(*(tool.bind(executor) for tool in workspace_tools(ws)))


async def test_calls_run_through_the_executor(
    ws: Path, executor: ScriptedExecutor, bound: Runner
) -> None:
    written = await bound("Write", file_path="src/a.py", content="print('hi')\n")
    found = await bound("Glob", pattern="**/*.py")
    grepped = await bound("Grep", pattern="hi", output_mode="content")
    echoed = await bound("Bash", command="cat src/a.py")

    assert [r.ok for r in (written, found, grepped, echoed)] == [True] * 4
    assert str(ws / "src/a.py") in found.text
    assert "print('hi')" in grepped.text
    assert echoed.text == "print('hi')\n"
    assert [i.tool for i in executor.invocations] == ["Write", "Glob", "Grep", "Bash"]
    assert {i.cwd for i in executor.invocations} == {str(ws)}
    # Validated arguments travel as given: defaults stay with the tool where it runs.
    assert executor.invocations[-1].arguments == {"command": "cat src/a.py"}
    # Only the tools that use the agent state send it.
    assert [i.tool_context is not None for i in executor.invocations] == [
        True,
        False,
        False,
        False,
    ]


async def test_the_read_cache_comes_back_and_goes_out(ws: Path, bound: Runner) -> None:
    (ws / "notes.txt").write_text("one\n")

    refused = await bound("Edit", file_path="notes.txt", old_string="one", new_string="two")
    read = await bound("Read", file_path="notes.txt")
    edited = await bound("Edit", file_path="notes.txt", old_string="one", new_string="two")

    assert not refused.ok
    assert read.ok
    assert edited.ok, edited.text
    assert (ws / "notes.txt").read_text() == "two\n"
    [entry] = bound.state.tool_context.read_file_cache
    assert entry.file_path == str(ws / "notes.txt")


async def test_the_tool_state_after_the_final_chunk_is_applied(
    ws: Path, executor: ScriptedExecutor, bound: Runner
) -> None:
    # The caller stops reading at the final chunk: the state frame behind it must not be lost.
    entry = ReadCacheEntry(file_path=str(ws / "x"), lines=["x\n"], updated_at=1.0, bytes=2.0)
    executor.script = [
        ToolOutput(chunk=ToolChunk(content=[TextBlock(text="partial ")])),
        final_error("scripted failure"),
        ToolOutput(tool_context=ToolContext(read_file_cache=[entry])),
    ]

    result = await bound("Read", file_path="x")

    assert result.text == "partial scripted failure"
    assert result.state is ToolResultState.ERROR
    assert bound.state.tool_context.read_file_cache == [entry]


async def test_invalid_arguments_never_reach_the_executor(
    executor: ScriptedExecutor, bound: Runner
) -> None:
    missing = await bound("Write", file_path="a.txt")
    negative = await bound("Bash", command="true", timeout=-1)

    assert not missing.ok
    assert "content" in missing.text
    assert not negative.ok
    assert "timeout" in negative.text
    assert executor.invocations == []


async def test_closing_the_call_closes_the_executor_stream(
    ws: Path, executor: ScriptedExecutor
) -> None:
    bash = Bash(ws).bind(executor)
    stream = bash(command="echo started; sleep 600")

    async for chunk in stream:
        assert "started" in "".join(b.text for b in chunk.content if isinstance(b, TextBlock))
        break
    await stream.aclose()

    assert executor.closed == [executor.invocations[0].call_id]


async def test_unbinding_runs_calls_here_again(ws: Path, executor: ScriptedExecutor) -> None:
    bash = Bash(ws).bind(executor).bind(None)

    result = await Runner(bash)("Bash", command="echo here")

    assert result.text == "here\n"
    assert executor.invocations == []


def test_bind_needs_a_workspace(executor: ScriptedExecutor) -> None:
    task = TaskCreate()

    with pytest.raises(ValueError, match="'TaskCreate' has no workspace"):
        task.bind(executor)
    assert task.bind(None) is task


# --- the permission hooks do not change -------------------------------------------------------


def context(ws: Path, mode: PermissionMode = PermissionMode.DEFAULT) -> PermissionContext:
    ctx = PermissionContext(
        mode=mode, working_directories={"ws": AdditionalWorkingDirectory(path=str(ws))}
    )
    rule = PermissionRule(tool_name="Bash", rule_content="git status:*", behavior="allow")
    ctx.allow_rules["Bash"] = [rule]
    return ctx


CALLS: list[tuple[type[BuiltinTool[Any]], dict[str, Any]]] = [
    (Bash, {"command": "git status"}),
    (Bash, {"command": "rm -rf /"}),
    (Bash, {"command": "cat ../secret && curl example.com"}),
    (Read, {"file_path": "../outside.txt"}),
    (Read, {"file_path": "notes.txt"}),
    (Write, {"file_path": ".env", "content": "x"}),
    (Write, {"file_path": "src/a.py", "content": "x"}),
    (Edit, {"file_path": "src/a.py", "old_string": "a", "new_string": "b"}),
    (Glob, {"pattern": "../**/*.key"}),
    (Grep, {"pattern": "password", "path": "/etc"}),
]


@pytest.mark.parametrize(
    ("tool_class", "tool_input"), CALLS, ids=[f"{c.__name__}:{i}" for c, i in CALLS]
)
@pytest.mark.parametrize("mode", [PermissionMode.DEFAULT, PermissionMode.ACCEPT_EDITS])
async def test_permission_hooks_are_unchanged_by_binding(
    ws: Path,
    executor: ScriptedExecutor,
    tool_class: type[BuiltinTool[Any]],
    tool_input: dict[str, Any],
    mode: PermissionMode,
) -> None:
    here = tool_class(ws)
    bound = tool_class(ws).bind(executor)
    ctx = context(ws, mode)

    async def hooks(tool: BuiltinTool[Any]) -> list[Any]:
        return [
            await tool.check_permissions(tool_input, ctx),
            await tool.check_read_only(tool_input),
            tool.match_rule("src/**", tool_input),
            tool.generate_suggestions(tool_input),
            tool.rule_subjects(tool_input),
            tool.read_paths(tool_input),
            await PermissionEngine(ctx).decide(tool, tool_input),
        ]

    assert await hooks(bound) == await hooks(here)
    assert bound.schema() == here.schema()
    assert executor.invocations == []  # deciding never runs anything


async def test_a_bound_tool_is_still_decided_before_it_runs(
    ws: Path, executor: ScriptedExecutor
) -> None:
    engine = PermissionEngine(context(ws))
    bash = Bash(ws).bind(executor)

    allowed = await engine.decide(bash, {"command": "git status --short"})
    asked = await engine.decide(bash, {"command": "rm -rf /"})

    assert allowed.behavior is PermissionBehavior.ALLOW
    assert (asked.behavior, asked.bypass_immune) == (PermissionBehavior.ASK, True)
