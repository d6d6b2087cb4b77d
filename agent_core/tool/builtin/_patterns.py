"""Glob pattern helpers shared by `Glob` and `Grep`: brace expansion and filter matching."""

from __future__ import annotations

import re

_BRACES = re.compile(r"\{([^{}]*)\}")
_MAGIC = re.compile(r"[*?\[{]")


def expand_braces(pattern: str) -> list[str]:
    """Expand `{a,b}` alternatives the way shells do (`*.{ts,tsx}` -> `*.ts`, `*.tsx`).

    Args:
        pattern: A glob pattern, possibly with (nested) brace groups.

    Returns:
        The patterns without braces, in order; `[pattern]` when there is nothing to expand.
    """
    match = _BRACES.search(pattern)
    if match is None:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    expanded: dict[str, None] = {}  # ordered set: nested groups can repeat an expansion
    for option in match.group(1).split(","):
        expanded.update(dict.fromkeys(expand_braces(head + option + tail)))
    return list(expanded)


def has_magic(part: str) -> bool:
    """Whether a path component contains glob syntax."""
    return _MAGIC.search(part) is not None


def split_globs(text: str) -> list[str]:
    """Split a `glob` filter argument into patterns: by spaces, and by commas outside braces."""
    patterns: list[str] = []
    for piece in text.split():
        if "{" in piece and "}" in piece:
            patterns.append(piece)
        else:
            patterns.extend(p for p in piece.split(",") if p)
    return patterns


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """Translate a gitignore-style glob: `*` and `?` stay within a directory, `**` crosses."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def _matches(pattern: str, relative: str) -> bool:
    """Whether one glob (no braces) selects `relative` (a POSIX path below the search root).

    Like ripgrep's `--glob`: a pattern without `/` is matched against the last component, one
    with a `/` against the whole relative path.
    """
    pattern = pattern.removeprefix("/")
    subject = relative if "/" in pattern else relative.rsplit("/", 1)[-1]
    return _glob_regex(pattern).match(subject) is not None


def glob_filter(patterns: list[str], relative: str) -> bool:
    """Whether a file passes a list of include (and `!`-prefixed exclude) globs.

    With no include patterns every file is included. An exclude matching the file or any of
    its parent directories wins.

    Args:
        patterns: Patterns as given to `Grep`'s `glob` argument.
        relative: The file's path below the search root, with `/` separators.

    Returns:
        True when the file should be searched.
    """
    includes = [e for p in patterns if not p.startswith("!") for e in expand_braces(p)]
    excludes = [e for p in patterns if p.startswith("!") for e in expand_braces(p[1:])]
    parts = relative.split("/")
    prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    if any(_matches(e, prefix) for e in excludes for prefix in prefixes):
        return False
    return not includes or any(_matches(e, relative) for e in includes)
