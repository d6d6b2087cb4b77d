"""Textual screens over the whole command line, on top of the parsed analysis.

The spec's Bash check flags dangerous patterns (`rm -rf`, `chmod 777`, `mkfs` ...) and sed
scripts outside a small allowlist by looking at the command's text, wherever they occur. The
analysis already finds the real dangers; these screens make sure Troupe never asks less than
the spec's check does: what they flag gets a safety prompt even when the analysis sees no
harm (`npm run format`, `sed -n '/x/p' f`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

_PATTERNS = (
    *("rm -rf", "sudo rm", "dd", "mkfs", "fdisk", "format", "chmod 777", "chmod -R 777"),
    *("chown -R", "kill -9", "> /dev/"),
)
# short single words match as whole words only (`dd`, not the `dd` in `git add`)
_MATCHERS = tuple(
    (p, re.compile(rf"\b{re.escape(p)}\b") if " " not in p and len(p) <= 4 else None)
    for p in _PATTERNS
)
_SED_FLAGS = frozenset("nEei")
_SED_PRINT = re.compile(r"\d+p|\d+,\d+p")
_SED_WRITE = re.compile(r"/[wW]\s+\S+|/[wW]$")
_SED_EXEC = re.compile(r"/[eE](?:\s|$)")


def dangerous_pattern(command: str) -> str | None:
    """The first dangerous pattern in the command's text (short ones as whole words)."""
    text = " ".join(command.split())
    for pattern, word in _MATCHERS:
        found = word.search(text) is not None if word else pattern in text
        if found:
            return pattern
    return None


def sed_problem(command: str, dangerous_files: Sequence[str]) -> str | None:
    """Why the first `sed` in the line needs a prompt, or None.

    Its arguments (everything after the word `sed`) may only be the flags -n, -E, -e and -i
    and scripts that print lines (`-n 5p`, `-n 1,5p`) or substitute (`s/a/b/`, `s|a|b|g`),
    and -i may not edit a sensitive file. Text that cannot be split into words counts as a
    problem once it mentions sed at all.
    """
    if "sed" not in command:
        return None
    try:
        tokens = shlex.split(command)
    except ValueError:
        return "the command mentions sed but cannot be split into words"
    start = next((i for i, t in enumerate(tokens) if t == "sed" or t.endswith("/sed")), None)
    if start is None:
        return None
    flags, scripts, files = _sed_arguments(tokens[start + 1 :])
    if not scripts:
        return "sed without a script"
    if bad := sorted(set(flags) - _SED_FLAGS):
        return f"sed option -{bad[0]}"
    for script in scripts:
        problem = _sed_script_problem(script, printing="n" in flags)
        if problem:
            return problem
    if "i" in flags:
        for file in files:
            if any(name in file or file.endswith(name) for name in dangerous_files):
                return f"sed -i on the sensitive file {file}"
    return None


def _sed_arguments(args: list[str]) -> tuple[list[str], list[str], list[str]]:
    """Split sed's arguments into flag letters, scripts and files."""
    flags: list[str] = []
    scripts: list[str] = []
    files: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in ("-e", "--expression"):
            if eq:
                scripts.append(inline)
            elif i + 1 < len(args):
                i += 1
                scripts.append(args[i])
        elif name == "--in-place":
            flags.append("i")
            if not eq and _suffix_follows(args, i):
                i += 1
        elif name.startswith("--"):
            flags.append("?" if name != "--file" else "f")
        elif name.startswith("-") and len(name) > 1:
            letters = name[1:]
            for j, letter in enumerate(letters):
                flags.append(letter)
                rest = letters[j + 1 :]
                if letter == "e":
                    if rest:
                        scripts.append(rest)
                    elif i + 1 < len(args):
                        i += 1
                        scripts.append(args[i])
                    break
                if letter in "fi":
                    break
            if letters.endswith("i") and _suffix_follows(args, i):
                i += 1
        elif not arg.startswith("-"):
            (files if scripts else scripts).append(arg)
        i += 1
    return flags, scripts, files


def _suffix_follows(args: list[str], i: int) -> bool:
    """Whether the argument after `-i` is taken as a backup suffix (`.bak`), not a script."""
    if i + 1 >= len(args):
        return False
    following = args[i + 1]
    return not following.startswith(("-", "s")) and (
        following.startswith(".") or "." not in following
    )


def _sed_script_problem(script: str, *, printing: bool) -> str | None:
    if _SED_WRITE.search(script) or script.endswith(("/w", "/W")):
        return "a sed script that writes files (w)"
    if _SED_EXEC.search(script) or script.endswith(("/e", "/E")):
        return "a sed script that runs commands (e)"
    if (
        "{" in script
        or "}" in script
        or script.startswith("!")
        or ("#" in script and not script.startswith("s#"))
    ):
        return f"the sed script {script!r}"
    if printing and _SED_PRINT.fullmatch(script):
        return None
    if script[:2] in ("s/", "s|", "s#"):
        parts = script[2:].split(script[1])
        if len(parts) == 2 or (len(parts) > 2 and all(c in "gp0123456789" for c in parts[2])):
            return None
    return f"the sed script {script!r}"
