"""Troupe's tools against AgentScope 2.0.11's: same names, parameters, required sets and types.

The reference is `tests/reference/data/tool_schemas.json`, written by
`tests/reference/generate_tool_schemas.py` from AgentScope 2.0.11. Only the *shape* of each
tool must agree: its parameter names, which of them are required, and each parameter's JSON
types (and enum values where AgentScope lists them). Descriptions may differ in wording — ours
are our own — and so may bounds and defaults.

Null is left out of the compared types: AgentScope spells some optional parameters
`anyOf [T, null]` and Troupe spells them `T`; both accept null for them, since Troupe's toolkit
reads null for an optional argument as "not given".

Tools of AgentScope that Troupe does not offer are listed in `NOT_OFFERED` with the reason; every
other reference tool must exist in Troupe.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from actors.bus.keys import Keys
from actors.schedules.tools import ScheduleContext, schedule_group
from actors.sessions.hints import InboxBackgroundSink
from actors.sessions.toolkit import ToolStop
from actors.storage.records import AgentData, AgentRecord, ChatModelConfig, InviteConfig, TeamRole
from actors.storage.redis_storage import RedisStorage
from actors.teams.invite import AgentInvite
from actors.teams.store import SubAgentTemplate, TeamStore, template_registry
from actors.teams.tools import AgentCreate, TeamContext, TeamCreate, TeamDelete, TeamSay
from agent_core.skill import Skill
from agent_core.tool import (
    Bash,
    Edit,
    Glob,
    Grep,
    Read,
    TaskCreate,
    TaskGet,
    TaskList,
    TaskUpdate,
    ToolBase,
    Toolkit,
    Write,
)

REFERENCE = Path(__file__).parents[3] / "reference" / "data" / "tool_schemas.json"
NOT_OFFERED: dict[str, str] = {}
# Free strings of AgentScope that Troupe restricts to the values AgentScope's description names.
STRICTER_ENUMS = {
    # AgentScope silently turns an unknown mode into dont_ask; Troupe tells the model.
    ("ScheduleCreate", "permission_mode"),
}


def reference() -> dict[tuple[str, str | None], dict[str, Any]]:
    body = json.loads(REFERENCE.read_text())
    assert body["agentscope_version"] == "2.0.11"
    return {(t["name"], t["variant"]): t for t in body["tools"]}


def types(prop: dict[str, Any]) -> set[str]:
    """The JSON types a property schema admits, null left out."""
    if "anyOf" in prop or "oneOf" in prop:
        return set().union(*(types(v) for v in prop.get("anyOf") or prop["oneOf"])) - {"null"}
    kind = prop.get("type")
    if isinstance(kind, list):
        return set(kind) - {"null"}
    if isinstance(kind, str):
        return {kind} - {"null"}
    return {"any"}


def enums(prop: dict[str, Any]) -> set[str] | None:
    variants = prop.get("anyOf") or prop.get("oneOf") or [prop]
    values = [v for variant in variants for v in variant.get("enum", [])]
    return set(values) if values else None


def shape(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    return {
        "params": sorted(properties),
        "required": sorted(schema.get("required") or []),
        "types": {name: sorted(types(p)) for name, p in properties.items()},
        "enums": {name: sorted(e) for name, p in properties.items() if (e := enums(p))},
    }


async def troupe_tools(tmp_path: Path) -> dict[tuple[str, str | None], ToolBase]:
    redis = Redis()  # never contacted: describing a tool needs no I/O
    keys = Keys("ref")
    storage = RedisStorage(redis, keys)
    ctx = TeamContext("s", "Lead", storage, TeamStore(redis, keys), None, template_registry([]))  # type: ignore[arg-type]
    explorer = SubAgentTemplate(
        type="explorer", description="Read-only exploration.", system_prompt_template="x"
    )
    with_templates = TeamContext(
        "s",
        "Lead",
        storage,
        ctx.teams,
        None,
        template_registry([explorer]),  # type: ignore[arg-type]
    )
    monday = AgentRecord(
        id="9f3c1a20aaaa",
        user_id="u",
        data=AgentData(name="Monday"),
    )
    monday.data.chat_config.invite_config = InviteConfig(
        invitable=True, invite_description="Knows the weekly reports."
    )
    model = ChatModelConfig(type="openai_credential", credential_id="c", model="m")
    schedules = ScheduleContext(None, "u", "a", "s", model)  # type: ignore[arg-type]
    skill = Skill.parse("---\nname: review\ndescription: Review.\n---\nDo it.", str(tmp_path))
    toolkit = Toolkit(skills_or_loaders=[skill], tool_groups=[schedule_group(schedules)])
    await toolkit.prepare()
    tools: list[tuple[ToolBase, str | None]] = [
        (tool, None)
        for tool in (
            Bash(tmp_path),
            Read(tmp_path),
            Write(tmp_path),
            Edit(tmp_path),
            Glob(tmp_path),
            Grep(tmp_path),
            TaskCreate(),
            TaskGet(),
            TaskList(),
            TaskUpdate(),
            TeamCreate(ctx),
            TeamDelete(ctx),
            AgentInvite(ctx, [monday]),
            ToolStop(InboxBackgroundSink(None)),  # type: ignore[arg-type]
            *schedule_group(schedules).tools,
        )
    ]
    tools += [
        (TeamSay(ctx), "leader"),
        (TeamSay(ctx, TeamRole.WORKER), "worker"),
        (AgentCreate(ctx), "no templates"),
        (AgentCreate(with_templates), "templates"),
    ]
    found = {(tool.name, variant): tool for tool, variant in tools}
    for meta in ("reset_tools", "Skill"):
        tool = toolkit.get(meta)
        assert tool is not None
        found[meta, None] = tool
    return found


@pytest.fixture
async def ours(tmp_path: Path) -> dict[tuple[str, str | None], ToolBase]:
    return await troupe_tools(tmp_path)


REFERENCE_TOOLS = reference()


@pytest.mark.parametrize(
    "key", sorted(REFERENCE_TOOLS, key=str), ids=lambda k: "-".join(filter(None, k))
)
async def test_same_parameters_required_and_types_as_agentscope(
    key: tuple[str, str | None], ours: dict[tuple[str, str | None], ToolBase]
) -> None:
    if key[0] in NOT_OFFERED:
        pytest.skip(NOT_OFFERED[key[0]])
    assert key in ours, f"Troupe offers no tool {key[0]!r}"
    expected = shape(REFERENCE_TOOLS[key]["input_schema"])
    actual = shape(ours[key].input_schema)
    for param in [p for p in actual["enums"] if p not in expected["enums"]]:
        assert (key[0], param) in STRICTER_ENUMS, f"{param} gained an enum"
        del actual["enums"][param]

    assert actual == expected
