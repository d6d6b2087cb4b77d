"""The team tools of a session: TeamCreate, AgentCreate, TeamSay, TeamDelete (and AgentInvite).

Leaders (and sessions not yet in a team) get the leader set; workers get only TeamSay. Messages
are mailbox deliveries of `<team-message from="…">` hints, so members on any node receive them
and an idle recipient wakes up. Names, argument schemas and behaviour follow AgentScope
2.0.11's team tools (the descriptions are our own words).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from actors.bus.items import HintItem
from actors.bus.mailbox import Mailbox
from actors.sessions.lifecycle import destroy_session
from actors.storage.records import SessionRecord, TeamMembership, TeamRole
from actors.storage.redis_storage import RedisStorage
from actors.teams.store import SubAgentTemplate, TeamMember, TeamRecord, TeamStore
from agent_core.message import TextBlock, ToolResultState
from agent_core.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
)
from agent_core.state import AgentState
from agent_core.tool import ToolBase, ToolChunk

TEAM_CHANGING_TOOLS = frozenset({"TeamCreate", "AgentCreate", "AgentInvite", "TeamDelete"})


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


def tool_done(text: str, state: ToolResultState = ToolResultState.SUCCESS) -> ToolChunk:
    """The one, final result chunk of a team tool."""
    return ToolChunk(content=[TextBlock(text=text)], state=state, is_last=True)


def tool_failed(text: str) -> ToolChunk:
    """A team tool's ERROR result: a precondition the model can act on."""
    return tool_done(text, ToolResultState.ERROR)


class TeamTool(ToolBase):
    """Team coordination is the session's own business: never gated by permissions.

    The tools count as read-only (they touch no files), so a read-only (EXPLORE) worker can
    still report back.
    """

    is_read_only = True

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


def object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A tool's input schema: an object with `properties`, of which `required` are required."""
    return {"type": "object", "properties": properties, "required": required}


class TeamCreate(TeamTool):
    """Create a team led by this session."""

    name = "TeamCreate"
    description = """Create a team that you lead, and get its id.

## When to use it
When the task splits into parallel sub-tasks that specialised agents (members) can work on \
under your coordination. After creating the team, add each member with ``AgentCreate``; the \
``prompt`` you give ``AgentCreate`` is the member's first task and reaches it by itself, so do \
not follow it with ``TeamSay`` — wait for the member to report.

## When not to use it
- The task is small enough to do yourself.
- This session already leads a team (one team per session at a time).
"""
    input_schema = object_schema(
        {
            "name": {
                "type": "string",
                "description": "The team's display name, shown to the user.",
            },
            "description": {
                "type": "string",
                "description": "What the team is for: its goal and shared context. Every "
                "member's system prompt includes it.",
            },
        },
        ["name", "description"],
    )

    async def __call__(self, name: str, description: str, **_: Any) -> AsyncIterator[ToolChunk]:
        """Create the team and make this session its leader."""
        me = await self._me()
        if me.membership is not None:
            yield tool_failed(
                f"This session is already in team {me.membership.team_id}: a session can "
                "lead one team at a time. Dissolve it with TeamDelete first."
            )
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
        yield tool_done(
            f"Team {team.id} ({name}) created. You are the leader. Use AgentCreate to add "
            "members, then TeamSay to coordinate them."
        )


class AgentCreate(TeamTool):
    """Spawn a worker session into the team; it starts on its first task at once."""

    name = "AgentCreate"
    description = """Add a new member to the team you lead.

## When to use it
After ``TeamCreate``, once per member you need. Each call creates a worker agent for this \
team and hands it ``prompt`` as its first task: the worker starts on it immediately, so do \
not send it a ``TeamSay`` right after creating it.

## When not to use it
- You do not lead a team yet: call ``TeamCreate`` first.
- An existing member already has this role: give it more work with ``TeamSay`` instead.

## Effects
- Address the member as ``TeamSay(to=<name>)``. Names are unique within the team (the \
leader's name included).
- Members live as long as the team: ``TeamDelete`` deletes them.

## Important
You organise the team: assign the tasks, collect every member's report and produce the final \
answer. Members report to you directly; do not ask them to talk to each other and do not \
create "integrator" members.
"""

    def __init__(self, ctx: TeamContext) -> None:
        super().__init__(ctx)
        properties: dict[str, Any] = {
            "name": {
                "type": "string",
                "description": 'A short, team-unique name for the member, e.g. "researcher" '
                'or "coder-1". Others address it with TeamSay(to=<name>).',
            },
            "description": {
                "type": "string",
                "description": "One sentence on the member's role; it becomes part of the "
                "member's system prompt.",
            },
            "prompt": {
                "type": "string",
                "description": "The member's first task, delivered as soon as it exists. "
                "Make it concrete and self-contained: context, constraints, deliverables.",
            },
        }
        if set(ctx.templates) != {"default"}:
            kinds = "\n".join(f"- ``{t.type!r}``: {t.description}" for t in ctx.templates.values())
            properties["subagent_type"] = {
                "type": "string",
                "enum": list(ctx.templates),
                "description": "The kind of member to create. Each kind comes with its own "
                f"system prompt, permissions and task list:\n\n{kinds}",
            }
        self.input_schema = object_schema(properties, ["name", "description", "prompt"])

    async def __call__(
        self,
        name: str,
        description: str,
        prompt: str,
        subagent_type: str = "default",
        **_: Any,
    ) -> AsyncIterator[ToolChunk]:
        """Create the worker session and deliver its first task."""
        leader, team = await self._my_team()
        if team is None or team.leader_session_id != leader.id:
            yield tool_failed("Only a team leader can add members: create a team with TeamCreate.")
            return
        template = self.ctx.templates.get(subagent_type)
        if template is None:
            known = ", ".join(self.ctx.templates)
            yield tool_failed(f"Unknown subagent_type {subagent_type!r}; expected one of: {known}.")
            return
        problem = _name_problem(name, team)
        if problem is not None:
            yield tool_failed(problem)
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
        await self.ctx.mailbox.deliver(worker.id, team_message(team.leader_name, prompt))
        yield tool_done(f"Member '{name}' added to team '{team.name}' (session {worker.id}).")

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


_LEADER_SAY = """Send a message to one member of your team, or to all of them.

## When to use it
- Pass new requirements or context from the user to a member.
- Broadcast an update to every member (leave ``to`` empty).
- Ask a member a follow-up question.

## When not to use it
- To check on a member's progress: members report to you with ``TeamSay`` when they are done. \
Wait for their message instead of polling.
- Right after ``AgentCreate``: the member already has its first task from ``prompt``.
- Before ``TeamCreate``: there is no team to talk to yet.

Do not answer a member's report unless you have further questions or work for it.
"""

_WORKER_SAY = """Send a message to your team leader, or to everyone in the team.

## When to use it
- **When your task is done, you MUST report the result to the leader with this tool** (or \
say why it could not be done). The leader only learns what you send; do not end your turn \
without reporting.
- To share an intermediate finding or ask the leader for clarification.
- To broadcast what other members need to know (leave ``to`` empty).

## When not to use it
For your own thinking, or a thought of no use to anyone else.
"""


class TeamSay(TeamTool):
    """Send a message to a team member by name, or to every other member."""

    name = "TeamSay"
    is_concurrency_safe = True
    input_schema = object_schema(
        {
            "content": {
                "type": "string",
                "description": "The message, in plain language. The recipient reads it "
                "before its next step.",
            },
            "to": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": None,
                "description": "The recipient's member name. Leave it null (the default) to "
                "send the message to every other member of the team.",
            },
        },
        ["content"],
    )

    def __init__(self, ctx: TeamContext, role: TeamRole = TeamRole.LEADER) -> None:
        super().__init__(ctx)
        self.description = _WORKER_SAY if role is TeamRole.WORKER else _LEADER_SAY

    async def __call__(
        self, content: str, to: str | None = None, **_: Any
    ) -> AsyncIterator[ToolChunk]:
        """Deliver the message to the recipient's (or every other member's) inbox."""
        me, team = await self._my_team()
        if team is None or me.membership is None:
            yield tool_failed("This session is not in a team: call TeamCreate first.")
            return
        everyone = {team.leader_name: team.leader_session_id} | {
            m.name: m.session_id for m in team.members
        }
        if to is None:
            recipients = {n: s for n, s in everyone.items() if s != me.id}
        elif to not in everyone:
            known = ", ".join(sorted(everyone))
            yield tool_failed(f"No team member is named {to!r}. Members: {known}.")
            return
        elif everyone[to] == me.id:
            yield tool_failed("You cannot send a message to yourself; think it through instead.")
            return
        else:
            recipients = {to: everyone[to]}
        sender = me.membership.member_name
        puts = await self.ctx.mailbox.deliver_many(
            [(session_id, team_message(sender, content)) for session_id in recipients.values()]
        )
        full = {s for s, put in zip(recipients.values(), puts, strict=True) if not put.accepted}
        target = "broadcast" if to is None else f"member {to!r}"
        delivered = sorted(n for n, s in recipients.items() if s not in full)
        names = ", ".join(delivered) or "nobody"
        text = f"Delivered to {len(delivered)} recipient(s) ({target}): {names}."
        if full:
            missed = ", ".join(sorted(n for n, s in recipients.items() if s in full))
            yield tool_failed(f"{text} Not delivered (their inbox is full): {missed}.")
            return
        yield tool_done(text)


class TeamDelete(TeamTool):
    """Dissolve the team and end every worker session (leader only)."""

    name = "TeamDelete"
    description = """Dissolve the team you lead.

## When to use it
- The team's work is done and you have every deliverable you need.
- The team is stuck beyond repair and you want to start over.

## When not to use it
Members may still produce something useful: dissolving deletes them for good. (There is no \
way to remove a single member.)

## Effects
Every member session is deleted, then the team. Your own session stays, outside any team. \
This cannot be undone.
"""
    input_schema = object_schema({}, [])

    async def __call__(self, **_: Any) -> AsyncIterator[ToolChunk]:
        """Delete the workers and the team record."""
        me, team = await self._my_team()
        if team is None or team.leader_session_id != me.id:
            yield tool_failed("Only the team leader can delete the team.")
            return
        for member in team.members:
            worker = await self.ctx.storage.get_session_any_user(member.session_id)
            await destroy_session(
                self.ctx.storage, self.ctx.teams, self.ctx.mailbox.dispatcher, worker
            )
        await self.ctx.teams.delete(team.id)
        me.membership, me.team_id = None, None
        await self.ctx.storage.update_session(me)
        yield tool_done(f"Team '{team.name}' deleted; {len(team.members)} member session(s) ended.")


def _name_problem(name: str, team: TeamRecord) -> str | None:
    """Why `name` cannot name a new member of `team`, or None."""
    if not name.strip():
        return "A member needs a name."
    if "@" in name:
        return f"The member name {name!r} cannot contain '@'."
    if team.member(name) is not None or name == team.leader_name:
        return (
            f"A member named {name!r} already exists in team {team.name!r}: names are unique "
            "within the team (the leader's included). Pick another."
        )
    return None


def team_tools(ctx: TeamContext, membership: TeamMembership | None) -> list[ToolBase]:
    """The team tools a session gets: workers only TeamSay, everyone else the leader set."""
    if membership is not None and membership.role is TeamRole.WORKER:
        return [TeamSay(ctx, TeamRole.WORKER)]
    return [TeamCreate(ctx), AgentCreate(ctx), TeamSay(ctx), TeamDelete(ctx)]
