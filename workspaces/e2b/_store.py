"""The workspace layout inside an E2B sandbox, read and written through the SDK's filesystem API.

Everything is written as `root` (see `workspaces.e2b.workspace` for why): the agent's
processes run as the sandbox's unprivileged user and can read the bookkeeping but not change
it. The layout and its formats are `LocalWorkspace`'s: the same `.mcp` array, skill index,
session files and content-addressed `data/`, rendered by the same code.

Changes are serialized per workspace object (an asyncio lock); two host processes writing one
sandbox's bookkeeping at once are not coordinated (the manager keeps one owner per sandbox).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import time
import uuid
from collections.abc import Hashable
from pathlib import Path, PurePosixPath
from typing import Any

from e2b import AsyncSandbox, FileNotFoundException, FileType, SandboxException
from pydantic import ValidationError

from agent_core.errors import ToolError
from agent_core.message import Msg, ToolResultBlock
from agent_core.skill import Skill
from agent_core.skill.skill import SKILL_FILE
from workspaces._files import VCS_DIRS, component, tree_sha256
from workspaces._mcps import Edit
from workspaces._offload import (
    CONTEXT_FILE,
    DataSink,
    data_name,
    render_context,
    render_tool_result,
    session_component,
    tool_result_stem,
)
from workspaces._skills import INDEX_FILE, SKILL_INDEX, SkillIndexEntry, parse_skill_dir
from workspaces.base import InstalledSkill
from workspaces.errors import CorruptWorkspace, InvalidSkill, SkillNotFound, WorkspaceError

log = logging.getLogger(__name__)

OWNER = "root"
"""The sandbox user that writes the bookkeeping."""


class SandboxFiles:
    """The sandbox's filesystem as the bookkeeping owner uses it; SDK failures become typed."""

    def __init__(self, sandbox: AsyncSandbox) -> None:
        self.sandbox = sandbox

    async def read(self, path: PurePosixPath) -> bytes | None:
        """The file's bytes, None when it does not exist."""
        try:
            data = await self.sandbox.files.read(str(path), format="bytes", user=OWNER)
        except FileNotFoundException:
            return None
        except SandboxException as exc:
            raise WorkspaceError(f"cannot read {path} in the sandbox: {exc}") from exc
        return bytes(data)

    async def write(self, path: PurePosixPath, data: bytes) -> None:
        """Create or replace the file (and its missing parents)."""
        try:
            await self.sandbox.files.write(str(path), data, user=OWNER)
        except SandboxException as exc:
            raise WorkspaceError(f"cannot write {path} in the sandbox: {exc}") from exc

    async def exists(self, path: PurePosixPath) -> bool:
        """Whether anything exists at `path`."""
        try:
            return await self.sandbox.files.exists(str(path), user=OWNER)
        except SandboxException as exc:
            raise WorkspaceError(f"cannot look at {path} in the sandbox: {exc}") from exc

    async def directories(self, path: PurePosixPath) -> dict[str, float]:
        """The subdirectories of `path` and their modification times ({} when it is missing)."""
        try:
            entries = await self.sandbox.files.list(str(path), user=OWNER)
        except FileNotFoundException:
            return {}
        except SandboxException as exc:
            raise WorkspaceError(f"cannot list {path} in the sandbox: {exc}") from exc
        return {e.name: e.modified_time.timestamp() for e in entries if e.type == FileType.DIR}

    async def remove(self, path: PurePosixPath) -> None:
        """Delete a file or a whole directory; a missing one is fine."""
        try:
            await self.sandbox.files.remove(str(path), user=OWNER)
        except FileNotFoundException:
            return
        except SandboxException as exc:
            raise WorkspaceError(f"cannot remove {path} in the sandbox: {exc}") from exc

    async def rename(self, source: PurePosixPath, target: PurePosixPath) -> None:
        """Move `source` to `target`."""
        try:
            await self.sandbox.files.rename(str(source), str(target), user=OWNER)
        except SandboxException as exc:
            raise WorkspaceError(f"cannot move {source} in the sandbox: {exc}") from exc


def _json_array(raw: bytes, path: PurePosixPath) -> list[Any]:
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise CorruptWorkspace(f"{path} is not valid JSON: {exc}") from exc
    if not isinstance(data, list):
        raise CorruptWorkspace(f"{path} must hold a JSON array, not {type(data).__name__}")
    return data


def _json_bytes(data: Any) -> bytes:
    return json.dumps(data, indent=2, ensure_ascii=False).encode() + b"\n"


class SandboxArrayDocument:
    """An `ArrayDocument` (`.mcp`) in the sandbox; its version is the digest of its bytes."""

    def __init__(self, files: SandboxFiles, path: PurePosixPath, lock: asyncio.Lock) -> None:
        self._files = files
        self._path = path
        self._lock = lock

    def __str__(self) -> str:
        return f"sandbox {self._files.sandbox.sandbox_id}:{self._path}"

    async def read(self) -> tuple[Hashable | None, list[Any]]:
        """The digest and entries of the file (None and [] when it is missing)."""
        raw = await self._files.read(self._path)
        if raw is None:
            return None, []
        return hashlib.sha256(raw).hexdigest(), _json_array(raw, self._path)

    async def seed(self, entries: list[Any]) -> None:
        """Write `entries` unless the file exists."""
        async with self._lock:
            if not await self._files.exists(self._path):
                await self._files.write(self._path, _json_bytes(entries))

    async def change(self, edit: Edit) -> None:
        """Rewrite the file with `edit` applied."""
        async with self._lock:
            _, entries = await self.read()
            await self._files.write(self._path, _json_bytes(edit(entries)))


class SandboxSkills:
    """Skills under `skills/<name>/` in the sandbox, with the `.skills` name/hash index."""

    def __init__(self, files: SandboxFiles, directory: PurePosixPath, lock: asyncio.Lock) -> None:
        self._files = files
        self.directory = directory
        self._index_file = directory / INDEX_FILE
        self._lock = lock

    async def installed(self) -> list[InstalledSkill]:
        """Every valid skill directory, by directory name; invalid ones are logged and skipped.

        Raises:
            CorruptWorkspace: The index cannot be read back.
        """
        async with self._lock:
            return await self._installed()

    async def _installed(self) -> list[InstalledSkill]:
        folders = await self._files.directories(self.directory)
        dates = {e.dir: e.updated_at for e in await self._index()}
        found: dict[str, InstalledSkill] = {}
        for name in sorted(folders):
            if name.startswith("."):
                continue
            folder = self.directory / name
            raw = await self._files.read(folder / SKILL_FILE)
            if raw is None:
                continue
            try:
                skill = Skill.parse(raw.decode(errors="replace"), str(folder))
            except ToolError as exc:
                log.warning("skipping skill directory %s: %s", folder, exc)
                continue
            if skill.name in found:
                log.warning("skipping %s: skill %r is installed twice", folder, skill.name)
                continue
            updated_at = dates.get(name) or folders[name]
            found[skill.name] = InstalledSkill(skill=skill, updated_at=updated_at)
        return list(found.values())

    async def add(self, source: Path) -> InstalledSkill:
        """Upload the skill at host path `source`, unless the same content is installed.

        Raises:
            InvalidSkill: `source` is not a directory with a valid SKILL.md.
            CorruptWorkspace: The index cannot be read back.
        """
        source, skill, digest = await asyncio.to_thread(_read_source, source)
        async with self._lock:
            entries = await self._index()
            previous = next((e for e in entries if e.name == skill.name), None)
            target = self.directory / component(skill.name)
            if (
                previous is not None
                and previous.sha256 == digest
                and await self._files.exists(target / SKILL_FILE)
            ):
                return InstalledSkill(skill=_shown(skill, target), updated_at=previous.updated_at)
            await self._replace(source, target)
            if previous is not None and previous.dir != target.name:
                await self._files.remove(self.directory / previous.dir)
            entry = SkillIndexEntry(
                name=skill.name, dir=target.name, sha256=digest, updated_at=time.time()
            )
            await self._write_index([*(e for e in entries if e.name != skill.name), entry])
            return InstalledSkill(skill=_shown(skill, target), updated_at=entry.updated_at)

    async def remove(self, name: str) -> None:
        """Delete the skill called `name` and its index entry.

        Raises:
            SkillNotFound: No installed skill has that name.
        """
        async with self._lock:
            found = next((s for s in await self._installed() if s.skill.name == name), None)
            if found is None:
                raise SkillNotFound(name)
            folder = PurePosixPath(found.skill.path)
            await self._files.remove(folder)
            await self._write_index([e for e in await self._index() if e.dir != folder.name])

    async def seed(self, sources: list[Path]) -> None:
        """Install `sources` into a brand-new store (no skills directory yet)."""
        async with self._lock:
            if await self._files.exists(self.directory):
                return
            await self._write_index([])
        for source in sources:
            try:
                await self.add(source)
            except InvalidSkill as exc:
                log.warning("skill %s not seeded: %s", source, exc)

    async def _replace(self, source: Path, target: PurePosixPath) -> None:
        """Upload `source` to a staging directory, then swap it in for `target`."""
        staging = self.directory / f".staging-{uuid.uuid4().hex}"
        try:
            for relative, data in await asyncio.to_thread(_tree_files, source):
                await self._files.write(staging / relative, data)
            await self._files.remove(target)
            await self._files.rename(staging, target)
        finally:
            await self._files.remove(staging)

    async def _index(self) -> list[SkillIndexEntry]:
        raw = await self._files.read(self._index_file)
        if raw is None:
            return []
        try:
            return SKILL_INDEX.validate_python(_json_array(raw, self._index_file))
        except ValidationError as exc:
            raise CorruptWorkspace(f"{self._index_file} is not a skill index: {exc}") from exc

    async def _write_index(self, entries: list[SkillIndexEntry]) -> None:
        await self._files.write(
            self._index_file, _json_bytes([e.model_dump(mode="json") for e in entries])
        )


def _read_source(source: Path) -> tuple[Path, Skill, str]:
    """The resolved skill directory, its parsed skill and the digest of its content."""
    source = source.expanduser().resolve()
    return source, parse_skill_dir(source), tree_sha256(source)


def _shown(skill: Skill, folder: PurePosixPath) -> Skill:
    return skill.model_copy(update={"path": str(folder)})


def _tree_files(source: Path) -> list[tuple[str, bytes]]:
    """The regular files under `source` (relative POSIX paths), VCS metadata left out.

    Symbolic links are not uploaded: the sandbox's filesystem API cannot create them, and
    following them could carry host files the skill does not own into the sandbox.
    """
    found: list[tuple[str, bytes]] = []
    for root, dirs, names in os.walk(source):
        dirs[:] = sorted(d for d in dirs if d not in VCS_DIRS)
        base = Path(root)
        for name in sorted(names):
            path = base / name
            if path.is_symlink():
                log.warning("skill file %s is a symbolic link: not uploaded", path)
            elif path.is_file():
                found.append((path.relative_to(source).as_posix(), path.read_bytes()))
    return found


class SandboxOffload:
    """Offloaded context and tool results under `sessions/`, payloads under `data/`."""

    def __init__(self, files: SandboxFiles, workdir: PurePosixPath, lock: asyncio.Lock) -> None:
        self._files = files
        self.sessions_dir = workdir / "sessions"
        self.data_dir = workdir / "data"
        self._lock = lock

    def session_dir(self, session_id: str) -> PurePosixPath:
        """The directory of one session's offloaded files."""
        return self.sessions_dir / session_component(session_id)

    async def context(self, session_id: str, msgs: list[Msg]) -> PurePosixPath:
        """Append `msgs` to the session's context file; return the file."""
        pending: dict[str, bytes] = {}
        lines = render_context(msgs, self._sink(pending)).encode()
        path = self.session_dir(session_id) / CONTEXT_FILE
        async with self._lock:
            await self._store(pending)
            existing = await self._files.read(path) or b""
            await self._files.write(path, existing + lines)
        return path

    async def tool_result(self, session_id: str, result: ToolResultBlock) -> PurePosixPath:
        """Write a tool result's full output to a new file of the session; return it."""
        pending: dict[str, bytes] = {}
        text = render_tool_result(result, self._sink(pending)).encode()
        folder, stem = self.session_dir(session_id), tool_result_stem(result)
        async with self._lock:
            await self._store(pending)
            attempt = 0
            path = folder / f"{stem}.txt"
            while await self._files.exists(path):
                attempt += 1
                path = folder / f"{stem}-{attempt}.txt"
            await self._files.write(path, text)
        return path

    async def clear(self, session_id: str) -> None:
        """Delete the session's directory."""
        async with self._lock:
            await self._files.remove(self.session_dir(session_id))

    def _sink(self, pending: dict[str, bytes]) -> DataSink:
        def sink(payload: bytes, media_type: str) -> str:
            name = data_name(payload, media_type)
            pending[name] = payload
            return Path(self.data_dir / name).as_uri()

        return sink

    async def _store(self, pending: dict[str, bytes]) -> None:
        for name, payload in pending.items():
            path = self.data_dir / name
            if not await self._files.exists(path):
                await self._files.write(path, payload)
