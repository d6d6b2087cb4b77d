"""Rule lookup and storage, and the optional tool hooks the engine looks for.

A tool may implement two hooks beyond `ToolBase`:

- `rule_subjects(tool_input)` (`RuleSubjects`): the call seen as several inputs, each passed to
  `match_rule` on its own. Bash returns one per sub-command, the file tools the logical and the
  real path. A deny or ask rule applies when it matches ANY subject; allow rules apply only when
  EVERY subject is matched by some allow rule, so `npm test && rm -rf x` is not allowed by
  `npm test:*`, and a deny rule on `rm:*` catches it.
- `read_paths(tool_input)` (`ReadPaths`): the absolute paths a read-only call reads, or None
  when unknown; used by `PermissionEngine(confine_reads=True)`.
- `check_read_only_in(tool_input, context)` (`ContextReadOnly`): `check_read_only` for tools
  whose verdict depends on the context (Bash honors `extra_read_only_commands`).

The built-in tools' rules are also read literally, on the raw input (see `_literal`): deny
and ask rules apply when either reading matches, allow rules only when both do.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from agent_core.permission._literal import has_wildcard, literal_match, wildcard_match
from agent_core.permission.errors import InvalidRuleError
from agent_core.permission.types import PermissionBehavior, PermissionContext, PermissionRule

if TYPE_CHECKING:
    from agent_core.tool.base import ToolBase

_CRUDE_SPLIT = re.compile(r"[\s;&|()<>`$\"'\\]+")


@runtime_checkable
class RuleSubjects(Protocol):
    """A tool whose calls are matched against rules as several subjects."""

    def rule_subjects(self, tool_input: dict[str, Any]) -> list[dict[str, Any]]:
        """The inputs `match_rule` is applied to for this call (never empty)."""
        ...


@runtime_checkable
class ReadPaths(Protocol):
    """A tool that can tell which paths a read-only call reads."""

    def read_paths(self, tool_input: dict[str, Any]) -> list[str] | None:
        """Absolute paths the call reads, or None when they cannot be determined."""
        ...


@runtime_checkable
class ContextReadOnly(Protocol):
    """A tool whose read-only verdict depends on the permission context."""

    async def check_read_only_in(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> bool:
        """Whether this call only reads, under `context`."""
        ...


@lru_cache(maxsize=256)
def implements(cls: type, hook: type) -> bool:
    """Whether a tool class has an optional hook (`RuleSubjects`, `ReadPaths`).

    Cached per class: checking a runtime protocol is slow.
    """
    return issubclass(cls, hook)


def subjects_of(tool: ToolBase, tool_input: dict[str, Any]) -> list[dict[str, Any]]:
    """The subjects rules are matched against: the tool's `rule_subjects`, or the input itself."""
    if implements(type(tool), RuleSubjects):
        return cast(RuleSubjects, tool).rule_subjects(tool_input) or [tool_input]
    return [tool_input]


def first_match(
    tool: ToolBase,
    rules: Sequence[PermissionRule],
    subjects: Sequence[dict[str, Any]],
    tool_input: dict[str, Any],
) -> PermissionRule | None:
    """The first rule matching any subject, or the raw input literally (deny and ask)."""
    for rule in rules:
        if literal_match(tool.name, rule.rule_content, tool_input) or any(
            tool.match_rule(rule.rule_content, subject) for subject in subjects
        ):
            return rule
    return None


def covers(
    tool: ToolBase,
    rules: Sequence[PermissionRule],
    subjects: Sequence[dict[str, Any]],
    tool_input: dict[str, Any],
) -> bool:
    """Whether every subject is matched by some rule, and some rule matches literally (allow).

    A rule without a literal reading (custom tools) counts as matching literally.
    """
    return (
        bool(rules)
        and any(literal_match(tool.name, r.rule_content, tool_input) is not False for r in rules)
        and all(
            any(tool.match_rule(rule.rule_content, subject) for rule in rules)
            for subject in subjects
        )
    )


def add_rules(context: PermissionContext, rules: Iterable[PermissionRule]) -> list[PermissionRule]:
    """Store rules in `context` by behavior and tool name, skipping ones already present.

    Rules are equal when tool, content and behavior are; the source does not matter.

    Returns:
        The rules that were added.

    Raises:
        InvalidRuleError: A rule's behavior is PASSTHROUGH, which no rule can have.
    """
    stores = {
        PermissionBehavior.ALLOW: context.allow_rules,
        PermissionBehavior.DENY: context.deny_rules,
        PermissionBehavior.ASK: context.ask_rules,
    }
    added: list[PermissionRule] = []
    for rule in rules:
        store = stores.get(rule.behavior)
        if store is None:
            raise InvalidRuleError(f"a rule cannot have behavior {rule.behavior.value!r}")
        existing = store.setdefault(rule.tool_name, [])
        if not any(r.rule_content == rule.rule_content for r in existing):
            existing.append(rule)
            added.append(rule)
    return added


def describe(rule: PermissionRule) -> str:
    """A rule as `Tool(content)`, for messages."""
    return rule.tool_name if rule.rule_content is None else f"{rule.tool_name}({rule.rule_content})"


@lru_cache(maxsize=1024)
def parse_command_rule(content: str) -> tuple[tuple[str, ...], bool]:
    """Split a command rule into its words and whether it is a prefix rule (`git commit:*`)."""
    text = content.strip()
    prefix = text.endswith(":*")
    if prefix:
        text = text[:-2]
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    return tuple(words), prefix


def words_match(content: str, words: Sequence[str]) -> bool:
    """Whether a command rule matches a command's words.

    `git commit:*` and plain `git commit` match commands whose words start with the rule's;
    a rule with `*` wildcards (`npm *`, `git * --dry-run`) matches the words joined by
    spaces as a whole; an empty rule matches everything.
    """
    if not content.strip():
        return True
    if has_wildcard(content.strip()):
        return wildcard_match(content.strip(), " ".join(words))
    pattern = parse_command_rule(content)[0]
    return tuple(words[: len(pattern)]) == pattern


def crude_match(content: str, command: str) -> bool:
    """Whether a command rule's words occur anywhere in a rough split of unparsable text.

    Errs towards matching, which is right for deny and ask rules; such commands are never
    allowed by rules (the Bash check asks for them first).
    """
    pattern = parse_command_rule(content)[0]
    if not pattern:
        return True
    words = [w for w in _CRUDE_SPLIT.split(command) if w]
    size = len(pattern)
    return any(tuple(words[i : i + size]) == pattern for i in range(len(words) - size + 1))
