"""Runtime-state injection: a hint telling the agent the time, its open tasks, its context usage.

Before each reasoning step the agent may append a `HintBlock` (source
`InjectionConfig.injection_source`) to its reply, so it perceives what changes during a
conversation without the system prompt changing (prompt caching keeps working). The injection is
part of the persistent context on purpose: the agent sees how time passes between its steps.

What is injected, dimension by dimension (AgentScope's rules):

- **time**: when no earlier injection in the context records a time (first reply, or after a
  compression) or the recorded one is more than `time_interval` hours old;
- **tasks**: when tasks are pending or in progress and the context shows neither a task tool
  call nor an earlier tasks injection;
- **context length**: at the first step of a reply, when the prompt is within
  `ContextConfig.context_buffer_ratio` of the compression threshold;
- **tool error**: when the same tool call (same name and arguments) failed in the last
  `tool_retries_limit` results.

`extra_fields` ride along with any injection but never trigger one.
"""

from __future__ import annotations

import collections
import functools
import json
import logging
import re
from collections.abc import Sequence
from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import ConfigDict, Field, field_validator

from agent_core._trusted import trusted
from agent_core.agent._tokens import ContextUsage
from agent_core.deferred_model import DeferredModel
from agent_core.message import (
    HintBlock,
    Msg,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
)
from agent_core.state import AgentState

log = logging.getLogger(__name__)

RUNTIME_STATE_SOURCE = '{"label": "System", "sublabel": "Runtime State"}'
"""The source tag of runtime-state hints (web UIs label the hint "System - Runtime State")."""

COMPRESSION_TOOL_NAME = "CompressContext"

# The default texts are AgentScope's, kept verbatim so prompts read the same.
DEFAULT_TEMPLATE = (
    "<system-reminder>Treat the following as the ground truth at this point of the "
    "conversation. Anything stated earlier is outdated, and a later reminder, if any, "
    "supersedes this one:\n{runtime_state}\n</system-reminder>"
)
DEFAULT_TOOL_RETRIES_HINT = (
    "The last {count} calls to '{tool_name}' with the same arguments all failed. Stop retrying "
    "the same call as-is, check the error message and try a different approach."
)


class InjectionConfig(DeferredModel):
    """Which runtime state is injected into the context before reasoning, and how."""

    model_config = ConfigDict(extra="forbid")

    inject_runtime_state: bool = Field(
        default=True,
        title="Inject Runtime State",
        description=(
            "Inject the runtime state to context, including current time, tasks state, context "
            "length, etc."
        ),
    )
    timezone: str = Field(
        default="UTC",
        title="Timezone",
        description="The injected timezone. e.g. 'America/New_York' or 'Asia/Shanghai'.",
    )
    time_format: str = Field(
        default="%Y-%m-%dT%H:%M:%S",
        title="Time Format",
        description=(
            "The format to inject and parse the time information; it must carry the date part "
            "so the recorded time round-trips."
        ),
    )
    time_interval: float = Field(
        default=0.5,
        ge=0,
        title="Time Interval",
        description="The minimum hours since the last injected time before injecting it again.",
    )
    tool_retries_limit: int = Field(
        default=3,
        ge=3,
        title="Tool Retries Limit",
        description=(
            "The number of consecutive failures of the same tool call that triggers the tool "
            "error injection."
        ),
    )
    tool_retries_hint: str = Field(
        default=DEFAULT_TOOL_RETRIES_HINT,
        title="Tool Retries Hint",
        description=(
            "The hint injected when the same tool call keeps failing; '{tool_name}' and "
            "'{count}' are replaced by the tool name and the number of failures."
        ),
    )
    template: str = Field(
        default=DEFAULT_TEMPLATE,
        title="Template",
        description="Wraps the injected fields, which replace the '{runtime_state}' placeholder.",
    )
    injection_source: str = Field(
        default=RUNTIME_STATE_SOURCE,
        title="Injection Source",
        description=(
            "The source of the injected hint block, also used to find earlier injections in the "
            "context."
        ),
    )
    task_tool_names: list[str] = Field(
        default_factory=lambda: ["TaskCreate", "TaskGet", "TaskList", "TaskUpdate"],
        title="Task Tool Names",
        description="Task tools whose calls in the context suppress the tasks injection.",
    )
    extra_fields: dict[str, str] = Field(
        default_factory=dict,
        title="Extra Fields",
        description="Extra fields injected as '<{key}>{value}</{key}>' along with any injection.",
    )
    emit_hint_event: bool = Field(
        default=True,
        title="Emit Hint Event",
        description="Emit a HintBlockEvent when the runtime state is injected.",
    )

    @field_validator("template")
    @classmethod
    def _has_placeholder(cls, value: str) -> str:
        if "{runtime_state}" not in value:
            raise ValueError(
                f"the injection template must contain the '{{runtime_state}}' placeholder, "
                f"got {value!r}"
            )
        return value


def resolve_timezone(name: str) -> tzinfo:
    """The named timezone, or UTC when the name is unknown."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        log.warning("unknown timezone %r; using UTC", name)
        return UTC


_NO_TASKS: collections.Counter[str] = collections.Counter()


def runtime_state_hint(
    config: InjectionConfig,
    state: AgentState,
    usage: ContextUsage | None,
    compression_tool_enabled: bool = False,
    now: datetime | None = None,
) -> HintBlock | None:
    """The runtime-state hint to inject now, or None when nothing changed enough.

    Args:
        config: What to inject.
        state: The agent's state (context and tasks).
        usage: The prompt's size against the compression thresholds; None outside the first
            step of a reply (the context-length dimension is only checked there).
        compression_tool_enabled: Whether the agent may compress its context itself.
        now: The current time (default: the wall clock in `config.timezone`).
    """
    text = runtime_state_text(config, state, usage, compression_tool_enabled, now)
    if text is None:
        return None
    return trusted(HintBlock, source=config.injection_source, hint=text)


def runtime_state_text(
    config: InjectionConfig,
    state: AgentState,
    usage: ContextUsage | None,
    compression_tool_enabled: bool = False,
    now: datetime | None = None,
) -> str | None:
    """The text of the hint `runtime_state_hint` makes, or None when it makes none.

    For callers that build the hint's event rather than its block.
    """
    if not config.inject_runtime_state:
        return None
    now = now or datetime.now(_zone(config.timezone))
    tasks = state.tasks_context.tasks
    counts = collections.Counter(task.state for task in tasks) if tasks else _NO_TASKS
    open_tasks = bool(tasks) and (counts["pending"] > 0 or counts["in_progress"] > 0)
    last_time_text, aware_of_tasks = _scan(config, state.context, open_tasks)
    stale = _time_is_stale(config, last_time_text, now)
    near = usage is not None and usage.near_compression
    repeated = _repeated_tool_error(state.context, config.tool_retries_limit)
    if not (near or repeated or config.extra_fields or (open_tasks and not aware_of_tasks)):
        # Most injections tell the time alone: their text is the last one's while it reads the
        # same (`_formatted_time` keeps a second's text).
        return _time_only(config, _formatted_time(now, config.time_format)) if stale else None

    injections: dict[str, str] = {}
    if stale:
        injections["current-time"] = _formatted_time(now, config.time_format)
        injections["timezone"] = config.timezone
    if open_tasks and not aware_of_tasks:
        injections["tasks"] = (
            f"You have {counts['in_progress']} in-progress tasks and {counts['pending']} pending "
            "tasks. Use `TaskList` to view them if you don't know."
        )
    if usage is not None and near:
        hint = (
            f"Your current context contains {usage.total} tokens. When reaching "
            f"{int(usage.threshold)} tokens, your context will be compressed."
        )
        if compression_tool_enabled and counts["in_progress"] == 0:
            hint += (
                " No task is in progress, so judge by yourself whether the context should be "
                f"compressed now by calling `{COMPRESSION_TOOL_NAME}`."
            )
        injections["context-length"] = hint
    if repeated is not None:
        tool_name, count = repeated
        injections["tool-error"] = config.tool_retries_hint.replace(
            "{tool_name}", tool_name
        ).replace("{count}", str(count))

    if not injections:
        return None
    injections.update(config.extra_fields)
    return _render(config.template, injections)


def _render(template: str, injections: dict[str, str]) -> str:
    fields = "\n".join([f"<{key}>{value}</{key}>" for key, value in injections.items()])
    # replace, not format: other braces in the template stay as written
    return template.replace("{runtime_state}", fields)


# The last time-only hint: its time text, timezone and template, and its text.
_last_time_only: tuple[str, str, str, str] = ("", "", "", "")


def _time_only(config: InjectionConfig, time_text: str) -> str:
    """The text of a hint telling the time alone (no extra fields)."""
    global _last_time_only
    last_time, last_zone, last_template, text = _last_time_only
    if last_time == time_text and last_zone == config.timezone and last_template == config.template:
        return text
    text = _render(config.template, {"current-time": time_text, "timezone": config.timezone})
    _last_time_only = (time_text, config.timezone, config.template, text)
    return text


# Timezones resolved by name; unknown names are not kept, so that each use warns.
_zones: dict[str, tzinfo] = {}


def _zone(name: str) -> tzinfo:
    zone = _zones.get(name)
    if zone is None:
        zone = resolve_timezone(name)
        if zone is not UTC:
            _zones[name] = zone
    return zone


_last_time: tuple[tuple[object, ...], tzinfo | None, str] = ((), None, "")
"""The last formatted time: its second and format, its timezone, and the text."""


def _formatted_time(now: datetime, time_format: str) -> str:
    """`now.strftime(time_format)`, reused within a second unless the format shows fractions."""
    global _last_time
    if "%f" in time_format:
        return now.strftime(time_format)
    key = (now.second, now.minute, now.hour, now.day, now.month, now.year, time_format)
    last_key, last_zone, text = _last_time
    # The zone by identity: zones equal by offset may still print different names (%Z).
    if last_key == key and last_zone is now.tzinfo:
        return text
    text = now.strftime(time_format)
    _last_time = (key, now.tzinfo, text)
    return text


def _scan(
    config: InjectionConfig, context: Sequence[Msg], open_tasks: bool
) -> tuple[str | None, bool]:
    """The newest injection recording a time, and whether the agent already knows its tasks."""
    last_time_text: str | None = None
    aware_of_tasks = not open_tasks
    for msg in reversed(context):
        if last_time_text is not None and aware_of_tasks:
            break
        if msg.role != "assistant":
            continue
        for block in reversed(msg.content):
            if last_time_text is not None and aware_of_tasks:
                break
            if isinstance(block, HintBlock):
                if block.source == config.injection_source:
                    text = _hint_text(block)
                    if last_time_text is None and "<current-time>" in text:
                        last_time_text = text
                    if not aware_of_tasks and "<tasks>" in text:
                        aware_of_tasks = True
            elif (
                not aware_of_tasks
                and isinstance(block, ToolCallBlock)
                and block.name in config.task_tool_names
            ):
                aware_of_tasks = True
    return last_time_text, aware_of_tasks


def _hint_text(block: HintBlock) -> str:
    if isinstance(block.hint, str):
        return block.hint
    return "".join(item.text for item in block.hint if isinstance(item, TextBlock))


def _time_is_stale(config: InjectionConfig, last_time_text: str | None, now: datetime) -> bool:
    """Whether the time must be injected (none recorded, unreadable, or too old)."""
    if last_time_text is None:
        return True
    last = _recorded_time(last_time_text, config.time_format, config.timezone)
    if last is None:
        return True
    elapsed_hours = (now - last).total_seconds() / 3600
    # Negative: the clock went backwards; inject again to be safe.
    return not 0 <= elapsed_hours <= config.time_interval


@functools.lru_cache(maxsize=64)
def _recorded_time(hint_text: str, time_format: str, timezone: str) -> datetime | None:
    """The time an injection recorded (aware), or None when unreadable.

    Remembered: every step of a reply re-reads the same recorded time.
    """
    match = re.search(r"<current-time>(.*?)</current-time>", hint_text)
    if match is None:
        return None
    try:
        # naive unless the format carries %z
        last = datetime.strptime(match.group(1).strip(), time_format)  # noqa: DTZ007
    except ValueError:  # the format changed since: inject again to be safe
        return None
    if last.tzinfo is None:
        # The recorded wall-clock time is in the timezone recorded next to it.
        zone = re.search(r"<timezone>(.*?)</timezone>", hint_text)
        last = last.replace(tzinfo=resolve_timezone(zone.group(1).strip() if zone else timezone))
    return last


def _repeated_tool_error(context: Sequence[Msg], limit: int) -> tuple[str, int] | None:
    """(tool name, count) when the latest tool results are `limit`+ identical failing calls."""
    last = context[-1] if context else None
    if last is None or last.role != "assistant":
        return None
    # The newest result decides whether there is a streak at all: look at it alone first.
    for block in reversed(last.content):
        if isinstance(block, ToolResultBlock):
            if block.state != ToolResultState.ERROR:
                return None
            break
    else:
        return None
    results = last.get_content_blocks("tool_result")
    tool_name = results[-1].name
    streak = []
    for result in reversed(results):
        if result.state != ToolResultState.ERROR or result.name != tool_name:
            break
        streak.append(result.id)
    if len(streak) < limit:
        return None
    inputs = {call.id: call.input for call in last.get_content_blocks("tool_call")}
    arguments = [_normalized(inputs.get(call_id, "")) for call_id in streak]
    count = 0
    for value in arguments:
        if value != arguments[0]:
            break
        count += 1
    return (tool_name, count) if count >= limit else None


def _normalized(raw: str) -> str:
    """Arguments compared regardless of key order; invalid JSON compared as written."""
    try:
        return json.dumps(json.loads(raw), sort_keys=True)
    except (TypeError, ValueError):
        return raw.strip()
