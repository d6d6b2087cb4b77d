"""`reply_agent`: the agent one reply of a session runs — its tools, prompt, limits, wiring."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from actors.bus.mailbox import Mailbox
from actors.ops.metrics_middleware import MetricsMiddleware
from actors.schedules.tools import ScheduleContext
from actors.sessions.hints import InboxBackgroundSink, InboxHints
from actors.sessions.toolkit import SessionTools, session_toolkit
from actors.storage.records import AgentRecord, SessionRecord
from actors.storage.redis_storage import RedisStorage
from actors.teams.announcements import AnnounceChangesMiddleware
from actors.teams.store import SubAgentTemplate, TeamStore
from actors.teams.tools import TeamContext
from actors.workspaces.session_workspaces import SessionKit
from agent_core.agent import Agent, ModelConfig
from agent_core.middleware import MiddlewareBase, TracingMiddleware
from agent_core.model.base import ChatModelBase
from agent_core.state import AgentState
from agent_core.tool import ToolBase

if TYPE_CHECKING:
    from actors.schedules.service import ScheduleService


@dataclass(frozen=True)
class SessionServices:
    """What every reply's agent of one session is wired to, fixed for the session's life."""

    session_id: str
    storage: RedisStorage
    teams: TeamStore
    mailbox: Mailbox
    templates: dict[str, SubAgentTemplate]
    schedules: ScheduleService | None
    sink: InboxBackgroundSink
    tool_timeout: float


@dataclass(frozen=True)
class ReplySetup:
    """What one reply's set-up read and opened: records, models, workspace, hints, extras."""

    session: SessionRecord
    agent_record: AgentRecord
    model: ChatModelBase
    models: ModelConfig
    kit: SessionKit
    hints: InboxHints
    invitable_agents: list[AgentRecord]
    extra: tuple[list[MiddlewareBase], list[ToolBase]]


def reply_agent(services: SessionServices, state: AgentState, setup: ReplySetup) -> Agent:
    """The session's agent for one reply: workspace, team and extra tools, prompt, limits.

    Raises:
        ToolError: an extra tool's name is taken.
    """
    session, agent_record, kit = setup.session, setup.agent_record, setup.kit
    team = TeamContext(
        session_id=services.session_id,
        agent_name=agent_record.data.name,
        storage=services.storage,
        teams=services.teams,
        mailbox=services.mailbox,
        templates=services.templates,
    )
    schedules = None
    if services.schedules is not None and session.config.chat_model_config is not None:
        schedules = ScheduleContext(
            service=services.schedules,
            user_id=session.user_id,
            agent_id=session.agent_id,
            session_id=session.id,
            chat_model_config=session.config.chat_model_config,
        )
    kit.grant(state.permission_context)
    sink = services.sink
    sink.hand_over = kit.hand_over
    sink.stop_handed = kit.stop_background
    extra_middlewares, extra_tools = setup.extra
    toolkit = session_toolkit(
        kit.tools, SessionTools(session, team, sink, schedules, setup.invitable_agents)
    )
    for tool in extra_tools:
        toolkit.register(tool)
    chat = agent_record.data.chat_config
    membership = session.membership
    return Agent(
        name=membership.member_name if membership else agent_record.data.name,
        system_prompt=kit.system_prompt(
            session.config.system_prompt or agent_record.data.system_prompt
        ),
        model=setup.model,
        model_config=setup.models,
        toolkit=toolkit,
        state=state,
        offloader=kit.offloader,
        middlewares=[
            TracingMiddleware(),
            MetricsMiddleware(),
            AnnounceChangesMiddleware(),
            *extra_middlewares,
        ],
        context_config=session.config.context_config or chat.context_config,
        react_config=session.config.react_config or chat.react_config,
        hint_source=setup.hints,
        background_sink=sink,
        tool_timeout=services.tool_timeout,
        # Agents are untrusted: reading outside the workspace is never silently allowed.
        confine_reads=True,
    )
