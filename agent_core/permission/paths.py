"""Paths in permission checks: sensitive paths, working directories, rule globs, file-tool hooks.

Paths are resolved against the tool's working directory with `~` expanded. Checks that protect
something look at both the logical path and its real path (symlinks resolved), so neither a
symlink into `~/.ssh` nor a dotfile symlinked elsewhere slips through.

The `file_*` functions are the permission hooks of the file tools (Read, Write, Edit, Glob,
Grep), which call them from their own `check_permissions`, `match_rule`, `rule_subjects`,
`generate_suggestions` and `read_paths`.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from agent_core.permission.types import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
)

DANGEROUS_FILES = frozenset(
    {".bashrc", ".zshrc", ".bash_profile", ".profile", ".bash_login", ".bash_logout", ".zshenv"}
    | {".zprofile", ".zlogin", ".kshrc", ".cshrc", ".tcshrc", ".gitconfig", ".gitmodules"}
    | {".ssh/config", ".ssh/authorized_keys", "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa"}
    | {".env", ".envrc", ".env.local", ".env.development", ".env.development.local"}
    | {".env.test", ".env.test.local", ".env.staging", ".env.production"}
    | {".env.production.local", ".npmrc", ".pypirc", ".aws/credentials", ".netrc"}
    | {".git-credentials", ".pgpass"}
)
"""Sensitive files, matched against the end of a path (case-insensitively)."""

DANGEROUS_DIRECTORIES = frozenset(
    {".git", ".ssh", ".claude", ".vscode", ".idea", ".aws", ".kube", ".gnupg"}
)
"""Sensitive directories: any path through one of them is sensitive."""

SYSTEM_DIRECTORIES = (
    *("/etc", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/usr", "/dev", "/proc"),
    *("/sys", "/System", "/Library", "/private/etc"),
)
"""Absolute directories whose contents a tool must not change without confirmation."""

EDITING_MODES = (PermissionMode.ACCEPT_EDITS, PermissionMode.DONT_ASK)
"""Modes that accept edits inside the working directories: DONT_ASK is ACCEPT_EDITS's
unattended counterpart (as in AgentScope 2.0.11; the spec names only ACCEPT_EDITS)."""

_HARMLESS_DEVICES = frozenset(
    {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero"}
)
_BRACE = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_GLOB_TOKENS = re.compile(r"(/\*\*/|/\*\*$|\*\*|\*|\?|\[!?\]?[^\]]*\])")


def resolve_path(path: str, cwd: str) -> str:
    """The absolute, normalized form of `path` (relative to `cwd`, `~` expanded), symlinks kept.

    This is the path as named; where it really leads is `real_path`.
    """
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def real_path(path: str, cwd: str) -> str:
    """Where `path` (relative to `cwd`) really leads.

    Symlinks are resolved before each `..`, as the kernel does: `link/..` is the parent of the
    link's target, not the directory holding the link.
    """
    return os.path.realpath(os.path.join(cwd, os.path.expanduser(path)))


def working_directories(context: PermissionContext) -> list[str]:
    """The configured working directories of a permission context."""
    return [directory.path for directory in context.working_directories.values()]


def dangerous_path_reason(
    path: str,
    cwd: str,
    *,
    extra_files: Sequence[str] = (),
    extra_directories: Sequence[str] = (),
    system: bool = True,
) -> str | None:
    """Why changing `path` needs confirmation, or None when it is not a sensitive path.

    Sensitive are the spec's shell and git configs, SSH keys, credential files and directories
    (`DANGEROUS_FILES`, `DANGEROUS_DIRECTORIES`), system directories (`SYSTEM_DIRECTORIES`,
    except harmless devices such as /dev/null; only when `system`), and the `extra_*`
    entries: names or slash-separated tails (`.secrets`, `config/prod.yaml`), or absolute
    paths.
    """
    logical = resolve_path(path, cwd)
    if logical in _HARMLESS_DEVICES or logical.startswith("/dev/fd/"):
        return None
    files, directories = _DEFAULT_ENTRIES if system else _NAME_ENTRIES
    if extra_files or extra_directories:
        files, directories = _entries(
            (*DANGEROUS_FILES, *extra_files), extra_directories, system=system
        )
    for candidate in dict.fromkeys((logical, real_path(path, cwd))):
        reason = _reason(candidate, files, directories)
        if reason:
            return reason
    return None


_Entries = tuple[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]]


def _entries(
    files: Iterable[str], extra_directories: Iterable[str], *, system: bool = True
) -> _Entries:
    """Entries as lowercase component tuples; absolute ones keep a leading ''."""

    def split(entry: str) -> tuple[str, ...]:
        head = ("",) if entry.startswith("/") else ()
        return head + tuple(entry.lower().strip("/").split("/"))

    directories = (
        *(SYSTEM_DIRECTORIES if system else ()),
        *DANGEROUS_DIRECTORIES,
        *extra_directories,
    )
    return tuple(map(split, files)), tuple(map(split, directories))


_DEFAULT_ENTRIES = _entries(DANGEROUS_FILES, ())
_NAME_ENTRIES = _entries(DANGEROUS_FILES, (), system=False)


def _reason(
    path: str, files: tuple[tuple[str, ...], ...], directories: tuple[tuple[str, ...], ...]
) -> str | None:
    parts = ("", *(part.lower() for part in path.split("/") if part))
    for run in directories:
        if run[0] == "":  # absolute: a prefix of the path
            if parts[: len(run)] == run:
                return f"{path} is under the protected directory {'/'.join(run)}"
        elif any(parts[i : i + len(run)] == run for i in range(1, len(parts) - len(run) + 1)):
            return f"{path} is inside the sensitive directory {'/'.join(run)}/"
    for tail in files:
        if parts[-len(tail) :] == tail and (tail[0] != "" or len(tail) == len(parts)):
            return f"{path} is a sensitive file ({'/'.join(tail).lstrip('/')})"
    return None


def is_inside(path: str, working_dirs: Iterable[str], cwd: str) -> bool:
    """Whether `path` (relative to `cwd`) really lies in one of `working_dirs`.

    Both sides are resolved with `realpath`, so `..` and symlinks pointing out of a working
    directory count as outside.
    """
    real = real_path(path, cwd)
    for directory in working_dirs:
        root = os.path.realpath(os.path.expanduser(directory))
        if real == root or real.startswith(root.rstrip("/") + "/"):
            return True
    return False


def is_critical_path(path: str, cwd: str, working_dirs: Iterable[str]) -> bool:
    """Whether removing `path` would be a disaster.

    Critical are /, a top-level directory, the home directory, and a working directory or one
    of its parents.
    """
    home = os.path.realpath(os.path.expanduser("~"))
    logical = resolve_path(path, cwd)
    roots = [os.path.realpath(os.path.expanduser(d)) for d in working_dirs]
    for candidate in dict.fromkeys((logical, real_path(path, cwd))):
        if candidate in ("/", home) or os.path.dirname(candidate) == "/":
            return True
        prefix = candidate.rstrip("/") + "/"
        if any(root == candidate or root.startswith(prefix) for root in roots):
            return True
    return False


def has_pattern(text: str) -> bool:
    """Whether the shell would expand `text` as a glob or brace pattern."""
    return any(c in text for c in "*?[") or bool(_BRACE.search(text))


def glob_base(pattern: str, *, deep: bool = False) -> str | None:
    """The directory a glob pattern can only match within, or None when that is unknown.

    `src/*.py` → `src`; a component that can match `..` (`.*`, not `*`) moves the base up.
    Unless `deep`, a pattern with components after the first wildcard (`src/*/x`) is unknown,
    since a symlinked directory could lead anywhere.
    """
    if not has_pattern(pattern):
        return pattern
    parts = pattern.split("/")
    for i, part in enumerate(parts):
        if has_pattern(part):
            rest = parts[i + 1 :]
            if (any(rest) and not deep) or any(".." in p for p in rest):
                return None
            base = "/".join(parts[:i]) or ("/" if pattern.startswith("/") else ".")
            # the shell only matches a leading dot (and so `..`) explicitly: `*` never does
            if (part.startswith(".") and fnmatch.fnmatchcase("..", part)) or ".." in part:
                base = base.rstrip("/") + "/.."
            return base
    return pattern


def glob_match(pattern: str, path: str, cwd: str) -> bool:
    """Whether a file-rule glob matches `path`.

    Relative patterns are anchored at `cwd`: `config.json` is that one file, `src/*.py` the
    Python files directly in src/, `src/**` everything under src/, `src/**/*.py` Python files
    at any depth, `**` everything under `cwd`. `*` and `?` stop at `/`; `**` crosses
    directories. A pattern starting with `**/` matches anywhere (`**/.ssh/**`), and `*` alone
    matches every path.
    """
    pattern = pattern.strip()
    if pattern == "*":
        return True
    compiled = _compile_glob(os.path.expanduser(pattern), cwd)
    return compiled.fullmatch(resolve_path(path, cwd)) is not None


@lru_cache(maxsize=1024)
def _compile_glob(pattern: str, cwd: str) -> re.Pattern[str]:
    if pattern.endswith("/"):
        pattern += "**"
    prefix = ""
    if pattern.startswith("**/"):
        prefix, pattern = "(?:.*/)?", pattern[3:]
    elif not os.path.isabs(pattern):
        pattern = os.path.normpath(os.path.join(cwd, pattern))
    out = [prefix]
    for token in _GLOB_TOKENS.split(pattern):
        if token == "/**/":
            out.append("/(?:.*/)?")
        elif token == "/**":
            out.append("(?:/.*)?")
        elif token == "**":
            out.append(".*")
        elif token == "*":
            out.append("[^/]*")
        elif token == "?":
            out.append("[^/]")
        elif token.startswith("[") and token.endswith("]") and len(token) > 2:
            body = token[1:-1]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
        else:
            out.append(re.escape(token))
    return re.compile("".join(out))


def file_write_permission(
    file_path: str,
    context: PermissionContext,
    cwd: str,
    *,
    dangerous_files: Sequence[str] = (),
    dangerous_directories: Sequence[str] = (),
) -> PermissionDecision:
    """`check_permissions` of Write and Edit.

    A sensitive path (see `dangerous_path_reason`) gets a bypass-immune ASK; in ACCEPT_EDITS a
    path inside a working directory is allowed; anything else is PASSTHROUGH.
    """
    reason = dangerous_path_reason(
        file_path, cwd, extra_files=dangerous_files, extra_directories=dangerous_directories
    )
    if reason:
        return PermissionDecision(
            behavior=PermissionBehavior.ASK,
            message=f"Changing {file_path} needs confirmation: {reason}.",
            reason="safety:dangerous_path",
            bypass_immune=True,
        )
    if context.mode in EDITING_MODES and is_inside(file_path, working_directories(context), cwd):
        return PermissionDecision(
            behavior=PermissionBehavior.ALLOW,
            message="Edits inside the working directories are accepted.",
            reason="mode:accept_edits",
        )
    return PermissionDecision(behavior=PermissionBehavior.PASSTHROUGH)


def file_match_rule(rule_content: str | None, file_path: str, cwd: str) -> bool:
    """`match_rule` of the file tools: the glob `rule_content` against `file_path`."""
    return rule_content is None or glob_match(rule_content, file_path, cwd)


def file_rule_subjects(file_path: str, cwd: str) -> list[str]:
    """`rule_subjects` of the file tools: the paths rules are judged on.

    The logical path and, if different, the real path: a deny rule on either denies, an allow
    rule must cover both.
    """
    return list(dict.fromkeys((resolve_path(file_path, cwd), real_path(file_path, cwd))))


def file_suggestions(tool_name: str, file_path: str, cwd: str) -> list[PermissionRule]:
    """`generate_suggestions` of the file tools: allow the file's directory (`src/**`).

    A file directly in `cwd` gets a rule for itself; a file outside `cwd` an absolute glob.
    """
    logical = resolve_path(file_path, cwd)
    parent, root = os.path.dirname(logical), os.path.normpath(cwd)
    if parent == root:
        content = glob.escape(os.path.basename(logical))
    elif parent.startswith(root.rstrip("/") + "/"):
        content = glob.escape(os.path.relpath(parent, root)) + "/**"
    else:
        content = glob.escape(parent.rstrip("/")) + "/**"
    return [
        PermissionRule(
            tool_name=tool_name,
            rule_content=content,
            behavior=PermissionBehavior.ALLOW,
            source="suggested",
        )
    ]


def file_read_paths(path: str | None, cwd: str, pattern: str | None = None) -> list[str] | None:
    """`read_paths` of Read, Glob and Grep: where the call reads (None when unknown).

    Args:
        path: The file or directory argument (None: `cwd`).
        cwd: The tool's working directory.
        pattern: A Glob pattern searched under `path`; an absolute or `..` pattern moves the
            read location accordingly.
    """
    base = resolve_path(path or ".", cwd)
    if pattern:
        pattern_base = glob_base(pattern, deep=True)
        if pattern_base is None:
            return None
        base = resolve_path(pattern_base, base)
    return [base]
