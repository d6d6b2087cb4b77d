"""`SkillStore`: skills installed under `skills/<name>/`, with the `.skills` name/hash index.

Blocking throughout; the workspace calls it from a worker thread. The index records, per
installed skill, its directory and the SHA-256 of its content, so that installing the same
skill again copies nothing.
"""

from __future__ import annotations

import logging
import shutil
import time
import uuid
from pathlib import Path

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError

from agent_core.deferred_model import DEFERRED, DeferredModel
from agent_core.errors import ToolError
from agent_core.skill import LocalSkillLoader, Skill
from agent_core.skill.skill import SKILL_FILE
from workspaces._files import (
    VCS_DIRS,
    component,
    exclusive,
    read_json_array,
    tree_sha256,
    write_json,
)
from workspaces.base import InstalledSkill
from workspaces.errors import CorruptWorkspace, InvalidSkill, SkillNotFound

log = logging.getLogger(__name__)

INDEX_FILE = ".skills"


class SkillIndexEntry(DeferredModel):
    """One line of the `.skills` index."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The skill's name (from its SKILL.md).")
    dir: str = Field(description="Its directory under skills/.")
    sha256: str = Field(description="Digest of the directory's content.")
    updated_at: float = Field(description="When it was installed or replaced (epoch s).")


SKILL_INDEX = TypeAdapter(list[SkillIndexEntry], config=DEFERRED)


class SkillStore:
    """The skills of one workspace."""

    def __init__(self, directory: Path, lock_dir: Path) -> None:
        """Keep skills in `directory`, taking the lock on `lock_dir` to change them."""
        self.directory = directory
        self._index_file = directory / INDEX_FILE
        self._lock_dir = lock_dir

    def installed(self) -> list[InstalledSkill]:
        """Every valid skill directory, by directory name; invalid ones are logged and skipped.

        Directories put there by hand count too (the index only speeds up re-installs).

        Raises:
            CorruptWorkspace: The index cannot be read back.
        """
        with exclusive(self._lock_dir):
            return self._installed()

    def add(self, source: Path) -> InstalledSkill:
        """Copy the skill at `source` in, unless the same content is installed under its name.

        Raises:
            InvalidSkill: `source` is not a directory with a valid SKILL.md, or contains the
                skills directory itself.
            CorruptWorkspace: The index cannot be read back.
        """
        source = source.expanduser().resolve()
        skill = parse_skill_dir(source)
        if self.directory.resolve().is_relative_to(source):
            raise InvalidSkill(f"{source} contains the workspace's skills directory")
        digest = tree_sha256(source)
        with exclusive(self._lock_dir):
            entries = self._index()
            previous = next((e for e in entries if e.name == skill.name), None)
            target = self.directory / component(skill.name)
            if previous is not None and previous.sha256 == digest and target.is_dir():
                return InstalledSkill(skill=parse_skill_dir(target), updated_at=previous.updated_at)
            self._replace(source, target)
            if previous is not None and previous.dir != target.name:
                shutil.rmtree(self.directory / previous.dir, ignore_errors=True)
            entry = SkillIndexEntry(
                name=skill.name, dir=target.name, sha256=digest, updated_at=time.time()
            )
            self._write_index([*(e for e in entries if e.name != skill.name), entry])
            return InstalledSkill(skill=parse_skill_dir(target), updated_at=entry.updated_at)

    def remove(self, name: str) -> None:
        """Delete the skill called `name` and its index entry.

        Raises:
            SkillNotFound: No installed skill has that name.
            CorruptWorkspace: The index cannot be read back.
        """
        with exclusive(self._lock_dir):
            found = next((s for s in self._installed() if s.skill.name == name), None)
            if found is None:
                raise SkillNotFound(name)
            folder = Path(found.skill.path)
            shutil.rmtree(folder)
            self._write_index([e for e in self._index() if e.dir != folder.name])

    def seed(self, sources: list[Path]) -> None:
        """Install `sources` into a brand-new store (no skills directory yet).

        A source that cannot be installed is logged and skipped.
        """
        with exclusive(self._lock_dir):
            if self.directory.exists():
                return
            self.directory.mkdir()
        for source in sources:
            try:
                self.add(source)
            except InvalidSkill as exc:
                log.warning("skill %s not seeded: %s", source, exc)

    def _installed(self) -> list[InstalledSkill]:
        if not self.directory.is_dir():
            return []
        dates = {e.dir: e.updated_at for e in self._index()}
        found: dict[str, InstalledSkill] = {}
        for folder in sorted(self.directory.iterdir()):
            if folder.name.startswith(".") or not (folder / SKILL_FILE).is_file():
                continue
            try:
                skill = parse_skill_dir(folder)
            except InvalidSkill as exc:
                log.warning("skipping skill directory %s: %s", folder, exc)
                continue
            if skill.name in found:
                log.warning("skipping %s: skill %r is installed twice", folder, skill.name)
                continue
            updated_at = dates.get(folder.name) or (folder / SKILL_FILE).stat().st_mtime
            found[skill.name] = InstalledSkill(skill=skill, updated_at=updated_at)
        return list(found.values())

    def _replace(self, source: Path, target: Path) -> None:
        """Put a copy of `source` at `target`, swapping it in whole."""
        self.directory.mkdir(parents=True, exist_ok=True)
        staging = self.directory / f".staging-{uuid.uuid4().hex}"
        retired = self.directory / f".retired-{uuid.uuid4().hex}"
        try:
            shutil.copytree(
                source, staging, symlinks=True, ignore=shutil.ignore_patterns(*VCS_DIRS)
            )
            if target.exists():
                target.rename(retired)
            staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            shutil.rmtree(retired, ignore_errors=True)

    def _index(self) -> list[SkillIndexEntry]:
        try:
            return SKILL_INDEX.validate_python(read_json_array(self._index_file))
        except ValidationError as exc:
            raise CorruptWorkspace(f"{self._index_file} is not a skill index: {exc}") from exc

    def _write_index(self, entries: list[SkillIndexEntry]) -> None:
        write_json(self._index_file, [e.model_dump(mode="json") for e in entries])


def parse_skill_dir(folder: Path) -> Skill:
    """The skill defined by `folder/SKILL.md`.

    Raises:
        InvalidSkill: The directory or its SKILL.md is missing or invalid.
    """
    if not (folder / SKILL_FILE).is_file():
        raise InvalidSkill(f"{folder} is not a skill directory: it has no {SKILL_FILE}")
    try:
        (skill,) = LocalSkillLoader(folder, scan_subdir=False).load()
    except ToolError as exc:
        raise InvalidSkill(str(exc)) from exc
    return skill
