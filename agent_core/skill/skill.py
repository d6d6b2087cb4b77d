"""Skills: SKILL.md instruction sets (frontmatter + markdown) and their system-prompt listing."""

from __future__ import annotations

import json
import re
from pathlib import PurePath

from pydantic import ConfigDict, Field

from agent_core.deferred_model import DeferredModel
from agent_core.errors import ToolError

SKILL_FILE = "SKILL.md"
_BLOCK_INDICATORS = frozenset({"|", "|-", "|+", ">", ">-", ">+"})
# The first line of a nested list or mapping (as opposed to a plain scalar continued below).
_NESTED = re.compile(r"^(- |-$|[^\s:#][^:]*:(\s|$))")


class Skill(DeferredModel):
    """One skill: the metadata the agent is shown up front, and the instructions it reads on demand.

    `content` is the whole SKILL.md (frontmatter included), which is what the `Skill` viewer
    returns.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="Skill name, unique within a toolkit.")
    description: str = Field(min_length=1, description="When and why to use the skill.")
    path: str = Field(description="The directory holding the skill's SKILL.md and its files.")
    content: str = Field(description="The full markdown of SKILL.md.")
    metadata: dict[str, str] = Field(
        default_factory=dict, description="Other frontmatter fields (license, version, ...)."
    )

    @classmethod
    def parse(cls, markdown: str, path: str) -> Skill:
        """Build a skill from the text of its SKILL.md.

        Args:
            markdown: The file's text; it must open with a `---` frontmatter block holding
                `name` and `description`.
            path: The skill's directory.

        Raises:
            ToolError: When the frontmatter is missing or malformed, or lacks a non-empty
                `name` or `description`; the message names the file.
        """
        source = PurePath(path) / SKILL_FILE
        try:
            fields = parse_frontmatter(markdown)
        except ValueError as exc:
            raise ToolError(f"invalid skill file {source}: {exc}") from exc
        missing = [key for key in ("name", "description") if not fields.get(key, "").strip()]
        if missing:
            keys = " and ".join(repr(key) for key in missing)
            raise ToolError(f"invalid skill file {source}: the frontmatter has no {keys}")
        name = fields.pop("name").strip()
        description = fields.pop("description").strip()
        return cls(name=name, description=description, path=path, content=markdown, metadata=fields)


def parse_frontmatter(markdown: str) -> dict[str, str]:
    """Read the `key: value` fields of a markdown file's leading `---` block.

    A small subset of YAML, enough for skill metadata: plain, single- and double-quoted
    scalars, `|` / `>` block scalars (without trailing newlines), and plain values continued on
    indented lines. A nested block (a mapping or list under a key) is kept as its dedented text.

    Raises:
        ValueError: When there is no frontmatter block or a line is not `key: value`.
    """
    lines = markdown.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError("it must start with a '---' frontmatter block")
    try:
        end = next(i for i, line in enumerate(lines[1:], 1) if line.strip() in ("---", "..."))
    except StopIteration:
        raise ValueError("the frontmatter block is not closed by a '---' line") from None
    entries: dict[str, tuple[str, list[str]]] = {}
    key: str | None = None
    for number, line in enumerate(lines[1:end], 2):
        if line[:1] in (" ", "\t") or not line.strip():
            if key is not None:
                entries[key][1].append(line)
            continue
        if line.lstrip().startswith("#"):
            continue
        key, colon, value = line.partition(":")
        key = key.strip()
        if not colon or not key:
            raise ValueError(f"line {number} is not 'key: value': {line!r}")
        entries[key] = (value.strip(), [])
    return {key: _value(first, rest) for key, (first, rest) in entries.items()}


def _value(first: str, rest: list[str]) -> str:
    body = _dedent(rest)
    if first in _BLOCK_INDICATORS:
        return "\n".join(body) if first[0] == "|" else _fold(body)
    if not first and body and _NESTED.match(body[0]):
        return "\n".join(body)
    if body:
        first = " ".join([first, *(line.strip() for line in body if line.strip())]).strip()
    return _scalar(first)


def _dedent(lines: list[str]) -> list[str]:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:] for line in lines]


def _fold(lines: list[str]) -> str:
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            paragraphs[-1].append(line.strip())
        elif paragraphs[-1]:
            paragraphs.append([])
    return "\n".join(" ".join(paragraph) for paragraph in paragraphs if paragraph)


def _scalar(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            decoded = json.loads(value)
        except ValueError:
            return value[1:-1]
        return decoded if isinstance(decoded, str) else value[1:-1]
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    comment = value.find(" #")
    return value[:comment].rstrip() if comment >= 0 else value


def skills_prompt_fragment(skills: list[Skill]) -> str:
    """The system-prompt section listing `skills` (name and description) and how to read them.

    Returns:
        The section, or an empty string when there are no skills.
    """
    if not skills:
        return ""
    listing = "\n".join(
        f"- {skill.name}: {' '.join(skill.description.split())}" for skill in skills
    )
    return (
        "# Skills\n\n"
        "Skills are instruction sets for specialised tasks. When a task matches a skill's "
        'description, first call the `Skill` tool with {"skill": "<name>"} to read its full '
        "instructions, then follow them using your other tools. A skill is not a tool and "
        "cannot be called directly.\n\n"
        f"Available skills:\n{listing}"
    )
