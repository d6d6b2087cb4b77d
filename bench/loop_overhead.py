"""Framework time per ReAct iteration, Troupe vs AgentScope 2.0.11, on one scripted scenario.

One reply of `--iters` iterations: each scripted model answer streams a short text and one call
of a trivial async tool (`add`), then a final text ends the reply. No I/O anywhere, permission
mode BYPASS on both sides so nothing parks the loop, so the wall time of the reply (user input to
REPLY_END, all events consumed) is framework overhead. Figures are the median of `--reps`
repetitions (after one warm-up each), divided by the number of tool iterations.

Troupe runs two ways:
- `ScriptedChatModel` as shipped: it records a deep copy of the whole prompt on every call
  (`calls`) and computes usage by serialising the prompt, work that grows with the context and
  that no provider does in-process;
- a lean subclass with the same chunks that records nothing and reports a fixed usage, like the
  AgentScope scripted model (bench/_agentscope.py). This is the framework-only figure.

Run (bench environment, see bench/README.md):
    .bench-venv/bin/python bench/loop_overhead.py [--iters 200] [--reps 7] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import statistics
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _agentscope import ScriptedAgentScopeModel, Step
from _timing import interleaved, print_top
from agentscope.agent import Agent as ASAgent
from agentscope.agent import ReActConfig as ASReActConfig
from agentscope.message import UserMsg as ASUserMsg
from agentscope.permission import PermissionContext as ASPermissionContext
from agentscope.permission import PermissionMode as ASPermissionMode
from agentscope.state import AgentState as ASAgentState
from agentscope.tool import FunctionTool as ASFunctionTool
from agentscope.tool import Toolkit as ASToolkit

from agent_core.agent import Agent, ReActConfig
from agent_core.message import Msg, ToolResultBlock, UserMsg
from agent_core.model import ChatResponse, ChatUsage, ToolChoice
from agent_core.permission import PermissionContext, PermissionMode
from agent_core.state import AgentState
from agent_core.testing import ScriptedChatModel, ScriptedResponse, ScriptedToolCall
from agent_core.tool import FunctionTool, Toolkit

TEXT = "Calling the tool."
TARGET = 1 / 3


async def add(a: int, b: int) -> str:
    """Add two integers.

    Args:
        a: The first integer.
        b: The second integer.
    """
    return str(a + b)


class LeanScriptedChatModel(ScriptedChatModel):
    """`ScriptedChatModel`'s deltas without its per-call recording and prompt-sized usage."""

    async def _call_api(
        self,
        model_name: str,
        messages: list[Msg],
        tools: list[dict[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatResponse]:
        """Stream the next scripted response as deltas."""
        response = self._next(messages)
        calls = response.tool_calls if tool_choice is None or tool_choice.mode != "none" else []
        usage = ChatUsage(input_tokens=10, output_tokens=len(response.text) // 4)
        return self._deltas(response.text, calls, usage)


def troupe_script(iters: int) -> list[ScriptedResponse | str]:
    """`iters` answers calling `add`, then a final text."""
    calls: list[ScriptedResponse | str] = [
        ScriptedResponse(text=TEXT, tool_calls=[ScriptedToolCall("add", {"a": i, "b": 1})])
        for i in range(iters)
    ]
    return [*calls, "All done."]


async def run_troupe(iters: int, model_class: type[ScriptedChatModel]) -> float:
    """Seconds for one reply of `iters` tool iterations on Troupe's Agent."""
    agent = Agent(
        "bot",
        "You are a benchmark bot.",
        model_class(troupe_script(iters)),
        Toolkit([FunctionTool(add)]),
        state=AgentState(permission_context=PermissionContext(mode=PermissionMode.BYPASS)),
        react_config=ReActConfig(max_iters=iters + 5),
    )
    start = time.perf_counter()
    async for _ in agent.reply_stream(UserMsg("user", "go")):
        pass
    elapsed = time.perf_counter() - start
    reply = agent.state.context[-1]
    results = [b for b in reply.content if isinstance(b, ToolResultBlock)]
    assert len(results) == iters, f"troupe ran {len(results)} tool calls, expected {iters}"
    assert str(getattr(results[-1].state, "value", results[-1].state)) == "success", results[-1]
    assert reply.content[-1].text == "All done.", reply.content[-1]  # type: ignore[union-attr]
    return elapsed


async def run_agentscope(iters: int) -> float:
    """Seconds for one reply of `iters` tool iterations on AgentScope's Agent."""
    script = [Step(text=TEXT, tool="add", arguments={"a": i, "b": 1}) for i in range(iters)]
    agent = ASAgent(
        "bot",
        "You are a benchmark bot.",
        ScriptedAgentScopeModel([*script, Step(text="All done.")]),
        ASToolkit(tools=[ASFunctionTool(add)]),
        state=ASAgentState(permission_context=ASPermissionContext(mode=ASPermissionMode.BYPASS)),
        react_config=ASReActConfig(max_iters=iters + 5),
    )
    start = time.perf_counter()
    async for _ in agent.reply_stream(ASUserMsg(name="user", content="go")):
        pass
    elapsed = time.perf_counter() - start
    reply = agent.state.context[-1]
    results = [b for b in reply.content if b.type == "tool_result"]
    assert len(results) == iters, f"agentscope ran {len(results)} tool calls, expected {iters}"
    assert str(getattr(results[-1].state, "value", results[-1].state)) == "success", results[-1]
    assert reply.content[-1].text == "All done.", reply.content[-1]
    return elapsed


async def profile_troupe(iters: int, top: int = 25) -> None:
    """cProfile one lean Troupe reply and print the top functions by own time."""
    await run_troupe(iters, LeanScriptedChatModel)
    profiler = cProfile.Profile()
    profiler.enable()
    await run_troupe(iters, LeanScriptedChatModel)
    profiler.disable()
    title = f"cProfile, Troupe lean loop, {iters} iterations, top {top} by own time"
    print_top(profiler, title, top)
    title = f"same run, agent_core functions by cumulative time (top {top})"
    print_top(profiler, title, top, sort="cumulative", only="agent_core")


async def run(iters: int, reps: int, profile: bool) -> None:
    """Measure both frameworks, their runs interleaved so drift on the machine hits both."""
    samples = await interleaved(
        {
            "agentscope": lambda: run_agentscope(iters),
            "lean": lambda: run_troupe(iters, LeanScriptedChatModel),
            "shipped": lambda: run_troupe(iters, ScriptedChatModel),
        },
        reps,
    )
    us = {name: [s / iters * 1e6 for s in values] for name, values in samples.items()}
    med = {name: statistics.median(values) for name, values in us.items()}

    def line(label: str, name: str) -> str:
        values = us[name]
        return (
            f"  {label:<48}: {med[name]:7.0f} µs/iter "
            f"(min {min(values):.0f}, max {max(values):.0f})"
        )

    print(
        f"ReAct loop overhead: one reply of {iters} iterations (text + 1 tool call each) "
        f"+ a final text; median of {reps} interleaved runs"
    )
    print(line("AgentScope 2.0.11 Agent, scripted ChatModelBase", "agentscope"))
    print(line("Troupe Agent, lean ScriptedChatModel subclass", "lean"))
    print(line("Troupe Agent, ScriptedChatModel as shipped", "shipped"))
    for label, name in (("lean", "lean"), ("ScriptedChatModel as shipped", "shipped")):
        ratio = med[name] / med["agentscope"]
        verdict = "meets" if ratio <= TARGET else "MISSES"
        print(f"  ratio Troupe/AgentScope ({label}): {ratio:.2f} -> {verdict} the <= 1/3 target")
    if profile:
        await profile_troupe(iters)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--profile", action="store_true", help="cProfile Troupe's lean loop")
    args = parser.parse_args()
    asyncio.run(run(args.iters, args.reps, args.profile))


if __name__ == "__main__":
    main()
