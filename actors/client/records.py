"""`AgentsClient` and `CredentialsClient`: a user's agent and credential records."""

from __future__ import annotations

import contextlib

from actors.bus.mailbox import SessionDispatcher
from actors.bus.redis_errors import storage_errors
from actors.errors import SessionNotFound
from actors.sessions.lifecycle import delete_user_session
from actors.storage.records import AgentData, AgentRecord, CredentialRecord
from actors.wiring import RuntimeParts
from agent_core.credential import Credential


@storage_errors
class AgentsClient:
    """The user's agents. Redis outages surface as `StorageUnavailable`."""

    def __init__(self, parts: RuntimeParts[SessionDispatcher]) -> None:
        self._parts = parts
        self._storage = parts.storage

    async def create(self, user_id: str, data: AgentData) -> AgentRecord:
        """Store a new agent."""
        return await self._storage.create_agent(user_id, data)

    async def list_agents(self, user_id: str) -> list[AgentRecord]:
        """Return the user's agents."""
        return await self._storage.list_agents(user_id)

    async def get(self, user_id: str, agent_id: str) -> AgentRecord:
        """Return one of the user's agents.

        Raises:
            AgentNotFound: no such agent for this user.
        """
        return await self._storage.get_agent(user_id, agent_id)

    async def update(self, user_id: str, agent_id: str, data: AgentData) -> AgentRecord:
        """Replace an agent's data; its sessions see it from their next reply.

        Raises:
            AgentNotFound: no such agent for this user.
        """
        return await self._storage.update_agent(user_id, agent_id, data)

    async def delete(self, user_id: str, agent_id: str) -> None:
        """Delete an agent and every session of it, stopping their actors.

        Raises:
            AgentNotFound: no such agent for this user.
        """
        await self._storage.get_agent(user_id, agent_id)
        await self._delete_sessions_of(user_id, agent_id)
        await self._storage.delete_agent(user_id, agent_id)
        # A session created while the first pass ran would otherwise outlive its agent.
        await self._delete_sessions_of(user_id, agent_id)

    async def _delete_sessions_of(self, user_id: str, agent_id: str) -> None:
        parts = self._parts
        for session in await self._storage.list_sessions(user_id, agent_id):
            with contextlib.suppress(SessionNotFound):  # deleted concurrently
                await delete_user_session(
                    parts.storage, parts.teams, parts.dispatcher, user_id, session.id
                )


@storage_errors
class CredentialsClient:
    """The user's credentials (secrets encrypted at rest). Redis outages: `StorageUnavailable`."""

    def __init__(self, parts: RuntimeParts[SessionDispatcher]) -> None:
        self._storage = parts.storage

    async def create(self, user_id: str, data: Credential) -> CredentialRecord:
        """Store a new credential."""
        return await self._storage.create_credential(user_id, data)

    async def list_credentials(self, user_id: str) -> list[CredentialRecord]:
        """Return the user's credentials."""
        return await self._storage.list_credentials(user_id)

    async def get(self, user_id: str, credential_id: str) -> CredentialRecord:
        """Return one of the user's credentials (secrets in plaintext).

        Raises:
            CredentialNotFound: no such credential for this user.
        """
        return await self._storage.get_credential(user_id, credential_id)

    async def update(self, user_id: str, credential_id: str, data: Credential) -> CredentialRecord:
        """Replace a credential's data.

        Raises:
            CredentialNotFound: no such credential for this user.
        """
        return await self._storage.update_credential(user_id, credential_id, data)

    async def delete(self, user_id: str, credential_id: str) -> None:
        """Delete a credential.

        Raises:
            CredentialNotFound: no such credential for this user.
        """
        await self._storage.delete_credential(user_id, credential_id)
