"""Runtime-state injection: the "System - Runtime State" hint the agent adds before reasoning."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from agent_core.agent import RUNTIME_STATE_SOURCE, Agent, ContextConfig, InjectionConfig
from agent_core.agent._injection import runtime_state_hint
from agent_core.event import AgentEvent, HintBlockEvent
from agent_core.message import (
    AssistantMsg,
    HintBlock,
    Msg,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
    UserMsg,
)
from agent_core.state import AgentState, Task, TaskContext
from agent_core.testing import ScriptedChatModel

SAMPLES = Path(__file__).parents[3] / "data" / "compat" / "agentscope-sse-samples.txt"
NOW = datetime(2026, 11, 30, 17, 38, 53, tzinfo=UTC)


async def collect(agent: Agent, msg: Msg | None) -> list[AgentEvent]:
    return [event async for event in agent.reply_stream(msg)]


def hints(events: list[AgentEvent]) -> list[HintBlockEvent]:
    return [e for e in events if isinstance(e, HintBlockEvent)]


def recorded_runtime_hints() -> list[dict[str, str]]:
    frames = [
        json.loads(line.removeprefix("data: "))
        for line in SAMPLES.read_text().splitlines()
        if line.startswith("data: ")
    ]
    return [f for f in frames if f["type"] == "HINT_BLOCK" and f["source"] == RUNTIME_STATE_SOURCE]


def test_the_hint_reads_exactly_as_agentscope_recorded_it() -> None:
    """Same time, same text and source as the frames AgentScope 2.0.11 streamed."""
    recorded = recorded_runtime_hints()
    assert recorded
    for frame in recorded:
        stamp = re.search(r"<current-time>(.*?)</current-time>", frame["hint"])
        assert stamp is not None
        now = datetime.strptime(stamp.group(1), "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
        hint = runtime_state_hint(InjectionConfig(), AgentState(), None, now=now)
        assert hint is not None
        assert (hint.source, hint.hint) == (frame["source"], frame["hint"])


async def test_the_first_reply_streams_the_time_before_reasoning() -> None:
    model = ScriptedChatModel(["hello"])
    agent = Agent("bot", "x", model)
    events = await collect(agent, UserMsg("user", "hi"))
    types = [e.type for e in events]
    assert types[:3] == ["REPLY_START", "HINT_BLOCK", "MODEL_CALL_START"]
    [event] = hints(events)
    assert event.source == RUNTIME_STATE_SOURCE
    assert "<current-time>" in str(event.hint)
    assert "<timezone>UTC</timezone>" in str(event.hint)
    # persisted in the reply, and shown to the model
    [block] = agent.state.context[-1].get_content_blocks("hint")
    assert block.id == event.block_id
    assert any("<current-time>" in str(m.content) for m in model.calls[0])


async def test_a_second_reply_within_the_interval_injects_nothing() -> None:
    agent = Agent("bot", "x", ScriptedChatModel(default="ok"))
    await collect(agent, UserMsg("user", "one"))
    assert hints(await collect(agent, UserMsg("user", "two"))) == []


def test_the_time_is_injected_again_once_the_interval_has_passed() -> None:
    config = InjectionConfig(time_interval=0.5)
    state = AgentState()
    first = runtime_state_hint(config, state, None, now=NOW)
    assert first is not None
    state.context.append(AssistantMsg("bot", [first]))
    assert runtime_state_hint(config, state, None, now=NOW + timedelta(minutes=29)) is None
    assert runtime_state_hint(config, state, None, now=NOW + timedelta(minutes=31)) is not None
    # a clock that went backwards injects again
    assert runtime_state_hint(config, state, None, now=NOW - timedelta(minutes=1)) is not None


def test_the_recorded_timezone_is_honoured_after_a_timezone_change() -> None:
    state = AgentState()
    shanghai = NOW.astimezone(ZoneInfo("Asia/Shanghai"))
    first = runtime_state_hint(InjectionConfig(timezone="Asia/Shanghai"), state, None, now=shanghai)
    assert first is not None
    assert "<timezone>Asia/Shanghai</timezone>" in str(first.hint)
    state.context.append(AssistantMsg("bot", [first]))
    # ten minutes later, seen from UTC: still recent once read in Shanghai time
    later = runtime_state_hint(InjectionConfig(), state, None, now=NOW + timedelta(minutes=10))
    assert later is None


def test_open_tasks_are_announced_once_unless_task_tools_are_in_context() -> None:
    tasks = TaskContext(
        tasks=[Task(subject="a", description="a", state="in_progress")]
        + [Task(subject="b", description="b") for _ in range(2)]
    )
    state = AgentState(tasks_context=tasks)
    recent = runtime_state_hint(InjectionConfig(), state, None, now=NOW)
    assert recent is not None
    assert (
        "<tasks>You have 1 in-progress tasks and 2 pending tasks. Use `TaskList` to view them "
        "if you don't know.</tasks>"
    ) in str(recent.hint)
    state.context.append(AssistantMsg("bot", [recent]))
    assert runtime_state_hint(InjectionConfig(), state, None, now=NOW) is None

    aware = AgentState(tasks_context=tasks)
    call = ToolCallBlock(id="c1", name="TaskList", input="{}")
    time_only = runtime_state_hint(InjectionConfig(), AgentState(), None, now=NOW)
    assert time_only is not None
    aware.context.append(AssistantMsg("bot", [time_only, call]))
    assert runtime_state_hint(InjectionConfig(), aware, None, now=NOW) is None


async def test_a_context_near_compression_is_reported_at_the_first_step_only() -> None:
    model = ScriptedChatModel(default="ok", context_size=1_000)
    config = ContextConfig(trigger_ratio=0.9, reserve_ratio=0.1, context_buffer_ratio=0.8)
    agent = Agent("bot", "x", model, context_config=config)
    [event] = hints(await collect(agent, UserMsg("user", "x" * 800)))
    assert re.search(
        r"<context-length>Your current context contains \d+ tokens\. When reaching 900 tokens, "
        r"your context will be compressed\.</context-length>",
        str(event.hint),
    )


def test_the_same_failing_call_repeated_is_called_out() -> None:
    blocks: list[ToolCallBlock | ToolResultBlock] = []
    for i in range(3):
        blocks.append(ToolCallBlock(id=f"c{i}", name="Bash", input='{"b": 1, "a": 2}'))
        blocks.append(
            ToolResultBlock(id=f"c{i}", name="Bash", output="boom", state=ToolResultState.ERROR)
        )
    state = AgentState(context=[AssistantMsg("bot", [*blocks])])
    time_hint = runtime_state_hint(InjectionConfig(), AgentState(), None, now=NOW)
    assert time_hint is not None
    state.context.insert(0, AssistantMsg("bot", [time_hint]))
    hint = runtime_state_hint(InjectionConfig(), state, None, now=NOW)
    assert hint is not None
    assert ("<tool-error>The last 3 calls to 'Bash' with the same arguments all failed.") in str(
        hint.hint
    )
    # different arguments in the streak: no call-out
    blocks[0] = ToolCallBlock(id="c0", name="Bash", input='{"a": 3}')
    state.context[-1] = AssistantMsg("bot", [*blocks])
    assert runtime_state_hint(InjectionConfig(), state, None, now=NOW) is None


def test_extra_fields_ride_along_but_trigger_nothing() -> None:
    config = InjectionConfig(extra_fields={"user-name": "Ada"})
    first = runtime_state_hint(config, AgentState(), None, now=NOW)
    assert first is not None
    assert str(first.hint).count("<user-name>Ada</user-name>") == 1
    state = AgentState(context=[AssistantMsg("bot", [first])])
    assert runtime_state_hint(config, state, None, now=NOW) is None


async def test_injection_can_be_turned_off_or_kept_silent() -> None:
    off = Agent(
        "bot",
        "x",
        ScriptedChatModel(["ok"]),
        injection_config=InjectionConfig(inject_runtime_state=False),
    )
    assert hints(await collect(off, UserMsg("user", "hi"))) == []
    assert off.state.context[-1].get_content_blocks("hint") == []

    silent = Agent(
        "bot",
        "x",
        ScriptedChatModel(["ok"]),
        injection_config=InjectionConfig(emit_hint_event=False),
    )
    assert hints(await collect(silent, UserMsg("user", "hi"))) == []
    [block] = silent.state.context[-1].get_content_blocks("hint")
    assert isinstance(block, HintBlock)
    assert block.source == RUNTIME_STATE_SOURCE


def test_a_template_without_the_placeholder_is_refused() -> None:
    with pytest.raises(ValidationError, match="runtime_state"):
        InjectionConfig(template="<state/>")


@pytest.mark.parametrize(
    "time_format", ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%S %Z", "%H:%M:%S.%f"]
)
def test_the_time_reads_as_strftime_for_every_zone_and_format_in_one_second(
    time_format: str,
) -> None:
    """The formatted time is reused within a second: never across zones, formats or fractions."""
    moments = [
        NOW,
        NOW.replace(microsecond=900_000),
        NOW.astimezone(ZoneInfo("Asia/Shanghai")),
        NOW.astimezone(ZoneInfo("Etc/GMT")),
        NOW + timedelta(seconds=1),
    ]
    for now in moments:
        config = InjectionConfig(time_format=time_format, timezone=str(now.tzinfo))
        hint = runtime_state_hint(config, AgentState(), None, now=now)
        assert hint is not None
        assert f"<current-time>{now.strftime(time_format)}</current-time>" in str(hint.hint)
