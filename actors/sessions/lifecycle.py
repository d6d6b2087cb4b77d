"""Ending sessions: stop the owner, delete the data, and keep teams consistent."""

from __future__ import annotations

from actors.bus.mailbox import SessionDispatcher
from actors.storage.records import SessionRecord, TeamRole
from actors.storage.redis_storage import RedisStorage
from actors.teams.store import TeamNotFound, TeamStore


async def destroy_session(
    storage: RedisStorage,
    teams: TeamStore,
    dispatcher: SessionDispatcher,
    session: SessionRecord,
) -> list[str]:
    """Delete `session` and everything it owns; return the ids of every session deleted.

    A leader takes its team down with it (every worker session, then the team record); a
    worker leaves its team's member list.
    """
    deleted: list[str] = []
    membership = session.membership
    if membership is not None:
        try:
            team = await teams.get(membership.team_id)
        except TeamNotFound:
            team = None
        if team is not None and membership.role is TeamRole.LEADER:
            for member in team.members:
                await dispatcher.stop(member.session_id)
                await storage.delete_session(session.user_id, member.session_id, missing_ok=True)
                deleted.append(member.session_id)
            await teams.delete(team.id)
        elif team is not None:
            team.members = [m for m in team.members if m.session_id != session.id]
            await teams.save(team)
    await dispatcher.stop(session.id)
    await storage.delete_session(session.user_id, session.id, missing_ok=True)
    return [*deleted, session.id]


async def delete_user_session(
    storage: RedisStorage,
    teams: TeamStore,
    dispatcher: SessionDispatcher,
    user_id: str,
    session_id: str,
) -> None:
    """Delete one of the user's sessions as `destroy_session` does.

    Raises:
        SessionNotFound: no such session for this user.
    """
    session = await storage.load_session(user_id, session_id)
    await destroy_session(storage, teams, dispatcher, session)
