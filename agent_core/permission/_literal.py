"""The literal reading of a rule: the spec's pattern syntax applied to the raw call input.

Troupe's tools match rules with more insight than the text gives (Bash per sub-command,
after quote removal; file tools against the resolved and the real path). The spec's reading
is plainer: for Bash, `PREFIX:*` matches a command that starts with `PREFIX ` (or is
PREFIX), a pattern with `*` wildcards matches the whole command, any other text matches
where it occurs in it; for Read, Write and Edit the rule is an `fnmatch` glob over
`file_path` as given, for Glob over `path` or `pattern`, for Grep over `path`; an empty
rule matches every call.

The engine uses both readings so that rules never grant more, nor guard less, than either
would: deny and ask rules apply when either reading matches, allow rules only when both do.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any

_FIELDS = {
    "Read": ("file_path",),
    "Write": ("file_path",),
    "Edit": ("file_path",),
    "Glob": ("path", "pattern"),
    "Grep": ("path",),
}


def literal_match(
    tool_name: str, rule_content: str | None, tool_input: dict[str, Any]
) -> bool | None:
    """Whether the literal reading of a rule matches the call; None when it has none.

    Only the built-in tools' rules have a literal reading; for a Grep call without a `path`
    (which searches the process's directory) there is none either.
    """
    if tool_name == "Bash":
        command = tool_input.get("command")
        if not isinstance(command, str):
            return None
        return not rule_content or _command_match(rule_content, command)
    fields = _FIELDS.get(tool_name)
    if fields is None:
        return None
    if not rule_content:
        return True
    values = [v for v in (tool_input.get(f) for f in fields) if isinstance(v, str) and v]
    if not values:
        return None if tool_name == "Grep" else False
    return any(fnmatch.fnmatch(value, rule_content) for value in values)


def _command_match(pattern: str, command: str) -> bool:
    if pattern.endswith(":*"):
        prefix = pattern[:-2].strip()
        return command == prefix or command.startswith(prefix + " ")
    if not has_wildcard(pattern):
        return _unescape(pattern) in command
    return wildcard_match(pattern, command)


def has_wildcard(pattern: str) -> bool:
    """Whether a Bash rule has an unescaped `*` (other than a `:*` suffix)."""
    return not pattern.endswith(":*") and _wildcard_regex(pattern)[1]


def wildcard_match(pattern: str, command: str) -> bool:
    """Whether `command` is all matched by a pattern whose `*`s stand for any text.

    A trailing ` *` may match nothing (`git *` matches `git`).
    """
    regex = _wildcard_regex(pattern)[0]
    if pattern.endswith("*") and not pattern.endswith("\\*"):
        base = _wildcard_regex(pattern[:-1].rstrip())[0]
        if re.fullmatch(base, command):
            return True  # `git *` also matches plain `git`
    return re.fullmatch(regex, command) is not None


def _wildcard_regex(pattern: str) -> tuple[str, bool]:
    r"""The pattern as a regex (`*` any text, `\*` a star, `\\` a backslash); has it `*`?"""
    out: list[str] = []
    wild = False
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\" and pattern[i + 1 : i + 2] in ("*", "\\"):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if pattern[i] == "*":
            out.append(".*")
            wild = True
        else:
            out.append(re.escape(pattern[i]))
        i += 1
    return "".join(out), wild


def _unescape(pattern: str) -> str:
    return re.sub(r"\\([*\\])", r"\1", pattern)
