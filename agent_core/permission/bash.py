"""Bash command analysis for the permission system, and the Bash tool's permission hooks.

`analyze_command` parses a command line with a real shell parser (see `_shell`) and lists every
command it runs (`BashAnalysis`). The `bash_*` functions are what the Bash tool calls from its
own hooks:

==========================  ========================================================
Bash tool hook              call
==========================  ========================================================
check_permissions           `bash_permission(command, context, cwd)`
check_read_only             `is_read_only(command)`
match_rule                  `bash_match_rule(rule_content, command)`
rule_subjects               `[{"command": s} for s in bash_rule_subjects(command)]`
generate_suggestions        `bash_suggestions(command)`
read_paths                  `bash_read_paths(command, cwd)`
==========================  ========================================================

Rules for Bash are `PREFIX:*` or a plain `PREFIX` (the command's leading words,
`git commit:*`), or a pattern with `*` wildcards (`npm *`); `*` matches everything. Besides
Troupe's per-command reading, the engine reads rules literally on the raw line (`_literal`).
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Sequence

from agent_core.permission._analysis import BashAnalysis, SubCommand, analyze_command
from agent_core.permission._commands import NAME_ONLY_PREFIX, base_name, command_name
from agent_core.permission._listed import listed_line, listed_words
from agent_core.permission._literal import literal_match
from agent_core.permission._screens import dangerous_pattern, sed_problem
from agent_core.permission._shell import UNKNOWN
from agent_core.permission.paths import (
    DANGEROUS_DIRECTORIES,
    DANGEROUS_FILES,
    EDITING_MODES,
    dangerous_path_reason,
    glob_base,
    has_pattern,
    is_critical_path,
    is_inside,
    resolve_path,
    working_directories,
)
from agent_core.permission.rules import crude_match, words_match
from agent_core.permission.types import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionRule,
)

__all__ = [
    "BashAnalysis",
    "SubCommand",
    "analyze_command",
    "bash_match_rule",
    "bash_permission",
    "bash_read_paths",
    "bash_rule_subjects",
    "bash_suggestions",
    "is_read_only",
]

_SUBCOMMAND = re.compile(r"[A-Za-z][A-Za-z0-9_:-]*")
_ASK = PermissionBehavior.ASK
_EDIT_COMMANDS = frozenset({"mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"})
"""What ACCEPT_EDITS auto-allows (as the line's first word), as in the spec."""


def is_read_only(command: str, extra: Sequence[str] = ()) -> bool:
    """Whether the command is auto-allowed as read-only (the Bash tool's `check_read_only`).

    Two conditions: the analysis proves that every command of the line only reads (no
    output redirection except to /dev/null, no substitution, control structure or dangerous
    pattern), and the line is on the default read-only list (see `_listed`: the spec's short
    list, checked literally), or, with `extra` prefixes (`PermissionContext.
    extra_read_only_commands`), every command starts with a default or extra prefix.
    """
    analysis = analyze_command(command)
    if not analysis.read_only:
        return False
    sources = [sub.source for sub in analysis.commands if sub.source is not None]
    if listed_line(command, sources):
        return True
    return bool(extra) and all(listed_words(sub.words, extra) for sub in analysis.commands)


def bash_permission(
    command: str,
    context: PermissionContext,
    cwd: str,
    *,
    dangerous_files: Sequence[str] = (),
    dangerous_directories: Sequence[str] = (),
    tool_name: str = "Bash",
) -> PermissionDecision:
    """The Bash tool's layered `check_permissions` (the spec's steps 1-7, then allow rules).

    1. A command that cannot be parsed, or uses $(...), backticks, <(...), ${...}, a control
       structure, a subshell, a `[ ]` or `[[ ]]` test, a command name from a variable or eval
       of unknown text: bypass-immune ASK.
    2. Read-only (`is_read_only` with the context's `extra_read_only_commands`): ALLOW.
    3-6. Dangerous commands (mkfs, sudo, curl | sh, chmod 777, shutdown, fork bombs, and the
       spec's textual patterns such as `rm -rf` or `format` anywhere in the line), sed
       scripts outside the spec's allowlist, sensitive paths named by file commands or
       redirections (~/.bashrc, .env, .git/ ...) and removal of critical paths (/, ~, /usr,
       `dir/*`, a working directory): bypass-immune ASK.
    7. ACCEPT_EDITS: a line starting with mkdir, touch, rm, rmdir, mv, cp or sed whose
       edits all resolve inside a working directory: ALLOW.
    Then ALLOW when one of the context's allow rules for `tool_name` matches the line
    literally (`npm test:*` matches `npm test && npm run x`) and every sub-command is read-only
    or matched by a rule, else PASSTHROUGH.

    Args:
        command: The command line.
        context: The permission context (mode, working directories, rules).
        cwd: The directory the command runs in.
        dangerous_files: More sensitive file names or path tails.
        dangerous_directories: More sensitive directory names.
        tool_name: The tool's name, for its allow rules.
    """
    analysis = analyze_command(command)
    if analysis.error is not None:
        return _safety_ask(f"The command could not be analyzed ({analysis.error}).", "unparsed")
    if analysis.dynamic:
        found = ", ".join(analysis.dynamic)
        return _safety_ask(f"The command uses {found}, which cannot be checked.", "injection")
    if is_read_only(command, context.extra_read_only_commands):
        return PermissionDecision(
            behavior=PermissionBehavior.ALLOW,
            message="The command only reads.",
            reason="read_only",
        )
    roots = working_directories(context)
    dangers = [
        *analysis.dangers,
        *_path_dangers(analysis, cwd, roots, dangerous_files, dangerous_directories),
    ]
    pattern = dangerous_pattern(command)
    if pattern:
        dangers.append(f"the line contains `{pattern}`")
    sed = sed_problem(command, [*DANGEROUS_FILES, *dangerous_files])
    if sed:
        dangers.append(sed)
    if dangers:
        return _safety_ask("Dangerous command: " + "; ".join(dangers) + ".", "dangerous")
    if (
        context.mode in EDITING_MODES
        and command.split()[:1] in ([name] for name in _EDIT_COMMANDS)
        and _names_a_plain_path(analysis)
        and _edits_inside(analysis, cwd, roots)
    ):
        return PermissionDecision(
            behavior=PermissionBehavior.ALLOW,
            message="Filesystem edits inside the working directories are accepted.",
            reason="mode:accept_edits",
        )
    rules = context.allow_rules.get(tool_name, [])
    literal = {"command": command}
    if any(literal_match(tool_name, r.rule_content, literal) for r in rules) and all(
        sub.read_only
        or all(any(_matches(r.rule_content, w) for r in rules) for w in _variants(sub))
        for sub in analysis.commands
    ):
        return PermissionDecision(
            behavior=PermissionBehavior.ALLOW,
            message="Every sub-command is read-only or allowed by a rule.",
            reason="rule:allow",
        )
    return PermissionDecision(behavior=PermissionBehavior.PASSTHROUGH)


def bash_match_rule(rule_content: str | None, command: str) -> bool:
    """Whether a Bash rule (`git commit:*`, an exact command, `*`, or None) matches.

    Words are compared after quote removal, unsafe assignments included (`PATH=x ls` does not
    match `ls:*`). A compound command matches only if every top-level sub-command does. The
    engine calls this once per `bash_rule_subjects` entry instead, which also covers nested
    commands and the bare-name forms, and gives deny rules their any-sub-command semantics. A
    command that cannot be parsed matches when the rule's words occur anywhere in it (right
    for deny rules; such commands always get a safety ASK before allow rules are consulted).
    """
    if rule_content is None or rule_content.strip() == "*":
        return True
    analysis = analyze_command(command)
    if analysis.error is not None:
        return crude_match(rule_content, command)
    top = [sub for sub in analysis.commands if not sub.nested]
    return bool(top) and all(_matches(rule_content, _variants(sub)[0]) for sub in top)


def bash_rule_subjects(command: str) -> list[str]:
    """The sub-commands rules are judged on, each as a plain command line.

    One entry per command the line runs (nested ones included), after transparent wrappers
    are removed (`timeout 5 rm x` → `rm x`); a command run through a path or with unsafe
    assignments also appears as its bare name (`/bin/rm x` → `rm x`, `PATH=. rm x` → `rm x`)
    so deny rules see it. Unparsable input is returned as is.
    """
    analysis = analyze_command(command)
    if analysis.error is not None or not analysis.commands:
        return [command]
    subjects: dict[str, None] = {}
    for sub in analysis.commands:
        for words in _variants(sub):
            text = _render(words) if words else _render_redirects(sub)
            subjects.setdefault(text or command, None)
    return list(subjects)


def bash_suggestions(command: str, tool_name: str = "Bash") -> list[PermissionRule]:
    """Allow rules that would let this command run without asking next time.

    One per subject (see `bash_rule_subjects`) of each sub-command that is not on the
    default read-only list: its first two words as a prefix (`git commit -m "x"` →
    `git commit:*`), only the name for file commands (`rm:*`), and the whole command for
    interpreters and wrappers (`python x.py`) and commands with unsafe assignments, whose
    short prefix would allow any code. Nothing for commands
    that need a safety confirmation anyway, nor for text only known at run time.

    Allow rules must also match the line literally (see `_literal`), so when none of these
    does, the prefix of the line's first command is suggested too (`cd src:*` for
    `cd src && npm test`; it allows nothing by itself), or else the line itself.
    """
    analysis = analyze_command(command)
    if analysis.error is not None or analysis.dynamic:
        return []
    contents: dict[str, None] = {}
    for sub in analysis.commands:
        if not sub.argv or (sub.read_only and listed_words(sub.words, ())):
            continue
        for words in _variants(sub):
            if sub.exact or len(words) > len(sub.argv):  # interpreters, unsafe assignments
                content = _render(words)
            else:
                content = _prefix_rule(words)
            if UNKNOWN not in content:  # a rule cannot spell text only known at run time
                contents.setdefault(content, None)
    literal = {"command": command}
    if not any(literal_match(tool_name, content, literal) for content in contents):
        first = next((sub for sub in analysis.commands if sub.source), None)
        anchor = _prefix_rule(first.words) if first is not None and first.words else ""
        if not anchor or UNKNOWN in anchor or not literal_match(tool_name, anchor, literal):
            anchor = command.strip()  # this very line (`! grep -q x f`)
        contents = {anchor: None, **contents}
    return [
        PermissionRule(
            tool_name=tool_name,
            rule_content=content,
            behavior=PermissionBehavior.ALLOW,
            source="suggested",
        )
        for content in contents
    ]


def bash_read_paths(command: str, cwd: str) -> list[str] | None:
    """Absolute paths the command reads, or None when that cannot be told.

    `cd`s are followed and globs stand for their directory. Used by the Bash tool's
    `read_paths` for `PermissionEngine(confine_reads=True)`.
    """
    analysis = analyze_command(command)
    if analysis.error is not None or analysis.dynamic:
        return None
    paths: list[str] = []
    for sub in analysis.commands:
        if sub.reads is None:
            return None
        for target in sub.reads:
            resolved = _resolve(sub, target, cwd)
            if resolved is None:
                return None
            paths += resolved
    return paths


def _prefix_rule(words: Sequence[str]) -> str:
    """`git commit:*` for `git commit -m x`; just the name for file commands (`rm:*`)."""
    two = len(words) > 1 and _SUBCOMMAND.fullmatch(words[1])
    name_only = command_name(words[0]) in NAME_ONLY_PREFIX
    return _render(words[:2] if two and not name_only else words[:1]) + ":*"


def _safety_ask(message: str, cause: str) -> PermissionDecision:
    return PermissionDecision(
        behavior=_ASK, message=message, reason=f"safety:{cause}", bypass_immune=True
    )


def _matches(rule_content: str | None, words: tuple[str, ...]) -> bool:
    if rule_content is None or rule_content.strip() == "*":
        return True
    return words_match(rule_content, words)


def _variants(sub: SubCommand) -> list[tuple[str, ...]]:
    """The word lists rules see for one sub-command (see `bash_rule_subjects`)."""
    unsafe = sub.unsafe_assignments
    variants = [unsafe + sub.argv]
    if unsafe:
        variants.append(sub.argv)
    if sub.argv and "/" in sub.argv[0]:
        variants.append((base_name(sub.argv[0]), *sub.argv[1:]))
    return variants


def _render(words: Sequence[str]) -> str:
    return " ".join(shlex.quote(word) for word in words)


def _render_redirects(sub: SubCommand) -> str:
    return " ".join(f"> {shlex.quote(target)}" for target in sub.redirects)


def _resolve(sub: SubCommand, target: str, cwd: str) -> list[str] | None:
    """The absolute paths `target` may name for `sub`, or None when unknown.

    One path per directory `sub` may run in; a glob stands for its base directory. Paths are
    not normalized: `link/..` must be resolved physically (`real_path`), not textually.
    """
    base = None if UNKNOWN in target else glob_base(target)
    if base is None or sub.cwd is None:
        return None
    paths = []
    for steps in sub.cwd:
        directory = cwd
        for step in steps:
            if UNKNOWN in step:
                return None
            directory = resolve_path(step, directory)  # cd follows the logical path
        paths.append(os.path.join(directory, os.path.expanduser(base)))
    return paths


def _path_dangers(
    analysis: BashAnalysis,
    cwd: str,
    roots: list[str],
    files: Sequence[str],
    directories: Sequence[str],
) -> list[str]:
    found: list[str] = []
    sensitive_names = [*DANGEROUS_FILES, *DANGEROUS_DIRECTORIES, *files, *directories]
    for sub in analysis.commands:
        name = f"`{command_name(sub.argv[0])}`" if sub.argv else "a redirection"
        for target in sub.mentioned:
            for path in _resolve(sub, target, cwd) or []:
                reason = dangerous_path_reason(
                    path, cwd, extra_files=files, extra_directories=directories, system=False
                )
                if reason:
                    found.append(f"{name} names {path}: {reason}")
        for target in sub.touched:
            leaf = os.path.basename(target.rstrip("/"))
            if leaf.startswith(".") and has_pattern(leaf):
                hits = [n for n in sensitive_names if "/" not in n and fnmatch.fnmatch(n, leaf)]
                if hits:
                    found.append(f"{name} may change {hits[0]} through the pattern {target}")
            for path in _resolve(sub, target, cwd) or []:
                reason = dangerous_path_reason(
                    path, cwd, extra_files=files, extra_directories=directories
                )
                if reason:
                    found.append(f"{name} would change {path}: {reason}")
        for target in sub.critical:
            leaf = os.path.basename(target.rstrip("/"))
            if target.endswith("/*") or leaf in ("*", ".*"):
                found.append(f"{name} {target} removes everything in a directory")
                continue
            if UNKNOWN not in target and any(c in leaf for c in "*?["):
                # a pattern names entries of its directory, not the directory itself,
                # unless that directory is / or the home directory (`rm -rf /u*`)
                home = os.path.realpath(os.path.expanduser("~"))
                found += [
                    f"{name} {target} removes entries of {path}"
                    for path in _resolve(sub, target, cwd) or [""]
                    if os.path.realpath(path) in ("/", home) or not path
                ]
                continue
            if UNKNOWN in target:
                shown = target.replace(UNKNOWN, "$…")
                empty = glob_base(target.replace(UNKNOWN, "")) or ""
                home = os.path.expanduser("~")
                found += [
                    f"{name} {shown} removes {path} if the variable is empty"
                    for path in _resolve(sub, empty, cwd) or []
                    if os.path.realpath(path) in ("/", os.path.realpath(home))
                ]
                continue
            found += [
                f"{name} targets the critical path {path}"
                for path in _resolve(sub, target, cwd) or []
                if is_critical_path(path, cwd, roots)
            ]
        found += [
            f"{name} deletes everything under {path}"
            for target in sub.sweeps
            for path in _resolve(sub, target, cwd) or []
            if is_critical_path(path, cwd, ())
        ]
    return list(dict.fromkeys(found))


def _names_a_plain_path(analysis: BashAnalysis) -> bool:
    """Whether the first command names a path as a plain word (no quotes or expansions).

    The spec's check only reads paths written plainly and accepts nothing when it found
    none (`rm 'my file'`); so does Troupe.
    """
    first = next((sub for sub in analysis.commands if sub.source), None)
    if first is None or first.source is None:
        return False
    return any(
        token[0] not in "-<>&|" and not any(c in token for c in "'\"$`\\")
        for token in first.source.split()[1:]
    )


def _edits_inside(analysis: BashAnalysis, cwd: str, roots: list[str]) -> bool:
    """Whether the line only reads and edits files, all inside the working directories."""
    for sub in analysis.commands:
        if not sub.read_only and (not sub.edit or sub.writes is None):
            return False
        if sub.reads is None:
            return False
        for target in (*(sub.writes or ()), *sub.reads):
            paths = _resolve(sub, target, cwd)
            if paths is None or not all(is_inside(path, roots, cwd) for path in paths):
                return False
    return True
