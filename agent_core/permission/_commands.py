"""What individual commands do: read-only or not, which paths they write, what they run.

`unwrap` strips transparent wrappers (`timeout 5 cmd`, `env X=1 cmd`, `xargs cmd`, ...) so the
analysis sees the command that really runs; `classify` returns the `Facts` of one argv. Unknown
commands get the default facts: not read-only, writes unknown.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agent_core.permission._args import has_option, parse_args
from agent_core.permission._readonly import READ_ONLY_CHECKS, sed_script_is_safe
from agent_core.permission._shell import UNKNOWN

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_SYSTEM_BIN = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish"})
_PRIVILEGE = frozenset({"sudo", "doas", "su", "pkexec"})
_DISK_TOOLS = frozenset({"mkswap", "fdisk", "sfdisk", "cfdisk", "parted", "wipefs", "mke2fs"})
_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})
_EXACT_ONLY = frozenset(
    {"python", "python3", "python2", "node", "deno", "bun", "ruby", "perl", "php", "eval"}
    | {"exec", "source", ".", "osascript", "pwsh", "powershell", "awk", "gawk", "ssh"}
    | _SHELLS
    | _PRIVILEGE
)
NAME_ONLY_PREFIX = frozenset(
    {"mkdir", "touch", "rm", "rmdir", "unlink", "mv", "cp", "ln", "sed", "tee", "truncate"}
    | {"chmod", "chown", "chgrp", "cat", "head", "tail", "ls", "stat", "wc", "du", "file"}
    | {"echo", "printf", "grep", "rg", "find", "sort", "curl", "wget", "awk", "jq"}
)
"""Commands whose second word is an argument, not a subcommand: suggested prefixes stop at
their name (`rm:*`, not `rm file.txt:*`)."""


@dataclass(slots=True)
class Facts:
    """What one command (argv, wrappers removed) does.

    Attributes:
        read_only: It only reads (its redirections aside).
        edit: It is a filesystem edit whose every target is listed in `writes`.
        writes: Paths it creates, modifies, removes or copies from; None when unknown.
        modifies: The paths among `writes` it changes (`cp`'s destination, not its sources);
            None when all of them.
        reads: Paths it reads; None when unknown.
        critical: Targets where a system path would be a disaster (rm, rmdir, chmod -R ...).
        sweeps: Roots of a recursive deletion (`find DIR -delete`).
        dangers: Reasons for a safety prompt that need no path resolution.
        inner: Commands it runs itself (sudo X, find -exec X), as argv.
        scripts: Shell source it runs (eval, bash -c).
        exact: Suggest an exact rule: a prefix rule would allow arbitrary code.
    """

    read_only: bool = False
    edit: bool = False
    writes: list[str] | None = None
    modifies: list[str] | None = None
    reads: list[str] | None = field(default_factory=list)
    critical: list[str] = field(default_factory=list)
    sweeps: list[str] = field(default_factory=list)
    dangers: list[str] = field(default_factory=list)
    inner: list[list[str]] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)
    exact: bool = False


def command_name(word: str) -> str:
    """The name a command is known by: system binaries by path count as their basename."""
    head, _, tail = word.rpartition("/")
    return tail if head in _SYSTEM_BIN else word


def unwrap(argv: list[str]) -> tuple[list[str], list[str]]:
    """Strip wrappers that only run another command; return (argv, NAME=value assignments)."""
    assignments: list[str] = []
    while argv:
        name, rest = command_name(argv[0]), argv[1:]
        if name == "env":
            options, i = _leading_options(rest, "uC", ("--unset", "--chdir"))
            if any(opt in ("-C", "--chdir", "-S", "--split-string") for opt in options):
                return argv, assignments
            while i < len(rest) and _ASSIGNMENT.match(rest[i]):
                assignments.append(rest[i])
                i += 1
            if i == len(rest):
                return ["env"], assignments
            argv = rest[i:]
        elif name in ("command", "builtin") and rest and rest[0] not in ("-v", "-V"):
            argv = rest[1:] if rest[0] == "-p" else rest
        elif name == "exec":
            argv = rest[_leading_options(rest, "a")[1] :]
        elif name in ("nice", "nohup", "stdbuf"):
            argv = rest[_leading_options(rest, "nioe", ("--adjustment",))[1] :]
        elif name == "timeout":
            i = _leading_options(rest, "sk", ("--signal", "--kill-after"))[1]
            argv = rest[i + 1 :]
        elif name == "time":
            options, i = _leading_options(rest, "fo", ("--format", "--output"))
            if "-o" in options or "--output" in options:
                return argv, assignments
            argv = rest[i:]
        elif name == "xargs":
            return _xargs(rest), assignments
        else:
            return argv, assignments
    return argv, assignments


def _leading_options(
    args: Sequence[str], short_values: str = "", long_values: Sequence[str] = ()
) -> tuple[list[str], int]:
    """Option names before the first operand, and that operand's index."""
    names: list[str] = []
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "-":
        arg = args[i]
        i += 1
        if arg == "--":
            break
        name = arg.partition("=")[0]
        names.append(name if name.startswith("--") else arg[:2])
        if "=" not in arg and (
            name in long_values or (not name.startswith("--") and arg[-1] in short_values)
        ):
            i += 1
    return names, i


def _xargs(args: list[str]) -> list[str]:
    i, replace = 0, ""
    while i < len(args) and args[i].startswith("-"):
        arg, i = args[i], i + 1
        if arg in ("-I", "-a", "-d", "-E", "-L", "-n", "-P", "-s") and i < len(args):
            replace = args[i] if arg == "-I" else replace
            i += 1
        elif arg.startswith("-I"):
            replace = arg[2:]
        elif arg.startswith("-i"):
            replace = arg[2:] or "{}"
        elif arg.startswith("--replace"):
            replace = arg.partition("=")[2] or "{}"
    inner = args[i:] or ["echo"]
    if replace:
        inner = [a.replace(replace, UNKNOWN) for a in inner]
    return [*inner, UNKNOWN]


def classify(argv: Sequence[str]) -> Facts:
    """The facts of one command, given its argv after `unwrap`."""
    if not argv:
        return Facts(read_only=True)
    name, args = command_name(argv[0]), list(argv[1:])
    special = _SPECIAL.get(name)
    if special is not None:
        return special(args)
    if name.startswith("mkfs") or name in _DISK_TOOLS:
        return Facts(dangers=[f"`{name}` formats or repartitions disks"])
    check = READ_ONLY_CHECKS.get(name)
    if check is not None:
        reads = check(args)
        if reads is not None:
            return Facts(read_only=True, reads=reads)
    return Facts(exact=name in _EXACT_ONLY)


def _edit(
    short_values: str = "",
    long_values: Sequence[str] = (),
    *,
    critical: bool = False,
    copies: bool = False,
) -> Callable[[list[str]], Facts]:
    def facts(args: list[str]) -> Facts:
        options, operands = parse_args(args, short_values, long_values)
        into = [v for n, v in options if n in ("-t", "--target-directory") and v]
        found = Facts(edit=True, writes=operands + into, critical=operands if critical else [])
        if copies:  # cp and ln only change their destination
            found.modifies = into or operands[-1:]
        return found

    return facts


def _tee(args: list[str]) -> Facts:
    operands = parse_args(args)[1]
    if not operands:
        return Facts(read_only=True)
    return Facts(edit=True, writes=operands)


def _sed(args: list[str]) -> Facts:
    in_place, rest = False, []
    for arg in args:
        if arg.startswith("--in-place"):
            in_place = True
            continue
        if arg.startswith("-") and not arg.startswith("--"):
            letters = re.match(r"-[^efl]*", arg)
            in_place = in_place or bool(letters and "i" in letters.group())
        rest.append(arg)
    options, operands = parse_args(rest, "efl", ("--expression", "--file", "--line-length"))
    scripts = [v or "" for n, v in options if n in ("-e", "--expression")]
    from_file = has_option(options, "f", ("--file",))
    if not scripts and not from_file and operands:
        scripts, operands = [operands[0]], operands[1:]
    if in_place:
        return Facts(edit=True, writes=operands, reads=operands)
    safe = not from_file and all(sed_script_is_safe(script) for script in scripts)
    return Facts(read_only=safe, reads=operands)


def _chmod(args: list[str]) -> Facts:
    options, operands = [], []
    for arg in args:
        if arg.startswith("--") or re.fullmatch(r"-[Rvcfh]+", arg):
            options.append(arg)
        else:
            operands.append(arg)
    mode: str | None = None
    files = operands
    if not any(o.startswith("--reference") for o in options) and operands:
        mode, files = operands[0], operands[1:]
    recursive = any(o == "--recursive" or (not o.startswith("--") and "R" in o) for o in options)
    facts = Facts(edit=True, writes=files, critical=files if recursive else [])
    if mode is not None and _world_writable(mode):
        facts.dangers.append(f"`chmod {mode}` makes files writable by everyone")
    return facts


def _world_writable(mode: str) -> bool:
    if mode.isdigit():
        return int(mode[-1]) & 2 == 2
    for clause in mode.split(","):
        match = re.fullmatch(r"([ugoa]*)([+=])([rwxXst]*)", clause)
        if match and "w" in match.group(3) and ("a" in match.group(1) or "o" in match.group(1)):
            return True
    return False


def _chown(args: list[str]) -> Facts:
    options, operands = parse_args(args)
    recursive = has_option(options, "R", ("--recursive",))
    files = operands[1:]
    return Facts(writes=files, critical=files if recursive else [])


def _dd(args: list[str]) -> Facts:
    pairs = dict(arg.partition("=")[::2] for arg in args if "=" in arg)
    return Facts(
        writes=[pairs["of"]] if "of" in pairs else [], reads=[pairs["if"]] if "if" in pairs else []
    )


def _privileged(name: str) -> Callable[[list[str]], Facts]:
    def facts(args: list[str]) -> Facts:
        found = Facts(dangers=[f"`{name}` runs commands with elevated privileges"], exact=True)
        if name == "su":
            options, _ = parse_args(args, "c", ("--command",))
            found.scripts = [v for n, v in options if n in ("-c", "--command") and v]
        else:
            i = _leading_options(args, "ugpCDhrtTU", ("--user", "--group", "--prompt"))[1]
            if args[i:]:
                found.inner.append(args[i:])
        return found

    return facts


def _shell(args: list[str]) -> Facts:
    if args == ["--version"]:
        return Facts(read_only=True)
    for i, arg in enumerate(args):
        if not arg.startswith("-") or arg == "-":
            break
        if not arg.startswith("--") and "c" in arg:
            return Facts(scripts=args[i + 1 : i + 2] or [""], exact=True)
    return Facts(exact=True)


def _eval(args: list[str]) -> Facts:
    return Facts(scripts=[" ".join(args)], exact=True)


def _watch(args: list[str]) -> Facts:
    i = _leading_options(args, "nqd", ("--interval", "--differences"))[1]
    return Facts(scripts=[" ".join(args[i:])])


def _find(args: list[str]) -> Facts:
    start = _leading_options(args, "D")[1]
    paths: list[str] = []
    for arg in args[start:]:
        if arg.startswith("-") or arg in ("(", ")", "!", ","):
            break
        paths.append(arg)
    facts = Facts(read_only=True, reads=paths or ["."])
    i = start + len(paths)
    while i < len(args):
        arg = args[i]
        i += 1
        if arg in ("-delete", "-fprint", "-fprint0", "-fprintf", "-fls", "-ok", "-okdir"):
            facts.read_only = False
            facts.writes = None
            if arg == "-delete":
                facts.sweeps = paths or ["."]
        elif arg in ("-exec", "-execdir"):
            end = i
            while end < len(args) and args[end] not in (";", "+"):
                end += 1
            inner = [a.replace("{}", UNKNOWN) for a in args[i:end]]
            facts.inner.append(inner)
            if inner and command_name(inner[0]) in ("rm", "rmdir", "shred", "unlink"):
                facts.sweeps = paths or ["."]
            i = end + 1
    return facts


def _kill(args: list[str]) -> Facts:
    pids = args[1:] if args[:1] != ["--"] and args[:1] and args[0].startswith("-") else args
    if "-1" in pids:
        return Facts(dangers=["`kill -1` signals every process"])
    return Facts()


def _init(args: list[str]) -> Facts:
    if args[:1] in (["0"], ["6"]):
        return Facts(dangers=["`init` shuts down or restarts the machine"])
    return Facts()


def _systemctl(args: list[str]) -> Facts:
    operands = parse_args(args)[1]
    verb = operands[0] if operands else ""
    if verb in ("poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "emergency"):
        return Facts(dangers=[f"`systemctl {verb}` shuts down or restarts the machine"])
    check = READ_ONLY_CHECKS["systemctl"]
    return Facts(read_only=check(args) is not None, reads=[])


def _cd(args: list[str]) -> Facts:
    operands = [a for a in args if not a.startswith("-")]
    return Facts(read_only=True, reads=operands[:1] or ([] if "-" in args else ["~"]))


def _power(name: str) -> Callable[[list[str]], Facts]:
    def facts(args: list[str]) -> Facts:
        if name == "shutdown" and any(a in ("-c", "--cancel") for a in args):
            return Facts()
        return Facts(dangers=[f"`{name}` shuts down or restarts the machine"])

    return facts


_SPECIAL: dict[str, Callable[[list[str]], Facts]] = {
    "mkdir": _edit("m", ("--mode",)),
    "touch": _edit("drt", ("--date", "--reference")),
    "rm": _edit(critical=True),
    "rmdir": _edit(critical=True),
    "unlink": _edit(critical=True),
    "mv": _edit("tS", ("--target-directory", "--suffix")),
    "cp": _edit("tS", ("--target-directory", "--suffix"), copies=True),
    "ln": _edit("tS", ("--target-directory", "--suffix"), copies=True),
    "truncate": _edit("sr", ("--size", "--reference")),
    "tee": _tee,
    "sed": _sed,
    "chmod": _chmod,
    "chown": _chown,
    "chgrp": _chown,
    "dd": _dd,
    "shred": lambda args: Facts(writes=parse_args(args, "ns")[1]),
    "eval": _eval,
    "watch": _watch,
    "find": _find,
    "kill": _kill,
    "init": _init,
    "telinit": _init,
    "systemctl": _systemctl,
    "cd": _cd,
    "pushd": _cd,
    **{name: _privileged(name) for name in _PRIVILEGE},
    **dict.fromkeys(_SHELLS, _shell),
    **{name: _power(name) for name in _POWER},
}


def is_path_like(arg: str) -> bool:
    """Whether an argument of an unknown command may name a file (for dangerous-path checks)."""
    return bool(arg) and not arg.startswith("-") and "://" not in arg and UNKNOWN not in arg


def base_name(path: str) -> str:
    """The last component of a command path."""
    return os.path.basename(path) or path
