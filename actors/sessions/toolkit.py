"""The toolkit of a service session: its own tools plus what its workspace provides.

Assembled per reply, like AgentScope 2.0.11's Agent Service does it: the workspace's tools, the
task list, `ToolStop` for calls running in the background, the team tools of the session's
role (plus `AgentInvite` when the user has invitable agents), and — for a session with a chat
model — the schedule tools as the `schedule_tools` group, which brings the `reset_tools` meta
tool along.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from actors.schedules.tools import ScheduleContext, schedule_group
from actors.sessions.hints import InboxBackgroundSink
from actors.storage.records import AgentRecord, SessionRecord, TeamRole
from actors.teams.invite import AgentInvite
from actors.teams.tools import TeamContext, team_tools
from agent_core.message import TextBlock, ToolResultState
from agent_core.permission import PermissionBehavior, PermissionContext, PermissionDecision
from agent_core.tool import (
    TaskCreate,
    TaskGet,
    TaskList,
    TaskUpdate,
    ToolBase,
    ToolChunk,
    ToolGroup,
    Toolkit,
)


class CurrentTime(ToolBase):
    """Tells the current date and time; harmless, so it never needs permission."""

    name = "get_current_time"
    description = "Return the current date and time in an IANA time zone (default UTC)."
    input_schema: dict[str, Any] = {  # noqa: RUF012 - read-only class-level schema
        "type": "object",
        "properties": {
            "timezone": {"type": "string", "description": 'IANA zone, e.g. "Europe/Paris".'}
        },
    }
    is_concurrency_safe = True
    is_read_only = True

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        """Always allowed: reading the clock changes nothing."""
        return PermissionDecision(behavior=PermissionBehavior.ALLOW, reason="harmless")

    async def __call__(self, timezone: str = "UTC", **_: Any) -> AsyncIterator[ToolChunk]:
        """Yield the time, or an error naming an unknown zone."""
        try:
            now = datetime.now(ZoneInfo(timezone)).isoformat(timespec="seconds")
        except (ZoneInfoNotFoundError, ValueError):
            yield ToolChunk(
                content=[TextBlock(text=f"Unknown time zone {timezone!r}.")],
                state=ToolResultState.ERROR,
                is_last=True,
            )
            return
        yield ToolChunk(content=[TextBlock(text=now)], state=ToolResultState.SUCCESS, is_last=True)


class ToolStop(ToolBase):
    """Stops a tool call that is running in the background (this session's own only)."""

    name = "ToolStop"
    description = (
        "Stop a tool call that is running in the background, by the id its placeholder "
        "result gave. Use it to cancel a call you no longer need; a stopped call reports nothing."
    )
    input_schema: dict[str, Any] = {  # noqa: RUF012 - read-only class-level schema
        "type": "object",
        "properties": {
            "task_id": {
                "type": "string",
                "description": "The id of the background tool call to stop.",
            }
        },
        "required": ["task_id"],
    }
    is_concurrency_safe = True

    def __init__(self, sink: InboxBackgroundSink) -> None:
        """Bind to the session's background calls."""
        self._sink = sink

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        """Always allowed: it only stops what this session started."""
        return PermissionDecision(
            behavior=PermissionBehavior.ALLOW, message="ToolStop is always allowed."
        )

    async def __call__(self, task_id: str, **_: Any) -> AsyncIterator[ToolChunk]:
        """Cancel the call, or say which calls are running."""
        if self._sink.stop(task_id):
            yield _result(f"Task {task_id} stopped.")
            return
        running = ", ".join(self._sink.running) or "none"
        yield _result(
            f"No tool call {task_id!r} is running in the background (running: {running}).",
            error=True,
        )


def _result(text: str, *, error: bool = False) -> ToolChunk:
    state = ToolResultState.ERROR if error else ToolResultState.SUCCESS
    return ToolChunk(content=[TextBlock(text=text)], state=state, is_last=True)


@dataclass
class SessionTools:
    """What a session's service tools are bound to for one reply."""

    session: SessionRecord
    team: TeamContext
    background: InboxBackgroundSink
    schedules: ScheduleContext | None = None
    invitable: Sequence[AgentRecord] = ()


def session_toolkit(workspace_tools: Sequence[ToolBase], bound: SessionTools) -> Toolkit:
    """A fresh toolkit for one reply of `bound.session`."""
    tools: list[ToolBase] = [
        *workspace_tools,
        TaskCreate(),
        TaskList(),
        TaskGet(),
        TaskUpdate(),
        CurrentTime(),
        ToolStop(bound.background),
        *team_tools(bound.team, bound.session.membership),
    ]
    membership = bound.session.membership
    # Like the leader's other tools, AgentInvite is offered to any non-worker and checks at
    # call time that the session leads a team; without invitable agents its enum would be empty.
    if bound.invitable and (membership is None or membership.role is not TeamRole.WORKER):
        tools.append(AgentInvite(bound.team, list(bound.invitable)))
    groups: list[ToolGroup] = []
    if bound.schedules is not None and bound.session.config.chat_model_config is not None:
        groups.append(schedule_group(bound.schedules))
    return Toolkit(tools, tool_groups=groups)
