"""Which commands count as read-only by default: a short list, read the way the spec's is.

Troupe's analysis (`_analysis`, `_readonly`) proves far more commands read-only than it
auto-allows. A command line is auto-allowed only when the analysis proves it read-only AND it
is on the default list below, checked on its text the way AgentScope 2.0.11 checks it: the
spec's examples (git status/log/diff/show/blame/grep/config --get/--list, ls, cat, head,
tail, grep, rg, find, tree, stat, wc, pwd, which, docker ps/images/logs/inspect/info, gh repo
view/issue list/pr list/status, npm list, pip list/show, node/python --version) and the few
AgentScope adds (less, more, file, ag, ack, whereis, type, echo, printf, cd, true, false, git
ls-files/ls-tree/cat-file/rev-parse/rev-list/describe/shortlog, docker version). The spec
also names `git branch` and `git reflog`, which AgentScope asks about; Troupe follows the
stricter reading. Anything wider is opt-in (`PermissionContext.extra_read_only_commands`).

The text check is deliberately literal: a line containing `>` anywhere is never read-only;
each simple command must start with a listed prefix followed by a space (`git  status` with
two spaces or `'git' status` do not), or be one of the plain names of `_PLAIN_NAMES` after
`NAME=value` words; `find` with an action that writes or runs and `git` with an option
that could write a file or start a program are not.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence

DEFAULT_READ_ONLY: tuple[str, ...] = (
    *("ls", "cat", "head", "tail", "less", "more", "file", "stat", "wc", "grep", "rg", "ag"),
    *("ack", "find", "tree", "pwd", "which", "whereis", "type"),
    *("git status", "git log", "git diff", "git show", "git ls-files", "git ls-tree"),
    *("git cat-file", "git rev-parse", "git rev-list", "git describe", "git shortlog"),
    *("git blame", "git grep", "git config --get", "git config --list"),
    *("docker ps", "docker images", "docker inspect", "docker logs", "docker version"),
    *("docker info", "gh repo view", "gh issue list", "gh pr list", "gh status"),
    *("python --version", "python -V", "node --version", "node -v", "npm list", "npm ls"),
    *("pip list", "pip show"),
)
"""Command prefixes that are read-only by default (when the analysis agrees)."""

_PLAIN_NAMES = frozenset({"echo", "cat", "ls", "pwd", "cd", "true", "false", "printf", "grep"})
"""Names read-only whatever their arguments (the analysis still vets them), even after
`NAME=value` words."""

_FIND_ACTIONS = frozenset(
    {"-delete", "-exec", "-execdir", "-fls", "-fprint", "-fprint0", "-fprintf", "-ok", "-okdir"}
)
_LIST_OPERATORS = ("&&", "||", ";", "|")
# Within a list, declarations that the analysis proves harmless (`declare -p`, a bare
# `export`) are not commands of their own, as in the spec's parser.
_DECLARATIONS = (["declare"], ["typeset"], ["export"], ["local"], ["readonly"])
_GIT_WRITES = re.compile(r"--output|--op|-[^-]*O")


def listed_line(command: str, sources: Sequence[str]) -> bool:
    """Whether a command line is on the default list, given its simple commands' texts.

    A line without list or pipe operators is judged as one command on its whole text (so
    `ls & rm x` or a second line is seen as arguments of `ls`; the analysis catches those).
    In a list, declarations (`declare -p | grep x`) need no listing: the analysis has vetted
    them.
    """
    text = command.strip()
    if ">" in text:
        return False
    if not any(op in text for op in _LIST_OPERATORS):
        return _listed_text(text)
    return all(
        _listed_text(source.strip()) or source.split()[:1] in _DECLARATIONS for source in sources
    )


def _listed_text(text: str) -> bool:
    tokens = text.split()
    if tokens[:1] == ["find"] and any(token in _FIND_ACTIONS for token in tokens):
        return False
    if text.startswith("git "):
        try:
            words = shlex.split(text)
        except ValueError:
            return False
        if any(_GIT_WRITES.match(word) for word in words[2:]):
            return False
    if any(text == entry or text.startswith(entry + " ") for entry in DEFAULT_READ_ONLY):
        return True
    name = next((token for token in tokens if "=" not in token), "")
    return name in _PLAIN_NAMES


def listed_words(words: Sequence[str], extra: Iterable[str]) -> bool:
    """Whether a command's words (as written, wrappers included) start with a listed prefix.

    The default list and the `extra` prefixes (`kubectl get`, `date`, `sed`) are compared
    word by word, after `NAME=value` words.
    """
    start = 0
    while start < len(words) and _is_assignment(words[start]):
        start += 1
    argv = tuple(words[start:])
    if argv[:1] and argv[0] in _PLAIN_NAMES:
        return True
    for entry in (*DEFAULT_READ_ONLY, *extra):
        prefix = tuple(entry.split())
        if prefix and argv[: len(prefix)] == prefix:
            return True
    return False


def _is_assignment(word: str) -> bool:
    name, eq, _ = word.partition("=")
    return bool(eq) and name.isidentifier()
