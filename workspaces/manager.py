"""Workspace managers: which workspace serves a request, and how long it stays open."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from agent_core.mcp import MCPClientConfig
from workspaces._files import component
from workspaces.base import WorkspaceBase
from workspaces.local import LocalWorkspace

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkspaceKey:
    """Identifies a workspace: a workspace id within one user's workspaces."""

    user_id: str
    workspace_id: str


class WorkspaceManagerBase(ABC):
    """Allocates workspaces to requests and owns their lifecycle.

    The isolation policy is the subclass's: its `get_workspace` decides which requests share
    a workspace (the spec's per-session manager overrides `get_workspace`,
    `create_workspace`, `close` and `close_all`). Leaving the manager (`async with`) closes
    every workspace.
    """

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close_all()

    @abstractmethod
    async def get_workspace(
        self, user_id: str, agent_id: str, session_id: str, workspace_id: str | None = None
    ) -> WorkspaceBase:
        """Return the open workspace serving the request, opening it on a cache miss.

        Raises:
            WorkspaceError: The workspace could not be opened.
        """

    @contextlib.asynccontextmanager
    async def lease(
        self, user_id: str, agent_id: str, session_id: str, workspace_id: str | None = None
    ) -> AsyncIterator[WorkspaceBase]:
        """The request's open workspace, never evicted while the block runs.

        This default suits a manager that evicts nothing; one that evicts idle workspaces
        overrides it to hold them while leased.

        Raises:
            WorkspaceError: The workspace could not be opened (on entering).
        """
        yield await self.get_workspace(user_id, agent_id, session_id, workspace_id)

    async def create_workspace(self, user_id: str, agent_id: str, session_id: str) -> WorkspaceBase:
        """Return the workspace the isolation policy assigns to a new session.

        Raises:
            WorkspaceError: The workspace could not be opened.
        """
        return await self.get_workspace(user_id, agent_id, session_id)

    @abstractmethod
    async def close(self, key: WorkspaceKey) -> None:
        """Close one workspace and forget it (a no-op when it is not open)."""

    @abstractmethod
    async def close_all(self) -> None:
        """Close every open workspace (on shutdown)."""


@dataclass
class _Entry:
    opening: asyncio.Task[WorkspaceBase]
    last_used: float
    leases: int = 0


class CachingWorkspaceManager(WorkspaceManagerBase):
    """Open workspaces cached per `WorkspaceKey`, closed when idle for `ttl` seconds.

    One workspace per agent unless a session names its workspace; a subclass says how a
    workspace of a key is made (`_new_workspace`). An idle workspace (not leased for `ttl`
    seconds) is closed — its MCP servers stopped, its container or sandbox released — and
    re-opened on the next request. Entering the manager (`async with`) runs the eviction in
    the background; `evict_idle()` runs it once.
    """

    def __init__(
        self,
        *,
        ttl: float = 3600.0,
        default_mcps: Sequence[MCPClientConfig] = (),
        skill_paths: Sequence[str | Path] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Cache workspaces for `ttl` idle seconds.

        Args:
            ttl: Seconds an unused workspace stays open.
            default_mcps: MCP servers registered in every brand-new workspace.
            skill_paths: Skills installed in every brand-new workspace.
            clock: Monotonic seconds (replaceable in tests).
        """
        if ttl <= 0:
            raise ValueError("ttl must be positive")
        self.ttl = ttl
        self.default_mcps = list(default_mcps)
        self.skill_paths = list(skill_paths)
        self._clock = clock
        self._entries: dict[WorkspaceKey, _Entry] = {}
        self._reaper: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Self:
        if self._reaper is None:
            self._reaper = asyncio.create_task(self._reap(), name="workspace-reaper")
        return self

    @property
    def open_keys(self) -> list[WorkspaceKey]:
        """The workspaces currently open (or opening)."""
        return list(self._entries)

    def key(
        self, user_id: str, agent_id: str, session_id: str, workspace_id: str | None = None
    ) -> WorkspaceKey:
        """Per agent: the session's own `workspace_id` if it names one, else the agent id."""
        return WorkspaceKey(user_id, workspace_id or agent_id)

    async def get_workspace(
        self, user_id: str, agent_id: str, session_id: str, workspace_id: str | None = None
    ) -> WorkspaceBase:
        """The open workspace for the request (opened from disk if it is not cached)."""
        return await self._acquire(self.key(user_id, agent_id, session_id, workspace_id))

    @contextlib.asynccontextmanager
    async def lease(
        self, user_id: str, agent_id: str, session_id: str, workspace_id: str | None = None
    ) -> AsyncIterator[WorkspaceBase]:
        """The request's workspace, kept open (never evicted) until the block exits.

        Raises:
            WorkspaceError: The workspace could not be opened.
        """
        key = self.key(user_id, agent_id, session_id, workspace_id)
        entry = self._entry(key)
        entry.leases += 1
        try:
            yield await self._acquire(key)
        finally:
            entry.leases -= 1
            entry.last_used = self._clock()

    async def evict_idle(self) -> list[WorkspaceKey]:
        """Close every open workspace unused for `ttl` seconds; return their keys."""
        now = self._clock()
        idle = [
            key
            for key, entry in self._entries.items()
            if entry.leases == 0 and entry.opening.done() and now - entry.last_used >= self.ttl
        ]
        for key in idle:
            await self.close(key)
        return idle

    async def close(self, key: WorkspaceKey) -> None:
        """Close the workspace of `key`, if open."""
        entry = self._entries.pop(key, None)
        if entry is None:
            return
        try:
            # An opening in progress is let finish, so that nothing it connected leaks.
            workspace = await asyncio.shield(entry.opening)
        except Exception:
            return  # it never opened
        await workspace.close()

    async def close_all(self) -> None:
        """Stop the eviction and close every open workspace."""
        if self._reaper is not None:
            self._reaper.cancel()
            await asyncio.gather(self._reaper, return_exceptions=True)
            self._reaper = None
        for key in list(self._entries):
            await self.close(key)

    def _entry(self, key: WorkspaceKey) -> _Entry:
        entry = self._entries.get(key)
        if entry is None:
            workspace = self._new_workspace(key)
            task = asyncio.create_task(_opened(workspace), name=f"workspace-open:{key}")
            entry = _Entry(opening=task, last_used=self._clock())
            self._entries[key] = entry
        return entry

    @abstractmethod
    def _new_workspace(self, key: WorkspaceKey) -> WorkspaceBase:
        """The (unopened) workspace of `key`."""

    async def _acquire(self, key: WorkspaceKey) -> WorkspaceBase:
        entry = self._entry(key)
        entry.last_used = self._clock()
        try:
            # Shielded: a caller giving up must not abort an opening other callers await.
            return await asyncio.shield(entry.opening)
        except Exception:
            if self._entries.get(key) is entry:
                del self._entries[key]
            raise

    async def _reap(self) -> None:
        interval = min(self.ttl / 2, 60.0)
        while True:
            await asyncio.sleep(interval)
            try:
                await self.evict_idle()
            except Exception:  # a failing close must not stop later evictions
                log.exception("evicting idle workspaces failed")


class LocalWorkspaceManager(CachingWorkspaceManager):
    """`LocalWorkspace`s under `basedir`, one per agent unless a session names its workspace.

    A workspace lives in `{basedir}/{user_id}/{workspace_id}` (each part path-encoded), so
    that a workspace id a user chose never reaches another user's files. Open workspaces are
    cached; one idle (not leased) for `ttl` seconds is closed — its MCP servers stopped — and
    re-opened from disk on the next request. Entering the manager (`async with`) runs the
    eviction in the background; `evict_idle()` runs it once.
    """

    def __init__(
        self,
        basedir: str | Path,
        *,
        ttl: float = 3600.0,
        default_mcps: Sequence[MCPClientConfig] = (),
        skill_paths: Sequence[str | Path] = (),
        clock: Callable[[], float] = time.monotonic,
        factory: Callable[..., WorkspaceBase] = LocalWorkspace,
    ) -> None:
        """Keep workspaces under `basedir`.

        Args:
            basedir: The directory holding every workspace.
            ttl: Seconds an unused workspace stays open.
            default_mcps: MCP servers registered in every brand-new workspace.
            skill_paths: Skills installed in every brand-new workspace.
            clock: Monotonic seconds (replaceable in tests).
            factory: Builds a workspace: called as `factory(workdir, workspace_id,
                default_mcps=..., skill_paths=...)` (default `LocalWorkspace`; e.g. a
                `SandboxWorkspace` with its policy bound).
        """
        super().__init__(ttl=ttl, default_mcps=default_mcps, skill_paths=skill_paths, clock=clock)
        self.basedir = Path(basedir).expanduser().absolute()
        self._factory = factory

    def workdir(self, key: WorkspaceKey) -> Path:
        """Where the workspace of `key` lives."""
        return self.basedir / component(key.user_id) / component(key.workspace_id)

    def _new_workspace(self, key: WorkspaceKey) -> WorkspaceBase:
        """The (unopened) workspace of `key`."""
        return self._factory(
            self.workdir(key),
            key.workspace_id,
            default_mcps=self.default_mcps,
            skill_paths=self.skill_paths,
        )


async def _opened(workspace: WorkspaceBase) -> WorkspaceBase:
    await workspace.initialize()
    return workspace
