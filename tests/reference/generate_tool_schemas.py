"""Dump AgentScope 2.0.11's agent-facing tools (name, description, input schema) to JSON.

Usage (from the repository root, with AgentScope 2.0.11 and the Agent Service's `apscheduler<4`
importable by that interpreter)::

    /path/to/agentscope-venv/bin/python tests/reference/generate_tool_schemas.py

It writes `tests/reference/data/tool_schemas.json`: one entry per tool an agent can be given —
the built-in tools, the meta tool (`reset_tools`, shown for one group named `schedule_tools`, as
the Agent Service registers it), the `Skill` viewer, the Agent Service's team tools (`TeamSay` in
its leader and worker wordings, `AgentCreate` with and without sub-agent templates,
`AgentInvite` for one invitable agent), its schedule tools and `ToolStop`. Keys are sorted and
the output is deterministic, so re-running it on the same AgentScope changes nothing.

`tests/unit/agent_core/tools/test_tool_schemas_reference.py` compares Troupe's tools of the
same names against it. This script is not collected by pytest and the test suite never imports
AgentScope.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import agentscope
from agentscope.app import SubAgentTemplate
from agentscope.app._manager._background_task_manager import ToolStop
from agentscope.app._manager._scheduler._tools import (
    ScheduleCreate,
    ScheduleDelete,
    ScheduleList,
    ScheduleView,
)
from agentscope.app._tool import AgentCreate, AgentInvite, TeamCreate, TeamDelete, TeamSay
from agentscope.app.storage import AgentData, AgentRecord
from agentscope.tool import (
    Bash,
    Edit,
    Glob,
    Grep,
    Read,
    ResetTools,
    TaskCreate,
    TaskGet,
    TaskList,
    TaskUpdate,
    ToolGroup,
    Write,
)
from agentscope.tool._builtin import SkillViewer

OUT = Path(__file__).parent / "data" / "tool_schemas.json"
# Team and schedule tools only keep these for their calls; describing themselves needs none.
NO_DEPS: dict[str, Any] = {
    "storage": None,
    "message_bus": None,
    "workspace_manager": None,
    "user_id": "user",
    "session_id": "session",
    "agent_id": "agent",
}


def entry(tool: Any, variant: str | None = None) -> dict[str, Any]:
    """One tool as the model sees it."""
    return {
        "name": tool.name,
        "variant": variant,
        "description": tool.description,
        "input_schema": tool.input_schema,
    }


def invitable_agent() -> AgentRecord:
    data = AgentData(name="Monday")
    data.chat_config.invite_config.invitable = True
    data.chat_config.invite_config.invite_description = "Knows the weekly reports."
    return AgentRecord(id="9f3c1a20aaaa", user_id="user", data=data)


def tools() -> list[dict[str, Any]]:
    builtins = [Bash(), Read(), Write(), Edit(), Glob(), Grep()]
    tasks = [TaskCreate(), TaskGet(), TaskList(), TaskUpdate()]
    group = ToolGroup(name="schedule_tools", description="Tools for managing cron schedules.")
    template = SubAgentTemplate(
        type="explorer",
        description="Read-only exploration.",
        system_prompt_template="You are {member_name}.",
    )
    schedule = {"user_id": "user", "storage": None}
    entries = [entry(tool) for tool in [*builtins, *tasks]]
    entries += [
        entry(ResetTools(groups=[group], response_template="")),
        entry(SkillViewer(get_skills_method=None)),
        entry(TeamCreate(**NO_DEPS)),
        entry(TeamDelete(**NO_DEPS)),
        entry(TeamSay(**NO_DEPS, role="leader"), "leader"),
        entry(TeamSay(**NO_DEPS, role="worker"), "worker"),
        entry(AgentCreate(**NO_DEPS), "no templates"),
        entry(AgentCreate(**NO_DEPS, sub_agent_templates={"explorer": template}), "templates"),
        entry(AgentInvite(**NO_DEPS, invitable_pool=[invitable_agent()])),
        entry(
            ScheduleCreate(
                agent_id="agent", chat_model_config=None, scheduler_manager=None, **schedule
            )
        ),
        entry(ScheduleList(scheduler=None, **schedule)),
        entry(ScheduleView(scheduler=None, **schedule)),
        entry(ScheduleDelete(scheduler=None, message_bus=None, scheduler_manager=None, **schedule)),
        entry(ToolStop(background_tasks={}, message_bus=None, session_id="session")),
    ]
    return sorted(entries, key=lambda e: (e["name"], e["variant"] or ""))


def main() -> None:
    body = {"agentscope_version": agentscope.__version__, "tools": tools()}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(body, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"wrote {len(body['tools'])} tools to {OUT}")


if __name__ == "__main__":
    main()
