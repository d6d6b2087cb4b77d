"""`UserAgents`: each user's agents as a host's replies see them, reread only when they change.

Every reply hands its team tools the user's invitable agents. Reading them means every agent
record of the user, parsed, per reply; here a reply pays one counter read
(`RedisStorage.records_version`) while the user's agents stay as they were.
"""

from __future__ import annotations

from actors.storage.records import AgentRecord
from actors.storage.redis_storage import RedisStorage


class UserAgents:
    """The agents of the users a host serves, kept per user while their version stands.

    The records returned are shared between replies: read them, do not change them.
    """

    def __init__(self, storage: RedisStorage, capacity: int = 1024) -> None:
        self._storage = storage
        self._capacity = capacity
        self._kept: dict[str, tuple[int, list[AgentRecord]]] = {}

    async def of(self, user_id: str) -> list[AgentRecord]:
        """The user's agents, oldest first, as `RedisStorage.list_agents` reads them now."""
        # The version is read first: a write after it leaves a newer version to reread by.
        version = await self._storage.records_version(user_id, "agents")
        kept = self._kept.get(user_id)
        if kept is not None and kept[0] == version:
            return kept[1]
        agents = await self._storage.list_agents(user_id)
        if user_id not in self._kept and len(self._kept) >= self._capacity:
            self._kept.pop(next(iter(self._kept)))  # the oldest user kept
        self._kept[user_id] = (version, agents)
        return agents
