"""Skill loaders: where a toolkit's skills come from."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path

from agent_core.errors import ToolError
from agent_core.skill.skill import SKILL_FILE, Skill


class SkillLoaderBase(ABC):
    """A source of skills, read when a toolkit is built."""

    @abstractmethod
    def load(self) -> list[Skill]:
        """Return the source's skills.

        Raises:
            ToolError: When a skill is invalid or two skills share a name.
        """


class LocalSkillLoader(SkillLoaderBase):
    """Skills stored on the local filesystem, one directory (holding a SKILL.md) per skill.

    `directory` may itself be a skill (it holds a SKILL.md); with `scan_subdir`, each of its
    immediate, non-hidden subdirectories holding a SKILL.md is a skill too.
    """

    def __init__(self, directory: str | Path, scan_subdir: bool = True) -> None:
        """Describe the source; nothing is read until `load()`.

        Args:
            directory: The skill directory, or the directory holding skill directories.
            scan_subdir: Also load `*/SKILL.md` one level down.
        """
        self.directory = Path(directory)
        self.scan_subdir = scan_subdir

    def load(self) -> list[Skill]:
        """Read every SKILL.md, the directory's own first, then its subdirectories by name.

        Raises:
            ToolError: When the directory does not exist, a SKILL.md is invalid (the message
                names the file), or two skills share a name.
        """
        if not self.directory.is_dir():
            raise ToolError(f"skill directory {self.directory} does not exist")
        folders = [self.directory]
        if self.scan_subdir:
            folders += sorted(
                child
                for child in self.directory.iterdir()
                if child.is_dir() and not child.name.startswith(".")
            )
        skills: dict[str, Skill] = {}
        for folder in folders:
            skill_file = folder / SKILL_FILE
            if not skill_file.is_file():
                continue
            skill = Skill.parse(skill_file.read_text(encoding="utf-8-sig"), str(folder))
            if skill.name in skills:
                first = Path(skills[skill.name].path) / SKILL_FILE
                raise ToolError(f"skill {skill.name!r} is defined twice: {first} and {skill_file}")
            skills[skill.name] = skill
        return list(skills.values())

    def __repr__(self) -> str:
        return f"LocalSkillLoader({str(self.directory)!r}, scan_subdir={self.scan_subdir})"
