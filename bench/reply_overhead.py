"""Fixed cost of one whole reply on a tiny context, Troupe vs AgentScope 2.0.11, in one run.

Independent of `loop_overhead.py` (which measures long replies): here every reply starts from an
empty context, so what is timed is the per-reply cost a chat turn pays whatever its length: the
reply's set-up and tear-down, prompt assembly, context measurement, runtime-state injection and
one or two model calls streamed by a scripted model. Two scenarios, each on both frameworks:

- `text`: the user says hi, the model streams a short text answer;
- `tool`: the model streams a short text and one call of a trivial async tool, then a final
  text (two model calls, one tool call).

Both sides use a lean scripted model (nothing recorded, fixed usage) that streams the same
chunks, permission mode BYPASS, and default agent configuration otherwise. Each rep runs
`--replies` replies on one agent, clearing its context before each reply, and the figure is the
median over reps of µs per reply; the two frameworks' reps are interleaved so machine drift hits
both.

Run (bench environment, see bench/README.md):
    .bench-venv/bin/python bench/reply_overhead.py [--replies 200] [--reps 9] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _agentscope import ScriptedAgentScopeModel, Step
from _timing import interleaved, print_top
from agentscope.agent import Agent as ASAgent
from agentscope.message import UserMsg as ASUserMsg
from agentscope.permission import PermissionContext as ASPermissionContext
from agentscope.permission import PermissionMode as ASPermissionMode
from agentscope.state import AgentState as ASAgentState
from agentscope.tool import FunctionTool as ASFunctionTool
from agentscope.tool import Toolkit as ASToolkit
from loop_overhead import LeanScriptedChatModel, add

from agent_core.agent import Agent
from agent_core.message import UserMsg
from agent_core.permission import PermissionContext, PermissionMode
from agent_core.state import AgentState
from agent_core.testing import ScriptedResponse, ScriptedToolCall
from agent_core.tool import FunctionTool, Toolkit

TARGET = 0.2
ANSWER = "Hello! How can I help you today?"


def troupe_agent(scenario: str, replies: int) -> Agent:
    """A Troupe agent whose scripted model holds the answers of `replies` replies."""
    script: list[ScriptedResponse | str] = []
    for i in range(replies):
        if scenario == "tool":
            call = ScriptedToolCall("add", {"a": i, "b": 1})
            script.append(ScriptedResponse(text="Adding.", tool_calls=[call]))
        script.append(ANSWER)
    return Agent(
        "bot",
        "You are a helpful assistant.",
        LeanScriptedChatModel(script),
        Toolkit([FunctionTool(add)]),
        state=AgentState(permission_context=PermissionContext(mode=PermissionMode.BYPASS)),
    )


def agentscope_agent(scenario: str, replies: int) -> ASAgent:
    """An AgentScope agent whose scripted model holds the answers of `replies` replies."""
    script: list[Step] = []
    for i in range(replies):
        if scenario == "tool":
            script.append(Step(text="Adding.", tool="add", arguments={"a": i, "b": 1}))
        script.append(Step(text=ANSWER))
    return ASAgent(
        "bot",
        "You are a helpful assistant.",
        ScriptedAgentScopeModel(script),
        ASToolkit(tools=[ASFunctionTool(add)]),
        state=ASAgentState(permission_context=ASPermissionContext(mode=ASPermissionMode.BYPASS)),
    )


async def run_troupe(scenario: str, replies: int) -> float:
    """Seconds per reply over `replies` replies of one Troupe agent."""
    agent = troupe_agent(scenario, replies)
    elapsed = 0.0
    for _ in range(replies):
        agent.state.context.clear()
        start = time.perf_counter()
        async for _ in agent.reply_stream(UserMsg("user", "hi")):
            pass
        elapsed += time.perf_counter() - start
        assert agent.state.context[-1].get_text_content() is not None
    assert agent.state.context[-1].content[-1].text == ANSWER  # type: ignore[union-attr]
    return elapsed / replies


async def run_agentscope(scenario: str, replies: int) -> float:
    """Seconds per reply over `replies` replies of one AgentScope agent."""
    agent = agentscope_agent(scenario, replies)
    elapsed = 0.0
    for _ in range(replies):
        agent.state.context.clear()
        start = time.perf_counter()
        async for _ in agent.reply_stream(ASUserMsg(name="user", content="hi")):
            pass
        elapsed += time.perf_counter() - start
    assert agent.state.context[-1].content[-1].text == ANSWER
    return elapsed / replies


async def profile_troupe(scenario: str, replies: int, top: int = 30) -> None:
    """cProfile Troupe's replies of one scenario and print the top functions by own time."""
    profiler = cProfile.Profile()
    profiler.enable()
    await run_troupe(scenario, replies)
    profiler.disable()
    print_top(profiler, f"cProfile, Troupe, scenario {scenario}, top {top} by own time", top)


async def run(replies: int, reps: int, profile: bool) -> None:
    """Measure both scenarios on both frameworks."""
    print(f"One reply on a tiny context: median of {reps} interleaved reps of {replies} replies")
    for scenario in ("text", "tool"):
        samples = await interleaved(
            {
                "agentscope": lambda s=scenario: run_agentscope(s, replies),  # type: ignore[misc]
                "troupe": lambda s=scenario: run_troupe(s, replies),  # type: ignore[misc]
            },
            reps,
        )
        med = {name: statistics.median(v) * 1e6 for name, v in samples.items()}
        ratio = med["troupe"] / med["agentscope"]
        verdict = "meets" if ratio <= TARGET else "MISSES"
        print(f"  scenario {scenario}:")
        print(f"    AgentScope 2.0.11 : {med['agentscope']:8.0f} µs/reply")
        print(f"    Troupe            : {med['troupe']:8.0f} µs/reply")
        print(f"    ratio Troupe/AgentScope: {ratio:.2f} -> {verdict} the <= {TARGET} target")
    if profile:
        for scenario in ("text", "tool"):
            await profile_troupe(scenario, replies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replies", type=int, default=200)
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--profile", action="store_true", help="cProfile Troupe's replies")
    args = parser.parse_args()
    asyncio.run(run(args.replies, args.reps, args.profile))


if __name__ == "__main__":
    main()
