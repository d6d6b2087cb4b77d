"""`MCPRegistry`: a workspace's MCP clients, mirrored from its `.mcp` file.

The file is the truth: other processes (API replicas, session hosts) may change it, so every
read compares its version and reconciles the live clients with it (connecting new servers,
closing removed or reconfigured ones). Writes re-read the file under the workspace lock, so
concurrent writers never lose each other's changes. Where the file lives is an `ArrayDocument`:
`LocalArrayDocument` on this host, a sandbox backend's own elsewhere.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import ValidationError

from agent_core.errors import MCPError
from agent_core.mcp import MCPClientConfig
from workspaces._files import Signature, exclusive, read_json_array, signature, write_json
from workspaces.errors import MCPExists, MCPNotFound, MCPUnavailable

if TYPE_CHECKING:
    from agent_core.mcp import MCPClient

ClientFactory = Callable[[MCPClientConfig], "MCPClient"]
"""Builds the (unconnected) client of a registered server; raises `MCPError` when invalid."""

Edit = Callable[[list[Any]], list[Any]]
"""Turns a document's entries into its new entries (may raise to leave it unchanged)."""

log = logging.getLogger(__name__)


class ArrayDocument(Protocol):
    """A persisted JSON array, read and changed whole (e.g. `.mcp`)."""

    def __str__(self) -> str:
        """Where it lives, for log lines."""
        ...

    async def read(self) -> tuple[Hashable | None, list[Any]]:
        """Its version (None when it does not exist) and entries ([] then).

        Raises:
            CorruptWorkspace: It is not a JSON array.
        """
        ...

    async def seed(self, entries: list[Any]) -> None:
        """Write `entries` unless the document exists."""
        ...

    async def change(self, edit: Edit) -> None:
        """Replace the entries by `edit(entries)`, with no writer in between.

        Raises:
            CorruptWorkspace: It is not a JSON array.
        """
        ...


class LocalArrayDocument:
    """An `ArrayDocument` in a host file, changed under the lock of its directory."""

    def __init__(self, file: Path, lock_dir: Path) -> None:
        """Keep the array in `file`, taking the lock on `lock_dir` to change it."""
        self.file = file
        self.lock_dir = lock_dir

    def __str__(self) -> str:
        return str(self.file)

    async def read(self) -> tuple[Hashable | None, list[Any]]:
        """The file's signature and entries."""
        return await asyncio.to_thread(self._read)

    def _read(self) -> tuple[Signature | None, list[Any]]:
        with exclusive(self.lock_dir):
            return signature(self.file), read_json_array(self.file)

    async def seed(self, entries: list[Any]) -> None:
        """Write the file unless it exists."""
        await asyncio.to_thread(self._seed, entries)

    def _seed(self, entries: list[Any]) -> None:
        with exclusive(self.lock_dir):
            if not self.file.exists():
                write_json(self.file, entries)

    async def change(self, edit: Edit) -> None:
        """Rewrite the file under the lock."""
        await asyncio.to_thread(self._change, edit)

    def _change(self, edit: Edit) -> None:
        with exclusive(self.lock_dir):
            write_json(self.file, edit(read_json_array(self.file)))


class MCPRegistry:
    """The live MCP clients of one workspace, kept in step with its `.mcp` file."""

    def __init__(self, document: ArrayDocument, factory: ClientFactory) -> None:
        """Mirror `document`.

        Args:
            document: The `.mcp` file (a JSON array of `MCPClientConfig`).
            factory: Builds each server's client (where and how it runs is the workspace's).
        """
        self._factory = factory
        self._document = document
        self._clients: dict[str, MCPClient] = {}
        self._errors: dict[str, str] = {}
        self._loaded: Hashable | None = None
        self._guard = asyncio.Lock()

    @property
    def clients(self) -> list[MCPClient]:
        """The live clients, in the file's order."""
        return list(self._clients.values())

    @property
    def errors(self) -> dict[str, str]:
        """Why entries failed to load or connect at the last reconciliation, by name."""
        return dict(self._errors)

    async def seed(self, configs: list[MCPClientConfig]) -> None:
        """Write `configs` as the file unless it exists."""
        await self._document.seed([c.model_dump(mode="json") for c in configs])

    async def sync(self) -> None:
        """Reconcile the live clients with the file if it changed since the last look.

        Raises:
            CorruptWorkspace: The file is not a JSON array.
        """
        async with self._guard:
            await self._sync()

    async def add(self, config: MCPClientConfig) -> MCPClient:
        """Connect a new server (when stateful), then append it to the file.

        Raises:
            MCPExists: The name is registered.
            MCPUnavailable: The configuration is rejected or the server cannot be connected.
        """
        async with self._guard:
            await self._sync()
            if config.name in self._clients:
                raise MCPExists(f"an MCP server named {config.name!r} is already registered")
            try:
                client = self._factory(config)
                await client.connect()
            except MCPError as exc:
                raise MCPUnavailable(str(exc)) from exc
            try:
                await self._document.change(lambda entries: _appended(entries, config))
            except BaseException:
                await client.close()
                raise
            # The file signature is left stale on purpose: the next sync picks up whatever
            # other writers changed meanwhile, and keeps this client (its config matches).
            self._clients[config.name] = client
            self._errors.pop(config.name, None)
            return client

    async def remove(self, name: str) -> None:
        """Drop a server from the file and close its client.

        Raises:
            MCPNotFound: The file has no entry of that name.
        """
        async with self._guard:
            await self._document.change(lambda entries: _dropped(entries, name))
            client = self._clients.pop(name, None)
            self._errors.pop(name, None)
            if client is not None:
                await client.close()

    async def close(self) -> None:
        """Close every client; the next sync reconnects from the file."""
        async with self._guard:
            clients, self._clients = list(self._clients.values()), {}
            self._loaded = None
            await asyncio.gather(*(client.close() for client in clients))

    async def _sync(self) -> None:
        current, entries = await self._document.read()
        if current is not None and current == self._loaded:
            return
        configs, errors = _parse(entries)
        stale = [
            name for name, client in self._clients.items() if configs.get(name) != client.config
        ]
        for name in stale:
            await self._clients.pop(name).close()
        fresh = [config for name, config in configs.items() if name not in self._clients]
        async with asyncio.TaskGroup() as group:
            tasks = {c.name: group.create_task(_open(c, self._factory)) for c in fresh}
        for name, task in tasks.items():
            client, error = task.result()
            if client is not None:
                self._clients[name] = client
            if error is not None:
                errors[name] = error
                log.warning("MCP server %r of %s: %s", name, self._document, error)
        self._clients = {name: self._clients[name] for name in configs if name in self._clients}
        self._errors = errors
        self._loaded = current


def _appended(entries: list[Any], config: MCPClientConfig) -> list[Any]:
    if any(_entry_name(entry) == config.name for entry in entries):
        raise MCPExists(f"an MCP server named {config.name!r} is already registered")
    return [*entries, config.model_dump(mode="json")]


def _dropped(entries: list[Any], name: str) -> list[Any]:
    kept = [entry for entry in entries if _entry_name(entry) != name]
    if len(kept) == len(entries):
        raise MCPNotFound(name)
    return kept


def _entry_name(entry: Any) -> str | None:
    name = entry.get("name") if isinstance(entry, dict) else None
    return name if isinstance(name, str) else None


def _parse(entries: list[Any]) -> tuple[dict[str, MCPClientConfig], dict[str, str]]:
    """Valid configurations by name (first wins), and why the other entries were skipped."""
    configs: dict[str, MCPClientConfig] = {}
    errors: dict[str, str] = {}
    for index, entry in enumerate(entries):
        label = _entry_name(entry) or f"#{index}"
        try:
            config = MCPClientConfig.model_validate(entry)
        except ValidationError as exc:
            errors[label] = f"invalid entry in .mcp: {exc.errors()[0]['msg']}"
            continue
        if config.name in configs:
            errors[label] = "registered twice in .mcp; the first entry is used"
            continue
        configs[config.name] = config
    return configs, errors


async def _open(
    config: MCPClientConfig, factory: ClientFactory
) -> tuple[MCPClient | None, str | None]:
    """A client for `config`, connected when stateful, and the connection error if any.

    A client whose connection failed is kept: its next use retries the connection.
    """
    try:
        client = factory(config)
    except MCPError as exc:
        return None, str(exc)
    try:
        await client.connect()
    except MCPError as exc:
        return client, str(exc)
    return client, None
