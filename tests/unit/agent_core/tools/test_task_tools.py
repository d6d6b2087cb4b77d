"""The Task* tools: a task list kept in the agent state."""

from __future__ import annotations

import pytest

from agent_core.permission.types import PermissionBehavior, PermissionContext
from agent_core.tool import TaskCreate, TaskGet, TaskList, TaskUpdate
from tests.unit.agent_core.tools._helpers import Runner


@pytest.fixture
def run() -> Runner:
    return Runner(TaskCreate(), TaskGet(), TaskList(), TaskUpdate())


async def create(run: Runner, subject: str) -> str:
    result = await run("TaskCreate", subject=subject, description=f"do {subject}")
    assert result.ok
    task_id: str = result.metadata["task_id"]
    return task_id


async def test_create_get_and_list(run: Runner) -> None:
    empty = await run("TaskList")
    first = await create(run, "Write tests")
    result = await run("TaskCreate", subject="Ship", description="release", metadata={"v": 2})
    second = result.metadata["task_id"]

    assert empty.text == "No tasks yet."
    assert result.text == f"Task #{second} created: Ship"
    assert [t.subject for t in run.state.tasks_context.tasks] == ["Write tests", "Ship"]
    listing = await run("TaskList")
    assert listing.text == f"#{first} [pending] Write tests\n#{second} [pending] Ship"
    got = await run("TaskGet", task_id=second)
    assert (
        got.text
        == f"Task #{second}: Ship\nStatus: pending\nDescription: release\nMetadata: {{'v': 2}}"
    )


async def test_update_fields_status_and_metadata(run: Runner) -> None:
    task_id = await create(run, "Refactor")
    await run("TaskUpdate", task_id=task_id, metadata={"keep": 1, "drop": 2})

    result = await run(
        "TaskUpdate",
        task_id=f"#{task_id}",
        status="in_progress",
        owner="worker-1",
        subject="Refactor the parser",
        metadata={"drop": None, "new": "x"},
    )

    assert result.ok
    assert result.text == f"Updated task #{task_id}: metadata, owner, status, subject."
    [task] = run.state.tasks_context.tasks
    assert (task.state, task.owner, task.subject) == (
        "in_progress",
        "worker-1",
        "Refactor the parser",
    )
    assert task.metadata == {"keep": 1, "new": "x"}
    listing = await run("TaskList")
    assert listing.text == f"#{task_id} [in_progress] Refactor the parser (owner: worker-1)"


async def test_dependencies_block_until_completed(run: Runner) -> None:
    setup = await create(run, "Set up")
    build = await create(run, "Build")
    deploy = await create(run, "Deploy")

    await run("TaskUpdate", task_id=setup, add_blocks=[build])
    await run("TaskUpdate", task_id=deploy, add_blocked_by=[build, setup])

    tasks = {t.id: t for t in run.state.tasks_context.tasks}
    assert tasks[setup].blocks == [build, deploy]
    assert tasks[deploy].blocked_by == [build, setup]
    listing = await run("TaskList")
    assert f"#{deploy} [pending] Deploy [blocked by #{build}, #{setup}]" in listing.text

    done = await run("TaskUpdate", task_id=setup, status="completed")

    assert "Call TaskList" in done.text
    got = await run("TaskGet", task_id=deploy)
    assert f"Blocked by: #{build}\n" in got.text + "\n"


async def test_invalid_dependencies_change_nothing(run: Runner) -> None:
    a = await create(run, "A")
    b = await create(run, "B")
    await run("TaskUpdate", task_id=a, add_blocks=[b])

    cycle = await run("TaskUpdate", task_id=b, add_blocks=[a])
    itself = await run("TaskUpdate", task_id=a, add_blocked_by=[a])
    unknown = await run("TaskUpdate", task_id=a, add_blocks=["nope"], status="completed")

    assert "dependency cycle" in cycle.text
    assert "cannot block itself" in itself.text
    assert "#nope does not exist" in unknown.text
    assert not any(r.ok for r in (cycle, itself, unknown))
    tasks = {t.id: t for t in run.state.tasks_context.tasks}
    assert (tasks[a].blocks, tasks[a].blocked_by, tasks[a].state) == ([b], [], "pending")
    assert (tasks[b].blocks, tasks[b].blocked_by) == ([], [a])


async def test_delete_removes_the_task_and_its_edges(run: Runner) -> None:
    a = await create(run, "A")
    b = await create(run, "B")
    await run("TaskUpdate", task_id=a, add_blocks=[b])

    result = await run("TaskUpdate", task_id=a, status="deleted")

    assert result.text == f"Task #{a} deleted."
    [task] = run.state.tasks_context.tasks
    assert (task.id, task.blocked_by) == (b, [])


async def test_unknown_task_and_empty_update(run: Runner) -> None:
    task_id = await create(run, "A")

    missing = await run("TaskGet", task_id="zzz")
    nothing = await run("TaskUpdate", task_id=task_id)
    invalid = await run("TaskUpdate", task_id=task_id, status="done")

    assert not missing.ok
    assert missing.text == "Task #zzz does not exist."
    assert nothing.ok
    assert "no field was given" in nothing.text
    assert not invalid.ok


async def test_task_tools_are_allowed_and_flagged() -> None:
    decision = await TaskCreate().check_permissions({}, PermissionContext())

    assert decision.behavior is PermissionBehavior.ALLOW
    assert all(t.is_state_injected for t in (TaskCreate(), TaskGet(), TaskList(), TaskUpdate()))
    assert (TaskGet().is_read_only, TaskList().is_read_only) == (True, True)
    assert (TaskCreate().is_read_only, TaskUpdate().is_read_only) == (False, False)
    assert set(TaskUpdate().input_schema["properties"]) == {
        "task_id", "subject", "description", "status", "owner", "metadata", "add_blocks",
        "add_blocked_by",
    }  # fmt: skip
