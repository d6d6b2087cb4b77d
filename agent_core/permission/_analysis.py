"""Turns a parsed command line into the flat list of sub-commands the permission checks use.

Every simple command becomes a `SubCommand`, wherever it sits: in lists, pipelines, subshells,
groups, loops, function bodies, substitutions, or run by another command (`sudo X`,
`find -exec X`, `bash -c '...'`, `eval`). The walk also tracks where each command runs:
`cd dir && rm x` removes dir/x, so each sub-command records the `cd` steps that may precede it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from agent_core.permission._commands import classify, command_name, is_path_like, unwrap
from agent_core.permission._shell import UNKNOWN, Compound, Pipeline, Redirect, Script, Simple
from agent_core.permission._shell import Word as _Word
from agent_core.permission._shell import parse as parse_shell
from agent_core.permission.errors import ShellSyntaxError

CwdState = frozenset[tuple[str, ...]] | None
"""The `cd` arguments that may have run before a command, one tuple per possibility; None when
the directory cannot be known."""

_START: CwdState = frozenset({()})
_MAX_NESTING = 8
_OUTPUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_DOWNLOADERS = frozenset({"curl", "wget", "fetch", "http", "https", "aria2c"})
_RUNNERS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python3", "perl", "ruby", "node"}
    | {"php", "source", ".", "sudo"}
)
_DYNAMIC = {
    "cmdsub": "command substitution $(...)",
    "backtick": "backtick substitution `...`",
    "procsub": "process substitution <(...) / >(...)",
    "braced": "a ${...} expansion",
}
# Control structures are analyzed like any other code, but the spec's Bash check asks about
# them as constructs that cannot be checked statically, and so does Troupe.
_OPAQUE = {
    "subshell": "a subshell (...)",
    "if": "an if statement",
    "while": "a while loop",
    "until": "an until loop",
    "for": "a for loop",
    "select": "a select loop",
    "case": "a case statement",
    "function": "a function definition",
    "cond": "a [[ ... ]] test",
}
_FILE_COMMANDS = frozenset(
    {"rm", "mv", "cp", "chmod", "chown", "chgrp", "touch", "ln", "sed", "mkdir", "rmdir"}
)
"""Commands all of whose operands are checked against the sensitive files and directories,
even the ones they only read (`cp ~/.bashrc x`, `sed -n 1p .env`)."""
_SAFE_ENV = frozenset(
    {"LANG", "LANGUAGE", "TZ", "TERM", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CI"}
    | {"CLICOLOR", "CLICOLOR_FORCE", "NODE_ENV", "RUST_LOG", "RUST_BACKTRACE", "DEBUG"}
    | {"PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "TIMEFORMAT"}
)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ARITH_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_TAINTING = frozenset({"read", "mapfile", "readarray"})


def is_safe_assignment(assignment: str) -> bool:
    """Whether `NAME=value` cannot change what a command does (LANG, TZ, NO_COLOR, ...).

    Lowercase names are plain shell variables; uppercase ones may steer programs (PATH,
    LD_PRELOAD, GIT_EXTERNAL_DIFF, PAGER, ...) and are safe only when listed.
    """
    match = _NAME.match(assignment)
    name = match.group() if match else ""
    if name.islower():
        return not name.endswith("_proxy")
    return name in _SAFE_ENV or name.startswith("LC_")


@dataclass(frozen=True, slots=True)
class SubCommand:
    """One command the line runs, with what the permission checks need to know about it.

    Attributes:
        argv: The words after transparent wrappers (timeout, env, xargs ...) are removed;
            `UNKNOWN` marks text only known at run time.
        words: The words as written: assignments, wrappers and all.
        source: The command's text, for a command written in the line (not for one run by
            another command, such as `find -exec X` or `xargs X`).
        assignments: `NAME=value` prefixes (including `env`'s).
        read_only: It only reads: a read-only command, no output redirection, no unsafe
            assignment, and everything it runs is read-only too.
        edit: A filesystem edit (mkdir, touch, rm, cp, mv, sed -i, tee, `>` ...) whose every
            target is in `writes`.
        writes: Paths it creates, changes or removes; None when unknown.
        touched: Paths it changes, checked against the sensitive and system paths.
        mentioned: Other paths it names that are checked against the sensitive files and
            directories (the operands of file commands, input redirections).
        reads: Paths it reads; None when unknown.
        critical: Removal (or recursive chmod/chown) targets.
        sweeps: Roots of a recursive deletion (`find DIR -delete`).
        cwd: Possible `cd` steps before it; None when unknown.
        nested: Run by another command or a substitution, not listed at the top level.
        exact: Suggest an exact rule rather than a prefix.
        redirects: Its output redirection targets.
    """

    argv: tuple[str, ...]
    words: tuple[str, ...] = ()
    source: str | None = None
    assignments: tuple[str, ...] = ()
    read_only: bool = False
    edit: bool = False
    writes: tuple[str, ...] | None = None
    touched: tuple[str, ...] = ()
    mentioned: tuple[str, ...] = ()
    reads: tuple[str, ...] | None = ()
    critical: tuple[str, ...] = ()
    sweeps: tuple[str, ...] = ()
    cwd: CwdState = _START
    nested: bool = False
    exact: bool = False
    redirects: tuple[str, ...] = ()

    @property
    def unsafe_assignments(self) -> tuple[str, ...]:
        """The assignments that could change what the command does."""
        return tuple(a for a in self.assignments if not is_safe_assignment(a))


@dataclass(frozen=True, slots=True)
class BashAnalysis:
    """What a command line does, as far as static analysis can tell.

    Attributes:
        command: The analyzed text.
        commands: Every simple command it runs, in source order.
        error: Why the command could not be parsed (then nothing else is known).
        dynamic: Constructs that cannot be checked statically ($(...), `...`, <(...), a
            command name from a variable, eval of unknown text).
        dangers: Destructive patterns found without resolving paths (mkfs, sudo, curl | sh,
            chmod 777, fork bombs, shutdown ...).
    """

    command: str
    commands: tuple[SubCommand, ...] = ()
    error: str | None = None
    dynamic: tuple[str, ...] = ()
    dangers: tuple[str, ...] = ()

    @property
    def read_only(self) -> bool:
        """Whether the whole line only reads (every sub-command, nothing dynamic or dangerous)."""
        if self.error is not None or self.dynamic or self.dangers:
            return False
        return all(command.read_only for command in self.commands)


@lru_cache(maxsize=4096)
def analyze_command(command: str) -> BashAnalysis:
    """Parse and analyze a bash command line; never raises (parse errors land in `error`)."""
    try:
        walker = _Walker()
        walker.script(parse_shell(command), _START, [], nested=False)
        if walker.arith_vars and walker.tainted:
            # bash evaluates `a[$(cmd)]` inside a variable's value when used in arithmetic
            walker.dynamic.append("arithmetic on variables that may hold code")
    except ShellSyntaxError as exc:
        return BashAnalysis(command, error=str(exc))
    except RecursionError:
        return BashAnalysis(command, error="command nests too deeply")
    return BashAnalysis(
        command,
        tuple(walker.commands),
        None,
        tuple(dict.fromkeys(walker.dynamic)),
        tuple(dict.fromkeys(walker.dangers)),
    )


def _union(a: CwdState, b: CwdState) -> CwdState:
    return None if a is None or b is None else a | b


@dataclass(slots=True)
class _Walker:
    commands: list[SubCommand] = field(default_factory=list)
    dynamic: list[str] = field(default_factory=list)
    dangers: list[str] = field(default_factory=list)
    nesting: int = 0
    arith_vars: bool = False  # arithmetic reads variables
    tainted: bool = False  # variables may hold data-dependent text or array subscripts

    def script(
        self, script: Script, cwd: CwdState, redirects: list[Redirect], *, nested: bool
    ) -> CwdState:
        state, chain = cwd, []
        for pipeline, op in script.items:
            chain.append((pipeline, op))
            if op in (";", "&", ""):
                after = self._chain(chain, state, redirects, nested)
                state = state if op == "&" else after
                chain = []
        return state

    def _chain(
        self,
        chain: list[tuple[Pipeline, str]],
        cwd: CwdState,
        redirects: list[Redirect],
        nested: bool,
    ) -> CwdState:
        """An and-or list: `a && b` runs b where a succeeded, `a || b` where a failed."""
        success, failure = self._pipeline(chain[0][0], cwd, redirects, nested)
        for (pipeline, _), (_, op) in zip(chain[1:], chain[:-1], strict=True):
            if op == "&&":
                s, f = self._pipeline(pipeline, success, redirects, nested)
                success, failure = s, _union(failure, f)
            else:
                s, f = self._pipeline(pipeline, failure, redirects, nested)
                success, failure = _union(success, s), f
        return _union(success, failure)

    def _pipeline(
        self, pipeline: Pipeline, cwd: CwdState, redirects: list[Redirect], nested: bool
    ) -> tuple[CwdState, CwdState]:
        if len(pipeline.commands) == 1:
            result = self._command(pipeline.commands[0], cwd, redirects, nested)
        else:  # every part of a pipeline runs in its own subshell
            for command in pipeline.commands:
                self._command(command, cwd, redirects, nested)
            result = (cwd, cwd)
            names = [_name_of(command) for command in pipeline.commands]
            for i, name in enumerate(names):
                if name in _DOWNLOADERS and (
                    runner := next((n for n in names[i + 1 :] if n in _RUNNERS), None)
                ):
                    self.dangers.append(f"pipes downloaded content into `{runner}`")
        return (result[1], result[0]) if pipeline.negated else result

    def _command(
        self,
        node: Simple | Compound,
        cwd: CwdState,
        redirects: list[Redirect],
        nested: bool,
    ) -> tuple[CwdState, CwdState]:
        if isinstance(node, Simple):
            return self._simple(node, cwd, redirects, nested)
        if node.kind in _OPAQUE:
            self.dynamic.append(_OPAQUE[node.kind])
        self._words(node.words, cwd)
        if node.kind in ("for", "select"):
            listed = [word for word in node.words if "arith" not in word.kinds]
            self.tainted |= any(_data_dependent(word.value) for word in listed)
        if node.kind == "cond" and any(word.value in _ARITH_TESTS for word in node.words):
            self.arith_vars |= any(word.kinds or _NAME.match(word.value) for word in node.words)
        self._redirect_words(node.redirects, cwd)
        inherited = [*redirects, *node.redirects]
        if node.kind == "subshell":
            self.script(node.bodies[0], cwd, inherited, nested=nested)
            return cwd, cwd
        if node.kind == "group":
            state = self.script(node.bodies[0], cwd, inherited, nested=nested)
            return state, state
        if node.kind == "function":
            if node.name in _called_names(node.bodies[0]):
                self.dangers.append(f"function `{node.name}` calls itself (a fork bomb?)")
            self.script(node.bodies[0], None, [], nested=nested)
            return (None, None) if _changes_dir(node.bodies[0]) else (cwd, cwd)
        # if / while / until / for / select / case: bodies run in any order, maybe repeatedly
        start = None if any(_changes_dir(body) for body in node.bodies) else cwd
        for body in node.bodies:
            self.script(body, start, inherited, nested=nested)
        return start, start

    def _words(self, words: list[_Word], cwd: CwdState) -> None:
        for word in words:
            self.dynamic += [_DYNAMIC[kind] for kind in word.kinds if kind in _DYNAMIC]
            self.arith_vars |= "arithvar" in word.kinds
            for script in word.scripts:
                self.script(script, cwd, [], nested=True)

    def _redirect_words(self, redirects: list[Redirect], cwd: CwdState) -> None:
        for redirect in redirects:
            self._words([redirect.target, *([redirect.body] if redirect.body else [])], cwd)

    def _simple(
        self, node: Simple, cwd: CwdState, redirects: list[Redirect], nested: bool
    ) -> tuple[CwdState, CwdState]:
        self._words([*node.assignments, *node.words], cwd)
        self._redirect_words(node.redirects, cwd)
        argv = [word.value for word in node.words]
        if argv and UNKNOWN in argv[0]:
            self.dynamic.append("a command name only known at run time")
        if argv[:1] == ["["]:
            self.dynamic.append("a [ ... ] test")
        assignments = [w.value for w in node.assignments]
        command = self._record(
            argv,
            assignments,
            [*redirects, *node.redirects],
            cwd,
            nested,
            source=node.source,
        )
        name = command_name(command.argv[0]) if command.argv else ""
        if name in ("cd", "pushd") and cwd is not None:
            operands = [a for a in command.argv[1:] if not a.startswith("-")]
            target = operands[0] if operands else (None if "-" in command.argv else "~")
            if target is None or UNKNOWN in target:
                return None, cwd
            return frozenset((*steps, target) for steps in cwd), cwd
        if name == "popd":
            return None, cwd
        return cwd, cwd

    def _record(
        self,
        argv: list[str],
        assignments: list[str],
        redirects: list[Redirect],
        cwd: CwdState,
        nested: bool,
        *,
        source: str | None = None,
    ) -> SubCommand:
        words = (*assignments, *argv)
        argv, wrapper_assignments = unwrap(argv)
        assignments = [*assignments, *wrapper_assignments]
        self.tainted |= bool(argv) and command_name(argv[0]) in _TAINTING
        self.tainted |= any(
            _data_dependent(text.partition("=")[2]) for text in [*assignments, *argv] if "=" in text
        )
        facts = classify(argv)
        self.dangers += facts.dangers
        index = len(self.commands)
        inner_read_only = True
        if self.nesting < _MAX_NESTING:
            self.nesting += 1
            for inner in facts.inner:
                inner_read_only &= self._record(inner, [], [], cwd, nested=True).read_only
            for source in facts.scripts:
                self._script_text(source, cwd)
            self.nesting -= 1
        elif facts.inner or facts.scripts:
            self.dynamic.append("commands nested too deeply to check")
        out_targets, in_targets = _redirect_targets(redirects)
        safe_env = all(is_safe_assignment(a) for a in assignments)
        runs_code = bool(facts.scripts) or bool(argv and UNKNOWN in argv[0])
        read_only = facts.read_only and inner_read_only and safe_env and not runs_code
        writes: list[str] | None = None
        if facts.edit and facts.writes is not None and safe_env:
            writes = [*facts.writes, *out_targets]
        elif read_only:
            writes = out_targets
        changed = facts.writes if facts.modifies is None else facts.modifies
        touched = [*(changed or []), *out_targets]
        if facts.writes is None and not read_only:
            touched += [arg for arg in argv[1:] if is_path_like(arg)]
        mentioned = list(in_targets)
        if argv and command_name(argv[0]) in _FILE_COMMANDS:
            mentioned += [arg for arg in argv[1:] if not arg.startswith("-")]
        command = SubCommand(
            argv=tuple(argv),
            words=words,
            source=source,
            assignments=tuple(assignments),
            read_only=read_only and not out_targets,
            edit=writes is not None and (facts.edit or bool(out_targets)),
            writes=None if writes is None else tuple(writes),
            touched=tuple(touched),
            mentioned=tuple(mentioned),
            reads=None if facts.reads is None else (*facts.reads, *in_targets),
            critical=tuple(facts.critical),
            sweeps=tuple(facts.sweeps),
            cwd=cwd,
            nested=nested,
            exact=facts.exact,
            redirects=tuple(out_targets),
        )
        self.commands.insert(index, command)
        return command

    def _script_text(self, source: str, cwd: CwdState) -> None:
        if UNKNOWN in source:
            self.dynamic.append("shell code only known at run time (eval, sh -c)")
            return
        try:
            script = parse_shell(source)
        except ShellSyntaxError as exc:
            self.dynamic.append(f"shell code that cannot be parsed ({exc.message})")
            return
        self.script(script, cwd, [], nested=True)


def _data_dependent(value: str) -> bool:
    """Whether a variable's value may be unknown text or hold an array subscript."""
    return any(c in value for c in (UNKNOWN, "[", "*", "?"))


def _redirect_targets(redirects: list[Redirect]) -> tuple[list[str], list[str]]:
    """Files written (except /dev/null) and files read by redirections."""
    out: list[str] = []
    into: list[str] = []
    for redirect in redirects:
        target = redirect.target.value
        duplicate = redirect.op in (">&", "<&") and (target.isdigit() or target == "-")
        writes = redirect.op in _OUTPUT_OPS or (redirect.op == ">&" and not duplicate)
        if writes and target != "/dev/null":
            out.append(target)
        if redirect.op in ("<", "<>"):
            into.append(target)
    return out, into


def _name_of(node: Simple | Compound) -> str:
    if not isinstance(node, Simple) or not node.words:
        return ""
    argv = unwrap([word.value for word in node.words])[0]
    return command_name(argv[0]) if argv else ""


def _called_names(script: Script) -> set[str]:
    names: set[str] = set()
    for pipeline, _ in script.items:
        for node in pipeline.commands:
            if isinstance(node, Simple):
                names.add(_name_of(node))
                for word in node.words:
                    for inner in word.scripts:
                        names |= _called_names(inner)
            else:
                for body in node.bodies:
                    names |= _called_names(body)
    return names


def _changes_dir(script: Script) -> bool:
    """Whether running `script` may change the current directory of the shell running it."""
    for pipeline, op in script.items:
        if len(pipeline.commands) != 1 or op == "&":
            continue
        node = pipeline.commands[0]
        if isinstance(node, Simple):
            if _name_of(node) in ("cd", "pushd", "popd"):
                return True
        elif node.kind != "subshell" and any(_changes_dir(body) for body in node.bodies):
            return True
    return False
