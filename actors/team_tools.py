"""The team tools of a session: TeamCreate, AgentCreate, TeamSay, TeamDelete.

Leaders (and sessions not yet in a team) get all four; workers get only TeamSay. Messages are
mailbox deliveries of `<team-message from="…">` hints, so members on any node receive them
and an idle recipient wakes up.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from actors.dispatch import Mailbox
from actors.items import HintItem
from actors.lifecycle import destroy_session
from actors.records import SessionRecord, TeamMembership, TeamRole
from actors.storage import RedisStorage
from actors.team import SubAgentTemplate, TeamMember, TeamRecord, TeamStore
from agent_core.message import TextBlock, ToolResultState
from agent_core.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionMode,
)
from agent_core.state import AgentState
from agent_core.tool import ToolBase, ToolChunk

BROADCAST = "*"
TEAM_CHANGING_TOOLS = frozenset({"TeamCreate", "AgentCreate", "TeamDelete"})


@dataclass
class TeamContext:
    """What the team tools of one session work with."""

    session_id: str
    agent_name: str
    storage: RedisStorage
    teams: TeamStore
    mailbox: Mailbox
    templates: dict[str, SubAgentTemplate]


def team_message(sender: str, text: str) -> HintItem:
    """A team message as the recipient's agent reads it."""
    return HintItem(
        hint=f'<team-message from="{sender}">\n{text}\n</team-message>',
        source=json.dumps({"label": "team", "sublabel": sender}),
    )


def _done(text: str, state: ToolResultState = ToolResultState.SUCCESS) -> ToolChunk:
    return ToolChunk(content=[TextBlock(text=text)], state=state, is_last=True)


def _failed(text: str) -> ToolChunk:
    return _done(text, ToolResultState.ERROR)


class _TeamTool(ToolBase):
    """Team coordination is the session's own business: never gated by permissions."""

    def __init__(self, ctx: TeamContext) -> None:
        self.ctx = ctx

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        """Always allowed."""
        return PermissionDecision(behavior=PermissionBehavior.ALLOW, reason="team coordination")

    async def _me(self) -> SessionRecord:
        return await self.ctx.storage.get_session_any_user(self.ctx.session_id)

    async def _my_team(self) -> tuple[SessionRecord, TeamRecord | None]:
        me = await self._me()
        if me.membership is None:
            return me, None
        return me, await self.ctx.teams.get(me.membership.team_id)


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


class TeamCreate(_TeamTool):
    """Create a team led by this session."""

    name = "TeamCreate"
    description = (
        "Create a team of agents that you lead. Then add members with AgentCreate and "
        "coordinate them with TeamSay."
    )
    input_schema = _schema(
        {
            "name": {"type": "string", "description": "Team name."},
            "description": {"type": "string", "description": "What the team is for."},
        },
        ["name"],
    )

    async def __call__(
        self, name: str, description: str = "", **_: Any
    ) -> AsyncIterator[ToolChunk]:
        """Create the team and make this session its leader."""
        me = await self._me()
        if me.membership is not None:
            yield _failed(f"You are already in team {me.membership.team_id}.")
            return
        team = TeamRecord(
            user_id=me.user_id,
            name=name,
            description=description,
            leader_session_id=me.id,
            leader_name=self.ctx.agent_name,
        )
        await self.ctx.teams.save(team)
        me.membership = TeamMembership(
            team_id=team.id,
            role=TeamRole.LEADER,
            member_name=self.ctx.agent_name,
            leader_session_id=me.id,
        )
        me.team_id = team.id
        await self.ctx.storage.update_session(me)
        yield _done(
            f"Team {team.id} ({name}) created. You are the leader. Use AgentCreate to add "
            "members, then TeamSay to coordinate them."
        )


class AgentCreate(_TeamTool):
    """Spawn a worker session into the team; it starts on its first task at once."""

    name = "AgentCreate"
    description = (
        "Add a worker agent to your team. It starts working on `prompt` immediately, in its "
        "own session, and reports back to you with TeamSay."
    )

    def __init__(self, ctx: TeamContext) -> None:
        super().__init__(ctx)
        properties: dict[str, Any] = {
            "name": {"type": "string", "description": "Unique member name."},
            "description": {"type": "string", "description": "The member's role."},
            "prompt": {"type": "string", "description": "The member's first task."},
            "permission_mode": {
                "type": "string",
                "enum": [m.value for m in PermissionMode],
                "description": "What the member may do without asking.",
            },
        }
        if set(ctx.templates) != {"default"}:
            properties["subagent_type"] = {
                "type": "string",
                "enum": sorted(ctx.templates),
                "description": "; ".join(
                    f"{t.type}: {t.description}" for t in ctx.templates.values()
                ),
            }
        self.input_schema = _schema(properties, ["name", "description", "prompt"])

    async def __call__(
        self,
        name: str,
        description: str,
        prompt: str,
        permission_mode: str | None = None,
        subagent_type: str = "default",
        **_: Any,
    ) -> AsyncIterator[ToolChunk]:
        """Create the worker session and deliver its first task."""
        leader, team = await self._my_team()
        if team is None or team.leader_session_id != leader.id:
            yield _failed("Only a team leader can add members: create a team with TeamCreate.")
            return
        template = self.ctx.templates.get(subagent_type)
        if template is None:
            yield _failed(f"Unknown subagent_type {subagent_type!r}.")
            return
        if team.member(name) is not None or name == team.leader_name or name == BROADCAST:
            yield _failed(f"The name {name!r} is taken in team {team.name!r}.")
            return
        worker = await self._create_worker(leader, team, template, name, description)
        team.members.append(
            TeamMember(
                name=name,
                session_id=worker.id,
                description=description,
                subagent_type=template.type,
            )
        )
        await self.ctx.teams.save(team)
        if permission_mode is not None:
            worker.config.permission_mode = PermissionMode(permission_mode)
            await self.ctx.storage.update_session(worker)
        await self.ctx.mailbox.deliver(worker.id, team_message(team.leader_name, prompt))
        yield _done(f"Member '{name}' added to team '{team.name}' (session {worker.id}).")

    async def _create_worker(
        self,
        leader: SessionRecord,
        team: TeamRecord,
        template: SubAgentTemplate,
        name: str,
        description: str,
    ) -> SessionRecord:
        prompt = template.render(team.name, team.description, name, description, team.leader_name)
        config = leader.config.model_copy(
            update={
                "name": name,
                "system_prompt": prompt,
                "context_config": template.context_config,
                "react_config": template.react_config,
                "permission_mode": None,
            }
        )
        membership = TeamMembership(
            team_id=team.id,
            role=TeamRole.WORKER,
            member_name=name,
            leader_session_id=leader.id,
            subagent_type=template.type,
        )
        state = AgentState(
            permission_context=template.permission_context.model_copy(deep=True),
            tasks_context=template.tasks_context.model_copy(deep=True),
        )
        return await self.ctx.storage.create_session(
            leader.user_id, leader.agent_id, config, membership, state
        )


class TeamSay(_TeamTool):
    """Send a message to a team member (or to everyone)."""

    name = "TeamSay"
    description = (
        "Send a message to a member of your team by name (the leader included), or to "
        f"everyone with to='{BROADCAST}'. The recipient reads it before its next step."
    )
    input_schema = _schema(
        {
            "to": {"type": "string", "description": f"Member name, or '{BROADCAST}'."},
            "message": {"type": "string", "description": "What to say."},
        },
        ["to", "message"],
    )

    async def __call__(self, to: str, message: str, **_: Any) -> AsyncIterator[ToolChunk]:
        """Deliver the message to the recipients' inboxes."""
        me, team = await self._my_team()
        if team is None or me.membership is None:
            yield _failed("You are not in a team.")
            return
        everyone = {team.leader_name: team.leader_session_id} | {
            m.name: m.session_id for m in team.members
        }
        sender = me.membership.member_name
        if to == BROADCAST:
            recipients = {n: s for n, s in everyone.items() if s != me.id}
        elif to in everyone:
            recipients = {to: everyone[to]}
        else:
            yield _failed(f"No member named {to!r}. Members: {', '.join(sorted(everyone))}.")
            return
        for session_id in recipients.values():
            await self.ctx.mailbox.deliver(session_id, team_message(sender, message))
        yield _done(f"Message sent to {', '.join(sorted(recipients)) or 'nobody'}.")


class TeamDelete(_TeamTool):
    """Dissolve the team and end every worker session (leader only)."""

    name = "TeamDelete"
    description = "Dissolve your team: every member session ends. Only the leader can do this."
    input_schema = _schema({}, [])

    async def __call__(self, **_: Any) -> AsyncIterator[ToolChunk]:
        """Delete the workers and the team record."""
        me, team = await self._my_team()
        if team is None or team.leader_session_id != me.id:
            yield _failed("Only the team leader can delete the team.")
            return
        for member in team.members:
            worker = await self.ctx.storage.get_session_any_user(member.session_id)
            await destroy_session(
                self.ctx.storage, self.ctx.teams, self.ctx.mailbox.dispatcher, worker
            )
        await self.ctx.teams.delete(team.id)
        me.membership, me.team_id = None, None
        await self.ctx.storage.update_session(me)
        yield _done(f"Team '{team.name}' deleted; {len(team.members)} member session(s) ended.")


def team_tools(ctx: TeamContext, membership: TeamMembership | None) -> list[ToolBase]:
    """The team tools a session gets: workers only TeamSay, everyone else all four."""
    if membership is not None and membership.role is TeamRole.WORKER:
        return [TeamSay(ctx)]
    return [TeamCreate(ctx), AgentCreate(ctx), TeamSay(ctx), TeamDelete(ctx)]
