"""`InProcessDispatcher`: hosts session runtimes in this process (single-process servers, tests)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from actors.sessions.extensions import AgentExtensions, register_credential_types
from actors.sessions.user_agents import UserAgents
from actors.settings import RuntimeSettings
from actors.wiring import RuntimeParts, wire
from actors.workspaces.session_workspaces import shared_workspaces

if TYPE_CHECKING:
    from actors.schedules.service import ScheduleService
    from actors.sessions.runtime import SessionRuntime


class InProcessDispatcher:
    """One `SessionRuntime` per session, all in this process and event loop.

    `schedules` is what the sessions' schedule tools use: the `RuntimeClient` built on this
    dispatcher sets its own, so that the process runs a single scheduler.
    """

    def __init__(self, settings: RuntimeSettings) -> None:
        register_credential_types(settings.credential_types)
        self._settings = settings
        self.schedules: ScheduleService | None = None
        self._extensions = AgentExtensions(settings.agent_middlewares, settings.agent_tools)
        self._runtimes: dict[str, SessionRuntime] = {}
        self._user_agents: UserAgents | None = None
        self._parts: RuntimeParts[InProcessDispatcher] | None = None

    def runtime(self, session_id: str) -> SessionRuntime:
        """Return (creating it if needed) the runtime of a session."""
        if session_id not in self._runtimes:
            # Loaded on first use: the schedule service imports this module in every session
            # host, which otherwise would carry the agent loop before hosting a session.
            from actors.sessions.runtime import SessionRuntime

            if self._parts is None:
                self._parts = wire(self._settings, lambda _redis: self)
                self._user_agents = UserAgents(self._parts.storage)
            self._runtimes[session_id] = SessionRuntime(
                session_id,
                self._parts.storage,
                self._parts.mailbox,
                shared_workspaces(self._settings),
                templates=self._settings.sub_agent_templates,
                tool_timeout=self._settings.tool_timeout,
                schedules=self.schedules,
                extensions=self._extensions,
                outage_grace=self._settings.stream_outage_grace,
                user_agents=self._user_agents,
            )
        return self._runtimes[session_id]

    async def wake(self, session_id: str) -> None:
        """Wake the session's in-process runtime."""
        await self.runtime(session_id).wake()

    async def wake_many(self, session_ids: list[str]) -> None:
        """Wake each session's in-process runtime."""
        for session_id in session_ids:
            await self.wake(session_id)

    async def maintain(self) -> None:
        """Nothing to maintain in one process."""

    async def interrupt(self, session_id: str) -> bool:
        """Interrupt the session's running reply, if it runs here."""
        runtime = self._runtimes.get(session_id)
        return runtime is not None and await runtime.interrupt()

    async def stop(self, session_id: str) -> None:
        """Stop and forget the session's runtime."""
        runtime = self._runtimes.pop(session_id, None)
        if runtime is not None:
            await runtime.close()

    def health_checks(self) -> dict[str, Callable[[], Awaitable[str]]]:
        """None: sessions run in this process, on nothing but Redis."""
        return {}

    async def close(self) -> None:
        """Stop every runtime."""
        for session_id in list(self._runtimes):
            await self.stop(session_id)
        if self._parts is not None:
            await self._parts.redis.aclose()
