"""`Library`: a user's own MCP servers and skills, ready to put into any of their workspaces.

The library is user-level: putting an item into a session's workspace is a separate act
(`add_mcps_to`, `add_skills_to`), and removing an item from the library leaves the workspaces
that hold it alone. Names are unique per user, since workspaces know items by name.

How items get in: AgentScope installs them from hubs, which Troupe does not offer, and also
records, by hand, every MCP server added to a workspace (`POST /workspace/mcp`). Troupe does
the same for MCP servers and, there being no other way in, for skills uploaded to a workspace
(`POST /workspace/skill/upload`): in both cases the item is recorded unless the library holds
one of that name already (the library is where an item is defined; adding it to a second
workspace does not redefine it). A library skill keeps its files (AgentScope re-fetches them
from the hub), and an MCP server's configuration is stored encrypted: it may hold API keys.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from redis.asyncio import Redis
from redis.exceptions import WatchError

from actors.bus.keys import Keys
from actors.bus.redis_errors import storage_errors
from actors.errors import LibraryMCPNotFound, LibrarySkillNotFound, NameTaken
from actors.storage.crypto import SecretBox
from actors.storage.records import MCPRecord, SkillRecord
from actors.workspaces.requests import SkillBundle
from actors.workspaces.session_workspaces import WorkspaceHandle
from agent_core._ids import now_iso
from agent_core.mcp import MCPClientConfig
from agent_core.skill import Skill
from workspaces import WorkspaceError

MCPS = "mcps"
SKILLS = "skills"


@dataclass
class AddResult:
    """What landed in a workspace from the library, and what did not (and why)."""

    added: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


@storage_errors
class Library:
    """The MCP/skill libraries of a deployment's users, in Redis (every read scoped by user)."""

    def __init__(
        self, redis: Redis, keys: Keys, secrets: Callable[[], Awaitable[SecretBox]]
    ) -> None:
        """Keep records in `redis` under `keys`; MCP configs are sealed by `secrets()`."""
        self.redis = redis
        self.keys = keys
        self._secrets = secrets

    # MCP servers
    async def list_mcps(self, user_id: str) -> list[MCPRecord]:
        """The user's library MCP servers, by name."""
        raws = await self._raws(user_id, MCPS, self.keys.library_mcp)
        records = [await self._open_mcp(raw) for raw in raws]
        return sorted(records, key=lambda r: r.name)

    async def get_mcp(self, user_id: str, mcp_id: str) -> MCPRecord:
        """One of the user's library MCP servers.

        Raises:
            LibraryMCPNotFound: No such MCP server in the user's library.
        """
        raw = await self.redis.get(self.keys.library_mcp(mcp_id))
        record = None if raw is None else await self._open_mcp(raw)
        if record is None or record.user_id != user_id:
            raise LibraryMCPNotFound(mcp_id)
        return record

    async def remember_mcp(self, user_id: str, config: MCPClientConfig) -> MCPRecord | None:
        """Record an MCP server added by hand, unless the library has one of that name.

        Returns:
            The new record, or None when the name was taken.
        """
        record = MCPRecord(user_id=user_id, config=config)
        if not await self._claim(user_id, MCPS, record.name, record.id):
            return None
        key = self.keys.library_mcp(record.id)
        await self._create(user_id, MCPS, record.id, key, await self._seal_mcp(record))
        return record

    async def update_mcp(
        self, user_id: str, mcp_id: str, name: str | None, enabled: bool | None
    ) -> MCPRecord:
        """Rename and/or turn on or off one of the user's library MCP servers.

        Raises:
            LibraryMCPNotFound: No such MCP server in the user's library.
            NameTaken: Another of the user's library MCP servers has the new name.
        """
        record = await self.get_mcp(user_id, mcp_id)
        update: dict[str, object] = {"updated_at": now_iso()}
        if enabled is not None:
            update["enabled"] = enabled
        previous = record.name
        if name is not None and name != previous:
            if not await self._claim(user_id, MCPS, name, mcp_id):
                raise NameTaken(f"an MCP named {name!r} is already in your library")
            update["config"] = record.config.model_copy(update={"name": name})
        record = record.model_copy(update=update)
        if not await self.redis.set(
            self.keys.library_mcp(mcp_id), await self._seal_mcp(record), xx=True
        ):
            raise LibraryMCPNotFound(mcp_id)  # deleted meanwhile
        if record.name != previous:
            await self._release(user_id, MCPS, previous, mcp_id)
        return record

    async def delete_mcp(self, user_id: str, mcp_id: str) -> None:
        """Remove an MCP server from the user's library (workspaces holding it keep it).

        Raises:
            LibraryMCPNotFound: No such MCP server in the user's library.
        """
        record = await self.get_mcp(user_id, mcp_id)
        await self._delete(user_id, MCPS, mcp_id, record.name, [self.keys.library_mcp(mcp_id)])

    async def add_mcps_to(
        self, user_id: str, workspace: WorkspaceHandle, mcp_ids: Sequence[str]
    ) -> AddResult:
        """Put library MCP servers into a workspace, one at a time.

        One that is not in the library or cannot be added is reported in `failed` (by id or
        name) without stopping the others; one the workspace already holds is skipped.
        """
        present = {status.config.name for status in await workspace.mcp_statuses()}
        result = AddResult()
        for mcp_id in mcp_ids:
            try:
                record = await self.get_mcp(user_id, mcp_id)
            except LibraryMCPNotFound:
                result.failed[mcp_id] = "Not in your library."
                continue
            if record.name in present:
                continue
            try:
                await workspace.add_mcp(record.config)
            except WorkspaceError as exc:
                result.failed[record.name] = str(exc)
                continue
            present.add(record.name)
            result.added.append(record.name)
        return result

    # skills
    async def list_skills(self, user_id: str) -> list[SkillRecord]:
        """The user's library skills, by name."""
        raws = await self._raws(user_id, SKILLS, self.keys.library_skill)
        return sorted((SkillRecord.model_validate_json(r) for r in raws), key=lambda r: r.name)

    async def get_skill(self, user_id: str, skill_id: str) -> SkillRecord:
        """One of the user's library skills.

        Raises:
            LibrarySkillNotFound: No such skill in the user's library.
        """
        raw = await self.redis.get(self.keys.library_skill(skill_id))
        record = None if raw is None else SkillRecord.model_validate_json(raw)
        if record is None or record.user_id != user_id:
            raise LibrarySkillNotFound(skill_id)
        return record

    async def remember_skill(
        self, user_id: str, skill: Skill, bundle: SkillBundle
    ) -> SkillRecord | None:
        """Record a skill added by hand with its files, unless the library has one of that name.

        Returns:
            The new record, or None when the name was taken.
        """
        record = SkillRecord(
            user_id=user_id, name=skill.name, description=skill.description, markdown=skill.content
        )
        if not await self._claim(user_id, SKILLS, record.name, record.id):
            return None
        await self.redis.set(self.keys.library_skill_files(record.id), bundle.model_dump_json())
        key = self.keys.library_skill(record.id)
        await self._create(user_id, SKILLS, record.id, key, record.model_dump_json())
        return record

    async def delete_skill(self, user_id: str, skill_id: str) -> None:
        """Remove a skill from the user's library (workspaces holding it keep their copy).

        Raises:
            LibrarySkillNotFound: No such skill in the user's library.
        """
        record = await self.get_skill(user_id, skill_id)
        keys = [self.keys.library_skill(skill_id), self.keys.library_skill_files(skill_id)]
        await self._delete(user_id, SKILLS, skill_id, record.name, keys)

    async def add_skills_to(
        self, user_id: str, workspace: WorkspaceHandle, skill_ids: Sequence[str]
    ) -> AddResult:
        """Put library skills into a workspace, one at a time (failures as in `add_mcps_to`).

        A skill the workspace holds with the same content is left as it is; with other
        content, it is replaced by the library's.
        """
        result = AddResult()
        for skill_id in skill_ids:
            try:
                record = await self.get_skill(user_id, skill_id)
            except LibrarySkillNotFound:
                result.failed[skill_id] = "Not in your library."
                continue
            raw = await self.redis.get(self.keys.library_skill_files(skill_id))
            if raw is None:
                result.failed[record.name] = "Its files are missing from your library."
                continue
            try:
                await workspace.add_skill_bundle(SkillBundle.model_validate_json(raw))
            except WorkspaceError as exc:
                result.failed[record.name] = str(exc)
                continue
            result.added.append(record.name)
        return result

    # storage
    async def _claim(self, user_id: str, kind: str, name: str, item_id: str) -> bool:
        """Take `name` for `item_id` in the user's library; False when another item has it."""
        names = self.keys.library_names(user_id, kind)
        if await self.redis.hsetnx(names, name, item_id):
            return True
        holder = await self.redis.hget(names, name)
        if holder is not None and holder.decode() == item_id:
            return True
        key_of = self.keys.library_mcp if kind == MCPS else self.keys.library_skill
        if holder is not None and await self.redis.exists(key_of(holder.decode())):
            return False
        # Released meanwhile, or left to an item that no longer exists (a write cut short):
        # take it over, unless another caller does first.
        async with self.redis.pipeline(transaction=True) as pipe:
            try:
                await pipe.watch(names)
                if await pipe.hget(names, name) != holder:
                    return False
                pipe.multi()
                pipe.hset(names, name, item_id)
                await pipe.execute()
            except WatchError:
                return False
        return True

    async def _release(self, user_id: str, kind: str, name: str, item_id: str) -> None:
        names = self.keys.library_names(user_id, kind)
        holder = await self.redis.hget(names, name)
        if holder is not None and holder.decode() == item_id:
            await self.redis.hdel(names, name)

    async def _create(self, user_id: str, kind: str, item_id: str, key: str, payload: str) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(key, payload)
            pipe.zadd(self.keys.user_index(user_id, kind), {item_id: time.time()})
            await pipe.execute()

    async def _raws(self, user_id: str, kind: str, key_of: Callable[[str], str]) -> list[bytes]:
        ids = await self.redis.zrange(self.keys.user_index(user_id, kind), 0, -1)
        if not ids:
            return []
        raws = await self.redis.mget([key_of(i.decode()) for i in ids])
        return [raw for raw in raws if raw is not None]

    async def _delete(
        self, user_id: str, kind: str, item_id: str, name: str, keys: list[str]
    ) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(*keys)
            pipe.zrem(self.keys.user_index(user_id, kind), item_id)
            await pipe.execute()
        await self._release(user_id, kind, name, item_id)

    async def _seal_mcp(self, record: MCPRecord) -> str:
        data = record.model_dump(mode="json")
        data["config"] = (await self._secrets()).encrypt(json.dumps(data["config"]))
        return json.dumps(data)

    async def _open_mcp(self, raw: bytes) -> MCPRecord:
        data = json.loads(raw)
        data["config"] = json.loads((await self._secrets()).decrypt(data["config"]))
        return MCPRecord.model_validate(data)
