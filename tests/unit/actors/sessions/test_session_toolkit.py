"""The tools a service session gets, on a real Redis: wiring, team, schedule, ToolStop, invite.

Sessions are not run here: the toolkit `session_toolkit` assembles for a reply is called the way
the agent calls it, and what the tools leave behind — records, inbox items, scheduler syncs — is
read back.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from redis.asyncio import Redis

from actors.bus.items import HintItem
from actors.bus.mailbox import Mailbox
from actors.bus.message_bus import RedisMessageBus
from actors.schedules.service import ScheduleService
from actors.schedules.store import ScheduleKeys, ScheduleSource, ScheduleStore
from actors.schedules.tools import ScheduleContext
from actors.sessions.chat_models import check_model_configs
from actors.sessions.hints import InboxBackgroundSink
from actors.sessions.lifecycle import delete_user_session
from actors.sessions.toolkit import SessionTools, session_toolkit
from actors.storage.records import (
    AgentData,
    AgentRecord,
    ChatModelConfig,
    InviteConfig,
    SessionConfig,
    SessionRecord,
)
from actors.teams.invite import display_name
from actors.teams.store import TeamStore, template_registry
from actors.teams.tools import TeamContext
from agent_core.credential import OpenAICredential
from agent_core.message import TextBlock, ToolCallBlock, ToolResultState
from agent_core.permission import PermissionMode
from agent_core.state import AgentState
from agent_core.tool import ToolChunk, Toolkit
from tests.support.dispatchers import RecordingDispatcher

pytestmark = [pytest.mark.redis]

USER = "alice"


class RecordingControl:
    """Stands in for the scheduler: remembers which schedules it was told about."""

    def __init__(self) -> None:
        self.synced: list[str] = []

    async def start(self) -> None:
        return None

    async def sync(self, schedule_id: str) -> None:
        self.synced.append(schedule_id)

    async def fire_now(self, schedule_id: str) -> str | None:
        return None

    async def close(self) -> None:
        return None


@dataclass
class Env:
    store: ScheduleStore
    bus: RedisMessageBus
    mailbox: Mailbox
    teams: TeamStore
    control: RecordingControl
    service: ScheduleService
    agent: AgentRecord
    model: ChatModelConfig
    states: dict[str, AgentState] = field(default_factory=dict)
    sinks: dict[str, InboxBackgroundSink] = field(default_factory=dict)

    async def session(self, **config: Any) -> SessionRecord:
        return await self.store.create_session(
            USER, self.agent.id, SessionConfig(chat_model_config=self.model, **config)
        )

    async def toolkit(self, session_id: str, name: str = "Lead") -> Toolkit:
        """The toolkit of one reply of the session, as `SessionRuntime` assembles it."""
        session = await self.store.load_session(USER, session_id)
        team = TeamContext(
            session_id, name, self.store, self.teams, self.mailbox, template_registry([])
        )
        schedules = None
        if session.config.chat_model_config is not None:
            schedules = ScheduleContext(
                self.service, USER, session.agent_id, session_id, session.config.chat_model_config
            )
        sink = self.sinks.setdefault(session_id, InboxBackgroundSink(self._deliver(session_id)))
        agents = await self.store.list_agents(USER)
        pool = [a for a in agents if a.data.chat_config.invite_config.invitable]
        return session_toolkit([], SessionTools(session, team, sink, schedules, pool))

    def _deliver(self, session_id: str) -> Any:
        async def deliver(item: HintItem) -> None:
            await self.mailbox.deliver(session_id, item)

        return deliver

    async def call(self, session_id: str, tool: str, member: str = "Lead", **args: Any) -> Result:
        toolkit = await self.toolkit(session_id, member)
        state = self.states.setdefault(session_id, AgentState(session_id=session_id))
        block = ToolCallBlock(id=f"call-{tool}", name=tool, input=json.dumps(args))
        return Result([chunk async for chunk in toolkit.call(block, state)])

    async def hints(self, session_id: str) -> list[str]:
        return [i.hint for _, i in await self.bus.pending(session_id) if isinstance(i, HintItem)]


@dataclass
class Result:
    chunks: list[ToolChunk]

    @property
    def ok(self) -> bool:
        return self.chunks[-1].state is ToolResultState.SUCCESS

    @property
    def text(self) -> str:
        return "".join(b.text for c in self.chunks for b in c.content if isinstance(b, TextBlock))


@pytest.fixture
async def env(redis_url: str) -> AsyncIterator[Env]:
    redis = Redis.from_url(redis_url)
    keys = ScheduleKeys("svc")
    store = ScheduleStore(redis, keys)
    bus = RedisMessageBus(redis, keys, 100, 100)
    dispatcher = RecordingDispatcher()
    mailbox = Mailbox(bus, dispatcher)
    teams = TeamStore(redis, keys)
    control = RecordingControl()

    async def check(user_id: str, config: SessionConfig) -> None:
        await check_model_configs(store, user_id, config)

    async def delete(user_id: str, session_id: str) -> None:
        await delete_user_session(store, teams, dispatcher, user_id, session_id)

    service = ScheduleService(store, control, check, delete)
    agent = await store.create_agent(USER, AgentData(name="Lead"))
    credential = await store.create_credential(USER, OpenAICredential(api_key="sk-test"))
    model = ChatModelConfig(type="openai_credential", credential_id=credential.id, model="m")
    yield Env(store, bus, mailbox, teams, control, service, agent, model)
    await redis.aclose()


def names(toolkit: Toolkit, state: AgentState | None = None) -> list[str]:
    return [schema.name for schema in toolkit.schemas(state)]


# Wiring -----------------------------------------------------------------------------------------


async def test_a_session_gets_the_service_tools_and_the_schedule_group(env: Env) -> None:
    session = await env.session()
    toolkit = await env.toolkit(session.id)
    state = AgentState()

    basic = [
        "TaskCreate",
        "TaskList",
        "TaskGet",
        "TaskUpdate",
        "get_current_time",
        "ToolStop",
        "TeamCreate",
        "AgentCreate",
        "TeamSay",
        "TeamDelete",
        "reset_tools",
    ]
    assert names(toolkit, state) == basic
    meta = toolkit.get("reset_tools")
    assert meta is not None
    assert list(meta.input_schema["properties"]) == ["schedule_tools"]
    state.tool_context.activated_groups = ["schedule_tools"]
    assert names(toolkit, state)[len(basic) - 1 :] == [
        "ScheduleCreate",
        "ScheduleView",
        "ScheduleDelete",
        "ScheduleList",
        "reset_tools",
    ]


async def test_without_a_chat_model_there_are_no_schedule_tools_nor_meta_tool(env: Env) -> None:
    session = await env.store.create_session(USER, env.agent.id, SessionConfig())

    toolkit = await env.toolkit(session.id)

    assert "reset_tools" not in names(toolkit)
    assert toolkit.get("ScheduleCreate") is None


# Teams ------------------------------------------------------------------------------------------


async def team_of_two(env: Env) -> tuple[str, str, str]:
    leader = (await env.session()).id
    assert (await env.call(leader, "TeamCreate", name="crew", description="two workers")).ok
    for worker in ("w1", "w2"):
        created = await env.call(
            leader, "AgentCreate", name=worker, description="a worker", prompt=f"{worker}: go"
        )
        assert created.ok, created.text
    team = await env.store.load_session(USER, leader)
    assert team.team_id is not None
    members = (await env.teams.get(team.team_id)).members
    return leader, members[0].session_id, members[1].session_id


async def test_a_worker_gets_only_team_say(env: Env) -> None:
    _, w1, _ = await team_of_two(env)

    toolkit = await env.toolkit(w1, "w1")

    team_tools = [n for n in names(toolkit) if n.startswith(("Team", "Agent"))]
    assert team_tools == ["TeamSay"]
    say = toolkit.get("TeamSay")
    assert say is not None
    assert "MUST report the result to the leader" in say.description


async def test_a_workers_team_say_without_to_reaches_the_leader_and_the_others(
    env: Env,
) -> None:
    leader, w1, w2 = await team_of_two(env)
    before = {s: len(await env.hints(s)) for s in (leader, w1, w2)}

    said = await env.call(w1, "TeamSay", member="w1", content="report: done")

    assert said.ok, said.text
    assert said.text == "Delivered to 2 recipient(s) (broadcast): Lead, w2."
    assert (await env.hints(leader))[before[leader] :] == [
        '<team-message from="w1">\nreport: done\n</team-message>'
    ]
    assert len(await env.hints(w2)) == before[w2] + 1
    assert len(await env.hints(w1)) == before[w1]


async def test_a_broadcast_is_one_batch_and_names_the_members_it_missed(env: Env) -> None:
    leader, w1, w2 = await team_of_two(env)
    for index in range(env.bus.inbox_maxlen - len(await env.bus.pending(w2))):
        await env.bus.put(w2, HintItem(hint=f"filler {index}"))
    dispatcher = env.mailbox.dispatcher
    assert isinstance(dispatcher, RecordingDispatcher)
    dispatcher.woken.clear()

    said = await env.call(leader, "TeamSay", content="all hands")

    assert not said.ok
    assert said.text == (
        "Delivered to 1 recipient(s) (broadcast): w1. Not delivered (their inbox is full): w2."
    )
    assert (await env.hints(w1))[-1] == '<team-message from="Lead">\nall hands\n</team-message>'
    assert dispatcher.woken == [w1]


async def test_team_say_to_one_member_to_oneself_or_to_nobody(env: Env) -> None:
    leader, w1, w2 = await team_of_two(env)
    before = len(await env.hints(w2))

    direct = await env.call(w1, "TeamSay", member="w1", content="only you", to="Lead")
    to_self = await env.call(w1, "TeamSay", member="w1", content="me", to="w1")
    unknown = await env.call(w1, "TeamSay", member="w1", content="?", to="w9")

    assert direct.ok
    assert (await env.hints(leader))[-1] == '<team-message from="w1">\nonly you\n</team-message>'
    assert len(await env.hints(w2)) == before
    assert not to_self.ok
    assert "cannot send a message to yourself" in to_self.text
    assert not unknown.ok
    assert "No team member is named 'w9'. Members: Lead, w1, w2." in unknown.text


async def test_wrong_team_tool_arguments_name_the_field(env: Env) -> None:
    leader = (await env.session()).id

    no_description = await env.call(leader, "TeamCreate", name="crew")
    old_style = await env.call(leader, "TeamSay", to="w1", message="hi")

    assert not no_description.ok
    assert "- description: missing required argument (expected string)" in no_description.text
    assert not old_style.ok
    assert "- content: missing required argument (expected string)" in old_style.text
    assert "TypeError" not in old_style.text


async def test_agent_invite_borrows_an_invitable_agent(env: Env) -> None:
    monday = await env.store.create_agent(
        USER,
        AgentData(
            name="Monday",
            system_prompt="You write weekly reports.",
        ).model_copy(deep=True),
    )
    monday.data.chat_config.invite_config = InviteConfig(
        invitable=True, invite_description="Knows the weekly reports."
    )
    await env.store.update_agent(USER, monday.id, monday.data)
    leader = (await env.session()).id
    assert "AgentInvite" in names(await env.toolkit(leader))
    target = display_name(monday)

    before_team = await env.call(leader, "AgentInvite", target=target, prompt="summarise")
    assert (await env.call(leader, "TeamCreate", name="crew", description="reports")).ok
    invited = await env.call(leader, "AgentInvite", target=target, prompt="summarise")
    again = await env.call(leader, "AgentInvite", target=target, prompt="again")
    said = await env.call(leader, "TeamSay", content="thanks", to=target)

    assert not before_team.ok
    assert invited.ok, invited.text
    assert not again.ok
    assert said.ok
    record = await env.store.load_session(USER, leader)
    assert record.team_id is not None
    (member,) = (await env.teams.get(record.team_id)).members
    borrowed = await env.store.load_session(USER, member.session_id)
    assert (borrowed.agent_id, member.invited_agent_id) == (monday.id, monday.id)
    assert borrowed.config.system_prompt is None  # the agent keeps its own prompt
    hints = await env.hints(borrowed.id)
    assert hints[0].startswith("<system-reminder>You have been invited into the team 'crew'")
    assert hints[0].endswith('<team-message from="Lead">\nsummarise\n</team-message>')
    assert hints[1] == '<team-message from="Lead">\nthanks\n</team-message>'


async def test_agent_invite_is_offered_only_with_invitable_agents(env: Env) -> None:
    leader = (await env.session()).id

    assert "AgentInvite" not in names(await env.toolkit(leader))


# Schedules --------------------------------------------------------------------------------------


async def test_schedule_tools_create_list_view_and_delete(env: Env) -> None:
    session = (await env.session()).id
    hidden = await env.call(session, "ScheduleList")
    activated = await env.call(session, "reset_tools", schedule_tools=True)

    created = await env.call(
        session,
        "ScheduleCreate",
        name="digest",
        description="Summarise the news.",
        cron_expression="0 9 * * 1-5",
        timezone="Asia/Shanghai",
    )

    assert not hidden.ok
    assert "inactive tool group 'schedule_tools'" in hidden.text
    assert activated.ok
    assert created.ok, created.text
    (record,) = await env.service.list_schedules(USER)
    assert record.data.source is ScheduleSource.AGENT
    assert record.data.source_session_id == session
    assert record.data.permission_mode is PermissionMode.DONT_ASK
    assert record.data.chat_model_config == env.model
    assert env.control.synced == [record.id]
    listed = await env.call(session, "ScheduleList")
    viewed = await env.call(session, "ScheduleView", schedule_id=record.id)
    assert f"(ID: {record.id})" in listed.text
    assert "Cron:            0 9 * * 1-5 (timezone: Asia/Shanghai)" in viewed.text
    assert "Next run:        20" in viewed.text
    deleted = await env.call(session, "ScheduleDelete", schedule_id=record.id)
    gone = await env.call(session, "ScheduleView", schedule_id=record.id)
    assert deleted.ok
    assert await env.service.list_schedules(USER) == []
    assert not gone.ok
    assert f"No schedule with id {record.id!r}." in gone.text


async def test_schedule_create_refuses_bad_timing_and_unearned_bypass(env: Env) -> None:
    session = (await env.session()).id
    await env.call(session, "reset_tools", schedule_tools=True)

    bad_cron = await env.call(session, "ScheduleCreate", name="x", cron_expression="every day")
    bypass = await env.call(
        session, "ScheduleCreate", name="x", cron_expression="0 9 * * *", permission_mode="bypass"
    )
    missing = await env.call(session, "ScheduleCreate", name="x")

    assert not bad_cron.ok
    assert "Invalid schedule" in bad_cron.text
    assert not bypass.ok
    assert "only if this session runs in bypass mode" in bypass.text
    assert "- cron_expression: missing required argument (expected string)" in missing.text
    assert await env.service.list_schedules(USER) == []


# Background calls ------------------------------------------------------------------------------


async def test_tool_stop_cancels_a_background_call_which_then_reports_nothing(env: Env) -> None:
    session = (await env.session()).id
    await env.toolkit(session)
    sink = env.sinks[session]
    cancelled = asyncio.Event()

    async def slow() -> AsyncIterator[ToolChunk]:
        try:
            await asyncio.Event().wait()
            yield ToolChunk()
        finally:
            cancelled.set()

    stream = slow()
    call = ToolCallBlock(id="bg-1", name="Bash", input="{}")
    sink.adopt(call, asyncio.ensure_future(anext(stream)), stream)

    stopped = await env.call(session, "ToolStop", task_id="bg-1")
    await asyncio.wait_for(cancelled.wait(), 5)
    unknown = await env.call(session, "ToolStop", task_id="bg-1")

    assert stopped.ok
    assert stopped.text == "Task bg-1 stopped."
    assert not sink.active
    assert not unknown.ok
    assert "No tool call 'bg-1' is running in the background (running: none)." in unknown.text
    assert await env.hints(session) == []
