"""The schedule tools of a session: ScheduleCreate, ScheduleList, ScheduleView, ScheduleDelete.

An agent schedules itself: a schedule it creates runs the same agent, with the session's chat
model, and records the session it came from. The tools go through `ScheduleService`, the same
door as `/schedule/`, so the records are scoped by the session's user and the scheduler is told
about every change. The service offers them as the `schedule_tools` tool group (activated with
`reset_tools`), and only to sessions that have a chat model. Names, argument schemas and
behaviour follow AgentScope 2.0.11 (the descriptions are our own words).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from actors.errors import NotFound
from actors.schedules.cron import cron_trigger
from actors.schedules.store import ScheduleData, ScheduleRecord, ScheduleSource
from actors.storage.records import ChatModelConfig
from agent_core.message import TextBlock, ToolResultState
from agent_core.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionMode,
)
from agent_core.state import AgentState
from agent_core.tool import ToolBase, ToolChunk, ToolGroup

if TYPE_CHECKING:
    from actors.schedules.service import ScheduleService

SCHEDULE_GROUP = "schedule_tools"
SCHEDULE_GROUP_DESCRIPTION = """Tools for cron schedules. A schedule is a recurring task: each \
time it fires, a session is opened (or reused, for a stateful schedule) and you are asked to \
carry out the task on your own.

## When to activate this group
- To create a schedule that fires at a given time or interval.
- To list, inspect or delete existing schedules.
"""


@dataclass
class ScheduleContext:
    """What the schedule tools of one session work with."""

    service: ScheduleService
    user_id: str
    agent_id: str
    session_id: str
    chat_model_config: ChatModelConfig


def _done(text: str, *, error: bool = False) -> ToolChunk:
    state = ToolResultState.ERROR if error else ToolResultState.SUCCESS
    return ToolChunk(content=[TextBlock(text=text)], state=state, is_last=True)


def next_run(record: ScheduleRecord, now: datetime | None = None) -> str:
    """When the schedule fires next (ISO, UTC), or why it will not."""
    data = record.data
    if not data.enabled:
        return "not scheduled (disabled)"
    now = now or datetime.now(UTC)
    start = max(now, data.started_at)
    due = cron_trigger(data.cron_expression, data.timezone).get_next_fire_time(None, start)
    if due is None or (data.ended_at is not None and due > data.ended_at):
        return "not scheduled (ended)"
    return str(due.astimezone(UTC).isoformat())


class _ScheduleTool(ToolBase):
    """Managing one's own schedules is never gated by permissions (the user owns them all)."""

    def __init__(self, ctx: ScheduleContext) -> None:
        self.ctx = ctx

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        """Always allowed."""
        return PermissionDecision(
            behavior=PermissionBehavior.ALLOW, message=f"{self.name} is always allowed."
        )


def _optional_time(description: str) -> dict[str, Any]:
    return {
        "anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}],
        "default": None,
        "description": description,
    }


class ScheduleCreate(_ScheduleTool):
    """Create a schedule that runs this agent on a cron."""

    name = "ScheduleCreate"
    description = """Create a recurring scheduled task for yourself. Each time it fires you \
are told, in a new session, to carry out its task.

**The cron expression**
- Find out the user's time zone first (ask, or run `date +%z`): the expression is evaluated in \
`timezone`.
- Decide whether the task runs once or recurs. For a one-off task, check the current time and \
set the expression to fire at that one moment; use `started_at` / `ended_at` to bound it.
- When in doubt about the timing, ask the user before creating the schedule.

**The description**
It is all you will know when the schedule fires in a new session: state the goal, the expected \
output, constraints, relevant paths and anything else needed to do the task on your own.
"""
    input_schema: dict[str, Any] = {  # noqa: RUF012 - read-only class-level schema
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The schedule's display name."},
            "description": {
                "type": "string",
                "default": "",
                "description": "The task to carry out when the schedule fires, with its purpose.",
            },
            "cron_expression": {
                "type": "string",
                "description": "A standard 5-field cron expression, e.g. '0 9 * * 1-5'.",
            },
            "timezone": {
                "type": "string",
                "default": "UTC",
                "description": "IANA time zone the expression is evaluated in, e.g. "
                "'America/New_York' or 'Asia/Shanghai'.",
            },
            "enabled": {
                "type": "boolean",
                "default": True,
                "description": "Whether the schedule is active once created.",
            },
            "started_at": _optional_time(
                "ISO-8601 time from which the schedule may fire (default: now)."
            ),
            "ended_at": _optional_time(
                "ISO-8601 time after which it never fires (default: never ends)."
            ),
            "stateful": {
                "type": "boolean",
                "default": False,
                "description": "True: every fire continues in one session. False: each fire "
                "gets a fresh session.",
            },
            "permission_mode": {
                "type": "string",
                "enum": [mode.value for mode in PermissionMode],
                "default": PermissionMode.DONT_ASK.value,
                "description": "Permission mode of the scheduled runs. Defaults to 'dont_ask': "
                "nobody is there to answer a question. 'bypass' needs this session to run in "
                "bypass mode itself.",
            },
        },
        "required": ["name", "cron_expression"],
    }
    is_state_injected = True

    async def __call__(
        self,
        name: str,
        cron_expression: str,
        description: str = "",
        timezone: str = "UTC",
        enabled: bool = True,
        started_at: str | None = None,
        ended_at: str | None = None,
        stateful: bool = False,
        permission_mode: str = PermissionMode.DONT_ASK.value,
        _agent_state: AgentState | None = None,
        **_: Any,
    ) -> AsyncIterator[ToolChunk]:
        """Store the schedule and start timing it."""
        mode = PermissionMode(permission_mode)
        current = _agent_state.permission_context.mode if _agent_state is not None else None
        if mode is PermissionMode.BYPASS and current is not PermissionMode.BYPASS:
            yield _done(
                "A schedule may run in 'bypass' mode only if this session runs in bypass mode "
                "itself. Use 'dont_ask' (the default) or ask the user to change the mode.",
                error=True,
            )
            return
        fields: dict[str, Any] = {
            "name": name,
            "description": description,
            "cron_expression": cron_expression,
            "timezone": timezone,
            "enabled": enabled,
            "ended_at": ended_at,
            "stateful": stateful,
            "permission_mode": mode,
            "source": ScheduleSource.AGENT,
            "source_session_id": self.ctx.session_id,
            "chat_model_config": self.ctx.chat_model_config,
        }
        if started_at is not None:
            fields["started_at"] = started_at
        try:
            data = ScheduleData.model_validate(fields)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'schedule'}: {e['msg']}"
                for e in exc.errors(include_url=False)
            )
            yield _done(f"Invalid schedule: {problems}", error=True)
            return
        record = await self.ctx.service.create(self.ctx.user_id, self.ctx.agent_id, data)
        yield _done(
            f"Schedule {name!r} created.\n"
            f"Schedule ID: {record.id}\n"
            f"Cron: {cron_expression} (timezone: {timezone})\n"
            f"Enabled: {enabled}\n"
            f"Started at: {record.data.started_at.isoformat()}\n"
            f"Ended at: {ended_at or '(no end time)'}\n"
            f"Stateful: {stateful}\n"
            f"Next run: {next_run(record)}"
        )


class ScheduleList(_ScheduleTool):
    """List the user's schedules."""

    name = "ScheduleList"
    description = (
        "List every scheduled task of the current user: id, name, cron expression, time zone, "
        "next run time, whether it is enabled and whether it is stateful."
    )
    input_schema: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012
    is_concurrency_safe = True
    is_read_only = True

    async def __call__(self, **_: Any) -> AsyncIterator[ToolChunk]:
        """Render the user's schedules, oldest first."""
        records = await self.ctx.service.list_schedules(self.ctx.user_id)
        if not records:
            yield _done("No scheduled tasks found.")
            return
        lines = [f"Found {len(records)} scheduled task(s):\n"]
        for record in records:
            data = record.data
            state = "enabled" if data.enabled else "disabled"
            lines.append(
                f"- [{state}] {data.name!r}  (ID: {record.id})\n"
                f"  Cron:      {data.cron_expression} ({data.timezone})\n"
                f"  Next run:  {next_run(record)}\n"
                f"  Stateful:  {data.stateful}  |  Agent: {record.agent_id}\n"
                f"  Source:    {data.source.value}\n"
            )
        yield _done("\n".join(lines))


def _schedule_id_schema(description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"schedule_id": {"type": "string", "description": description}},
        "required": ["schedule_id"],
    }


class ScheduleView(_ScheduleTool):
    """Show one schedule in full."""

    name = "ScheduleView"
    description = (
        "View everything about one scheduled task, by its schedule ID: cron expression, time "
        "zone, whether it is stateful, its permission mode and its next run time."
    )
    input_schema = _schedule_id_schema("The schedule ID.")
    is_concurrency_safe = True
    is_read_only = True

    async def __call__(self, schedule_id: str, **_: Any) -> AsyncIterator[ToolChunk]:
        """Render the schedule, or report that the user has no such schedule."""
        try:
            record = await self.ctx.service.get(self.ctx.user_id, schedule_id)
        except NotFound:
            yield _done(f"No schedule with id {schedule_id!r}.", error=True)
            return
        data = record.data
        yield _done(
            f"Schedule ID:     {record.id}\n"
            f"Name:            {data.name}\n"
            f"Description:     {data.description or '(none)'}\n"
            f"Status:          {'enabled' if data.enabled else 'disabled'}\n"
            f"Cron:            {data.cron_expression} (timezone: {data.timezone})\n"
            f"Next run:        {next_run(record)}\n"
            f"Stateful:        {data.stateful}\n"
            f"Permission mode: {data.permission_mode.value}\n"
            f"Source:          {data.source.value}\n"
            f"Source session:  {data.source_session_id or '(none)'}\n"
            f"Agent ID:        {record.agent_id}\n"
            f"Created at:      {record.created_at}\n"
            f"Updated at:      {record.updated_at}\n"
        )


class ScheduleDelete(_ScheduleTool):
    """Delete a schedule and the sessions it fired into."""

    name = "ScheduleDelete"
    description = (
        "Delete a scheduled task for good, by its schedule ID: it never fires again, its "
        "record is removed, and so are the sessions it fired into (this one excepted)."
    )
    input_schema = _schedule_id_schema("The ID of the schedule to delete for good.")

    async def __call__(self, schedule_id: str, **_: Any) -> AsyncIterator[ToolChunk]:
        """Delete the schedule through the service (which stops timing it)."""
        try:
            await self.ctx.service.delete(
                self.ctx.user_id, schedule_id, keep_session=self.ctx.session_id
            )
        except NotFound:
            yield _done(f"No schedule with id {schedule_id!r}.", error=True)
            return
        yield _done(f"Schedule {schedule_id!r} has been deleted for good.")


def schedule_group(ctx: ScheduleContext) -> ToolGroup:
    """The `schedule_tools` group of a session."""
    tools: list[ToolBase] = [
        ScheduleCreate(ctx),
        ScheduleView(ctx),
        ScheduleDelete(ctx),
        ScheduleList(ctx),
    ]
    return ToolGroup(
        name=SCHEDULE_GROUP,
        description=SCHEDULE_GROUP_DESCRIPTION,
        tools=tools,
    )
