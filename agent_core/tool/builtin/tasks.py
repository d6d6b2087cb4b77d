"""`TaskCreate`, `TaskGet`, `TaskList`, `TaskUpdate`: the agent's own task list.

The tasks live in the agent state (`tasks_context.tasks`), so they persist with the session.
Dependencies are kept symmetric (`a.blocks` holds `b` exactly when `b.blocked_by` holds `a`)
and acyclic; a completed blocker no longer counts as blocking.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Literal

from pydantic import Field

from agent_core.permission.types import PermissionBehavior, PermissionContext, PermissionDecision
from agent_core.state import AgentState, Task
from agent_core.tool.base import ToolChunk
from agent_core.tool.builtin._base import P, StatefulTool, ToolInput, done, input_schema


class _TaskTool(StatefulTool[P]):
    """A task tool: it only touches the agent's own task list, so it never needs asking."""

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        """Always allow: the task list is the agent's private bookkeeping."""
        return PermissionDecision(
            behavior=PermissionBehavior.ALLOW, message="Task tools only change the task list."
        )


def _find(state: AgentState, task_id: str) -> Task | None:
    key = task_id.removeprefix("#")
    return next((task for task in state.tasks_context.tasks if task.id == key), None)


def _open_blockers(state: AgentState, task: Task) -> list[str]:
    """Ids of the tasks still blocking `task` (completed ones no longer do)."""
    return [i for i in task.blocked_by if (b := _find(state, i)) and b.state != "completed"]


class TaskCreateInput(ToolInput):
    """Arguments of `TaskCreate`."""

    subject: str = Field(min_length=1, description="A brief, imperative title for the task.")
    description: str = Field(description="What needs to be done.")
    metadata: dict[str, Any] | None = Field(
        default=None, description="Arbitrary data to attach to the task."
    )


class TaskCreate(_TaskTool[TaskCreateInput]):
    """Add a pending task to the agent's task list."""

    name = "TaskCreate"
    description = (
        "Create a task in your task list to plan and track multi-step work (3 or more "
        "steps), or when the user gives you several things to do. Skip it for a single, "
        "trivial task. Tasks start as pending; use TaskUpdate to mark one in_progress before "
        "you start it and completed when it is fully done, and to record dependencies. Check "
        "TaskList first to avoid duplicates."
    )
    input_model = TaskCreateInput
    input_schema = input_schema(TaskCreateInput)

    async def run(self, params: TaskCreateInput, state: AgentState) -> AsyncIterator[ToolChunk]:
        """Append the new task."""
        task = Task(
            subject=params.subject, description=params.description, metadata=params.metadata or {}
        )
        state.tasks_context.tasks.append(task)
        yield done(f"Task #{task.id} created: {task.subject}", task_id=task.id)


class TaskGetInput(ToolInput):
    """Arguments of `TaskGet`."""

    task_id: str = Field(description="The id of the task to show.")


class TaskGet(_TaskTool[TaskGetInput]):
    """Show one task in full."""

    name = "TaskGet"
    description = (
        "Show a task in full: subject, status, description, owner, what blocks it and what "
        "it blocks. Read a task before starting or updating it; start only when nothing "
        "blocks it."
    )
    input_model = TaskGetInput
    input_schema = input_schema(TaskGetInput)
    is_concurrency_safe = True
    is_read_only = True

    async def run(self, params: TaskGetInput, state: AgentState) -> AsyncIterator[ToolChunk]:
        """Describe the task."""
        task = _find(state, params.task_id)
        if task is None:
            yield done(f"Task #{params.task_id} does not exist.", error=True)
            return
        lines = [
            f"Task #{task.id}: {task.subject}",
            f"Status: {task.state}",
            f"Description: {task.description}",
        ]
        if task.owner:
            lines.append(f"Owner: {task.owner}")
        if blockers := _open_blockers(state, task):
            lines.append("Blocked by: " + ", ".join(f"#{i}" for i in blockers))
        if task.blocks:
            lines.append("Blocks: " + ", ".join(f"#{i}" for i in task.blocks))
        if task.metadata:
            lines.append(f"Metadata: {task.metadata}")
        yield done("\n".join(lines))


class TaskListInput(ToolInput):
    """`TaskList` takes no arguments."""


class TaskList(_TaskTool[TaskListInput]):
    """List every task with its status."""

    name = "TaskList"
    description = (
        "List all tasks: id, status, subject, owner and open blockers. Use it to see "
        "progress and to pick the next task (pending, unowned, not blocked; lowest id first)."
    )
    input_model = TaskListInput
    input_schema = input_schema(TaskListInput)
    is_concurrency_safe = True
    is_read_only = True

    async def run(self, params: TaskListInput, state: AgentState) -> AsyncIterator[ToolChunk]:
        """Summarise the task list, one task per line."""
        if not state.tasks_context.tasks:
            yield done("No tasks yet.")
            return
        lines: list[str] = []
        for task in state.tasks_context.tasks:
            line = f"#{task.id} [{task.state}] {task.subject}"
            if task.owner:
                line += f" (owner: {task.owner})"
            if blockers := _open_blockers(state, task):
                line += " [blocked by " + ", ".join(f"#{i}" for i in blockers) + "]"
            lines.append(line)
        yield done("\n".join(lines))


class TaskUpdateInput(ToolInput):
    """Arguments of `TaskUpdate`."""

    task_id: str = Field(description="The id of the task to update.")
    subject: str | None = Field(default=None, min_length=1, description="New subject.")
    description: str | None = Field(default=None, description="New description.")
    status: Literal["pending", "in_progress", "completed", "deleted"] | None = Field(
        default=None, description="New status; 'deleted' removes the task."
    )
    owner: str | None = Field(default=None, description="New owner (an agent name).")
    metadata: dict[str, Any] | None = Field(
        default=None, description="Keys to merge into the metadata; a null value deletes a key."
    )
    add_blocks: list[str] | None = Field(
        default=None, description="Ids of tasks that cannot start until this one is completed."
    )
    add_blocked_by: list[str] | None = Field(
        default=None, description="Ids of tasks that must be completed before this one."
    )


def _reaches(state: AgentState, start: str, target: str) -> bool:
    """Whether `target` is reachable from `start` along `blocks` edges."""
    seen: set[str] = set()
    pending = [start]
    while pending:
        current = pending.pop()
        if current == target:
            return True
        if current not in seen and (task := _find(state, current)):
            seen.add(current)
            pending.extend(task.blocks)
    return False


def _link(state: AgentState, edges: list[tuple[str, str]]) -> str | None:
    """Add `blocker -> blocked` edges, all or none; return why not, or None on success."""
    added: list[tuple[Task, Task]] = []
    problem: str | None = None
    for blocker_id, blocked_id in edges:
        blocker, blocked = _find(state, blocker_id), _find(state, blocked_id)
        if blocker is None or blocked is None:
            problem = f"Task #{blocker_id if blocker is None else blocked_id} does not exist."
            break
        if blocker is blocked:
            problem = f"Task #{blocker.id} cannot block itself."
            break
        if _reaches(state, blocked.id, blocker.id):
            problem = f"#{blocker.id} blocking #{blocked.id} would create a dependency cycle."
            break
        if blocked.id not in blocker.blocks:
            blocker.blocks.append(blocked.id)
            blocked.blocked_by.append(blocker.id)
            added.append((blocker, blocked))
    if problem is not None:
        for blocker, blocked in added:
            blocker.blocks.remove(blocked.id)
            blocked.blocked_by.remove(blocker.id)
    return problem


def _delete(state: AgentState, task: Task) -> None:
    state.tasks_context.tasks.remove(task)
    for other in state.tasks_context.tasks:
        other.blocks = [i for i in other.blocks if i != task.id]
        other.blocked_by = [i for i in other.blocked_by if i != task.id]


class TaskUpdate(_TaskTool[TaskUpdateInput]):
    """Change a task's fields, status or dependencies, or delete it."""

    name = "TaskUpdate"
    description = (
        "Update a task: status (pending -> in_progress -> completed, or deleted to remove "
        "it), subject, description, owner, metadata (merged; null deletes a key), and "
        "dependencies (add_blocks / add_blocked_by; no self-blocking, no cycles). Mark a task "
        "completed only when it is fully done (tests pass, nothing partial); otherwise keep "
        "it in_progress and create a task for the blocker."
    )
    input_model = TaskUpdateInput
    input_schema = input_schema(TaskUpdateInput)

    async def run(self, params: TaskUpdateInput, state: AgentState) -> AsyncIterator[ToolChunk]:
        """Apply the changes (dependencies first: if they are invalid nothing changes)."""
        task = _find(state, params.task_id)
        if task is None:
            yield done(f"Task #{params.task_id} does not exist.", error=True)
            return
        if params.status == "deleted":
            _delete(state, task)
            yield done(f"Task #{task.id} deleted.")
            return
        edges = [(task.id, i.removeprefix("#")) for i in params.add_blocks or []]
        edges += [(i.removeprefix("#"), task.id) for i in params.add_blocked_by or []]
        if problem := _link(state, edges):
            yield done(f"{problem} Task #{task.id} was not changed.", error=True)
            return
        changed = [name for name in ("add_blocks", "add_blocked_by") if getattr(params, name)]
        for name in ("subject", "description", "owner"):
            if (value := getattr(params, name)) is not None:
                setattr(task, name, value)
                changed.append(name)
        if params.status is not None:
            task.state = params.status
            changed.append("status")
        if params.metadata:
            for key, value in params.metadata.items():
                if value is None:
                    task.metadata.pop(key, None)
                else:
                    task.metadata[key] = value
            changed.append("metadata")
        if not changed:
            yield done(f"Nothing to update on task #{task.id}: no field was given.")
            return
        text = f"Updated task #{task.id}: {', '.join(sorted(changed))}."
        if task.state == "completed":
            text += " Call TaskList to find the next task."
        yield done(text)
