"""Command-line argument helpers for the command tables.

GNU-style option parsing and the building blocks of read-only checks.

A check takes a command's arguments and returns the paths the invocation reads when it only
reads, or None when it may change something.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

Check = Callable[[list[str]], list[str] | None]


def parse_args(
    args: Sequence[str], short_values: str = "", long_values: Sequence[str] = ()
) -> tuple[list[tuple[str, str | None]], list[str]]:
    """Split arguments GNU-style (options anywhere, `--` ends them) into options and operands.

    Only options listed in `short_values`/`long_values` take the next argument as their value;
    an unlisted option that does take one leaves its value among the operands, where it is
    checked like a path: listing too few is conservative, listing too many would hide paths.
    """
    options: list[tuple[str, str | None]] = []
    operands: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            operands += args[i:]
            break
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if not eq and name in long_values and i < len(args):
                value, i = args[i], i + 1
            options.append((name, value if eq or name in long_values else None))
        elif arg.startswith("-") and len(arg) > 1:
            for j, letter in enumerate(arg[1:], 1):
                if letter in short_values:
                    value = arg[j + 1 :]
                    if not value and i < len(args):
                        value, i = args[i], i + 1
                    options.append(("-" + letter, value))
                    break
                options.append(("-" + letter, None))
        else:
            operands.append(arg)
    return options, operands


def has_option(
    options: Sequence[tuple[str, str | None]], short: str = "", long: Sequence[str] = ()
) -> bool:
    """Whether any option is one of the `short` letters or a `long` name (GNU abbreviations too)."""
    for name, _ in options:
        if len(name) == 2 and name[1] in short:
            return True
        if len(name) > 3 and any(option.startswith(name) for option in long):
            return True
    return False


def files(
    values: str = "",
    long_values: Sequence[str] = (),
    *,
    forbid: str = "",
    forbid_long: Sequence[str] = (),
    pattern_first: bool = False,
    default: Sequence[str] = (),
    max_operands: int | None = None,
) -> Check:
    """A command whose operands are the files it reads."""

    def check(args: list[str]) -> list[str] | None:
        options, operands = parse_args(args, values, long_values)
        if has_option(options, forbid, forbid_long):
            return None
        if max_operands is not None and len(operands) > max_operands:
            return None
        explicit = any(name in ("-e", "-f", "--regexp", "--file") for name, _ in options)
        if pattern_first and not explicit:
            operands = operands[1:]
        return operands or list(default)

    return check


def no_paths(
    *, forbid: str = "", forbid_long: Sequence[str] = (), max_operands: int | None = None
) -> Check:
    """A command that reads no files (its operands are not paths)."""
    inner = files(forbid=forbid, forbid_long=forbid_long, max_operands=max_operands)
    return lambda args: None if inner(args) is None else []


def first_in(names: str) -> Check:
    """A subcommand group whose listed (space-separated) sub-subcommands read."""
    accepted = frozenset(names.split())
    return lambda args: [] if args and args[0] in accepted else None


def any_args(names: str) -> dict[str, Check | None]:
    """Subcommands (space-separated) that read whatever their arguments."""
    return dict.fromkeys(names.split())


def tool(
    table: dict[str, Check | None],
    *,
    global_values: Collection[str] = (),
    skip_options: bool = False,
) -> Check:
    """A tool with subcommands; `table` maps read-only ones to a check (None: any arguments)."""

    def check(args: list[str]) -> list[str] | None:
        i = 0
        while i < len(args) and args[i].startswith("-") and args[i] not in table:
            name = args[i].partition("=")[0]
            if name in global_values:
                i += 1 if "=" in args[i] else 2
            elif skip_options:
                i += 1
            else:
                return None
        if i >= len(args) or args[i] not in table:
            return None
        sub = table[args[i]]
        return [] if sub is None else sub(args[i + 1 :])

    return check


def version_only(flags: str = "") -> Check:
    """A command that only reads when asked for its version or help."""
    accepted = {"--version", "--help", *flags.split()}
    return lambda args: [] if len(args) == 1 and args[0] in accepted else None


def names(commands: str, check: Check | None = None) -> dict[str, Check]:
    """The same check for several (space-separated) commands; default: reads its operands."""
    return dict.fromkeys(commands.split(), check or files())
