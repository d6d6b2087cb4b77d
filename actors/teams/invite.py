"""`AgentInvite`: a leader borrows one of the user's existing agents into its team.

Unlike `AgentCreate`, which spawns a worker from a sub-agent template in the leader's workspace,
the invited agent keeps its own definition (name, system prompt, loop settings) and workspace:
a new team session is opened on the existing agent record, starting from a fresh state (no
permission rules or working directories carry over from the leader). Only agents marked
invitable, with an invite description, can be borrowed; the pool is the snapshot taken when the
toolkit was assembled (it becomes the `target` enum) and is checked again at call time.
`TeamDelete` deletes the borrowed session, never the agent.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from actors.bus.items import HintItem
from actors.errors import AgentNotFound
from actors.storage.records import (
    AgentRecord,
    SessionConfig,
    SessionRecord,
    TeamMembership,
    TeamRole,
)
from actors.teams.store import TeamMember, TeamRecord
from actors.teams.tools import TeamContext, TeamTool, object_schema, tool_done, tool_failed
from agent_core.state import AgentState
from agent_core.tool import ToolChunk

HANDLE_LEN = 8
"""How many characters of the agent id tell invited agents apart (`Name@handle`)."""

_HEADER = """Borrow one of the user's existing agents into the team you lead.

(If ``AgentCreate`` is not among your tools, ignore what is said about it below.)

## How it differs from ``AgentCreate``
- ``AgentCreate`` makes a new agent that shares your workspace, so you can work on the same \\
files. An invited agent keeps its own workspace, which may or may not show the same files: do \\
not assume your paths resolve on its side.
- An invited agent keeps its name and configuration; you cannot change them.

## When to use it
- One of the user's agents already does what a role needs: reuse it rather than creating one.
- You want to hand work to, or notify, an agent specialised in a domain.

## When not to use it
- No invitable agent fits: use ``AgentCreate``.
- The member needs a team-specific prompt or role: use ``AgentCreate``.
- You do not lead a team yet: call ``TeamCreate`` first.

## Important
- Talk to invited agents with ``TeamSay``; keep messages self-contained. If a task really needs \\
both of you on the same files, first ask it (with ``TeamSay``) whether it can see them.
- ``TeamDelete`` ends the team session of an invited agent but not the agent, which may remember \\
earlier collaborations.

## Invitable agents"""


def display_name(agent: AgentRecord) -> str:
    """How an invited agent is addressed in the team: `Name@handle`."""
    return f"{agent.data.name}@{agent.id[:HANDLE_LEN]}"


def invitable(agent: AgentRecord) -> bool:
    """Whether the agent may be borrowed into a team."""
    config = agent.data.chat_config.invite_config
    return config.invitable and bool((config.invite_description or "").strip())


def _hint(team: TeamRecord, prompt: str) -> HintItem:
    leader = team.leader_name
    return HintItem(
        hint=(
            f"<system-reminder>You have been invited into the team '{team.name}' led by "
            f"'{leader}'. Team members talk ONLY through the `TeamSay` tool: when your task is "
            "done, or to reach the leader or the other members, use `TeamSay`."
            "</system-reminder>\n"
            f'<team-message from="{leader}">\n{prompt}\n</team-message>'
        ),
        source=json.dumps({"label": "team", "sublabel": leader}),
    )


class AgentInvite(TeamTool):
    """Open a team session on one of the user's invitable agents and give it a first task."""

    name = "AgentInvite"

    def __init__(self, ctx: TeamContext, pool: list[AgentRecord]) -> None:
        """Offer the agents of `pool` (non-empty, all invitable) as targets."""
        super().__init__(ctx)
        self._pool = {display_name(agent): agent for agent in pool}
        lines = [
            f"- ``{name!r}``: {agent.data.chat_config.invite_config.invite_description}"
            for name, agent in self._pool.items()
        ]
        self.description = _HEADER + "\n" + "\n".join(lines) + "\n"
        self.input_schema = object_schema(
            {
                "target": {
                    "type": "string",
                    "enum": list(self._pool),
                    "description": 'The agent to borrow, as "<name>@<handle>", one of the '
                    "listed invitable agents.",
                },
                "prompt": {
                    "type": "string",
                    "description": "The agent's first task, delivered as soon as it joins. "
                    "Make it self-contained: context, constraints, deliverables.",
                },
            },
            ["target", "prompt"],
        )

    async def __call__(self, target: str, prompt: str, **_: Any) -> AsyncIterator[ToolChunk]:
        """Open the borrowed session, add it to the team and deliver its first task."""
        leader, team = await self._my_team()
        if team is None or team.leader_session_id != leader.id:
            yield tool_failed(
                "Only a team leader can invite members: create a team with TeamCreate."
            )
            return
        agent = self._pool.get(target)
        if agent is None:
            yield tool_failed(f"No invitable agent {target!r}. Invitable: {', '.join(self._pool)}.")
            return
        try:
            agent = await self.ctx.storage.get_agent(leader.user_id, agent.id)
        except AgentNotFound:
            agent = None
        if agent is None or not invitable(agent):
            yield tool_failed(f"The agent {target!r} is no longer invitable.")
            return
        if team.member(target) is not None:
            yield tool_failed(f"{target!r} is already a member of team {team.name!r}.")
            return
        session = await self._borrow(leader, team, agent, target)
        team.members.append(
            TeamMember(
                name=target,
                session_id=session.id,
                description=agent.data.chat_config.invite_config.invite_description or "",
                subagent_type="invited",
                invited_agent_id=agent.id,
            )
        )
        await self.ctx.teams.save(team)
        await self.ctx.mailbox.deliver(session.id, _hint(team, prompt))
        yield tool_done(f"Invited {target!r} into team {team.name!r} (session {session.id}).")

    async def _borrow(
        self, leader: SessionRecord, team: TeamRecord, agent: AgentRecord, name: str
    ) -> SessionRecord:
        """A team session on `agent`: its own workspace and model when it has a session."""
        own = [
            s
            for s in await self.ctx.storage.list_sessions(leader.user_id, agent.id)
            if s.membership is None
        ]
        primary = own[0].config if own else None
        config = SessionConfig(
            workspace_id=primary.workspace_id if primary else "",
            name=f"team:{team.id}/invited:{agent.id[:HANDLE_LEN]}",
            chat_model_config=(primary and primary.chat_model_config)
            or leader.config.chat_model_config,
            fallback_chat_model_config=(primary and primary.fallback_chat_model_config)
            or leader.config.fallback_chat_model_config,
        )
        membership = TeamMembership(
            team_id=team.id,
            role=TeamRole.WORKER,
            member_name=name,
            leader_session_id=leader.id,
            subagent_type="invited",
        )
        return await self.ctx.storage.create_session(
            leader.user_id, agent.id, config, membership, AgentState()
        )
