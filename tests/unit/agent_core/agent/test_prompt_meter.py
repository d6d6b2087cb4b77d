"""The prompt measured before reasoning follows every change of its layers between replies."""

from __future__ import annotations

import re

from agent_core.agent import Agent, ContextConfig
from agent_core.agent._meter import PromptMeter
from agent_core.agent._tokens import ByteTokenCounter, CachedTokenCounter, measure_context
from agent_core.event import HintBlockEvent
from agent_core.message import TextBlock, UserMsg
from agent_core.testing import ScriptedChatModel
from agent_core.tool import FunctionTool, Toolkit

# Every prompt of these tests is near the threshold (past 1% of the window), so the first step
# of each reply reports its size in the runtime-state hint.
NEAR = ContextConfig(trigger_ratio=0.9, reserve_ratio=0.1, context_buffer_ratio=0.89)


async def lookup(city: str) -> str:
    """Look a city up.

    Args:
        city: The city's name, as its inhabitants write it.
    """
    return city


def near_agent(prompt: str, toolkit: Toolkit | None = None, context_size: int = 100_000) -> Agent:
    model = ScriptedChatModel(default="ok", context_size=context_size)
    return Agent("bot", prompt, model, toolkit, context_config=NEAR)


async def reported(agent: Agent) -> tuple[int, int]:
    """(prompt tokens, threshold) the first step of a reply on an empty context reports."""
    agent.state.context.clear()
    events = [e async for e in agent.reply_stream(UserMsg("user", "hi"))]
    [hint] = [e for e in events if isinstance(e, HintBlockEvent)]
    found = re.search(r"contains (\d+) tokens\. When reaching (\d+) tokens", str(hint.hint))
    assert found is not None
    return int(found.group(1)), int(found.group(2))


async def test_a_new_system_prompt_is_measured_at_the_next_reply() -> None:
    agent = near_agent("x" * 8_000)
    before, _ = await reported(agent)
    agent.system_prompt = "y" * 12_000
    after, _ = await reported(agent)
    assert after == before + 1_000
    assert after == (await reported(near_agent("y" * 12_000)))[0]


async def test_a_new_summary_is_measured_at_the_next_reply() -> None:
    agent = near_agent("x" * 8_000)
    before, _ = await reported(agent)
    agent.state.summary = "s" * 4_000
    assert (await reported(agent))[0] == before + 1_000
    agent.state.summary = [TextBlock(text="t" * 2_000)]
    assert (await reported(agent))[0] == before + 500


async def test_new_tools_are_measured_at_the_next_reply() -> None:
    agent = near_agent("x" * 8_000)
    before, _ = await reported(agent)
    agent.toolkit = Toolkit([FunctionTool(lookup)])
    after, _ = await reported(agent)
    assert after > before
    assert after == (await reported(near_agent("x" * 8_000, Toolkit([FunctionTool(lookup)]))))[0]


async def test_a_new_model_moves_the_threshold() -> None:
    agent = near_agent("x" * 8_000)
    tokens, threshold = await reported(agent)
    assert threshold == 90_000
    agent.model = ScriptedChatModel(default="ok", context_size=200_000)
    assert await reported(agent) == (tokens, 180_000)


def test_the_meter_measures_as_measure_context_whatever_changes() -> None:
    counter = CachedTokenCounter()
    meter = PromptMeter(counter)
    context = [UserMsg("user", "hello " * 100)]
    block_summary = [TextBlock(text="b" * 400)]
    cases = [("p" * 400, ""), ("p" * 400, "s" * 40), ("q" * 800, "s" * 40), ("q" * 800, "")]
    cases += [("q" * 800, block_summary), ("q" * 800, block_summary)]
    for index, (prompt, summary) in enumerate(cases):
        if index == len(cases) - 1:
            block_summary[0].text = "c" * 4_000  # a block summary changed in place
        usage = meter.measure_if_near(prompt, summary, context, [], 10_000, NEAR)
        expected = measure_context(prompt, summary, context, [], 10_000, NEAR, ByteTokenCounter())
        assert usage == expected


def test_the_meter_answers_none_far_below_the_threshold() -> None:
    meter = PromptMeter(ByteTokenCounter())
    assert meter.measure_if_near("p" * 400, "", [], [], 100_000, NEAR) is None
    assert meter.measure_if_near("p" * 4_400, "", [], [], 100_000, NEAR) is not None
