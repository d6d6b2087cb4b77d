"""The read-only command table.

Each check takes a command's arguments and returns the paths the invocation reads when it only
reads, or None when it may change something (an unknown option counts as a change only where a
tool has options that write: `sort -o`, `git branch -d`, `find -delete` ...). The table follows
the spec's list (git status/log/diff/show/branch/blame/grep/reflog/config --list, ls, cat, head,
tail, grep, rg, find, tree, stat, wc, pwd, which, docker ps/images/logs/inspect/info, gh repo
view/issue list/pr list/status, npm list, pip list/show, node/python --version) and extends it
with their usual read-only relatives.
"""

from __future__ import annotations

import os
import re
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


def first_in(*names: str) -> Check:
    """A subcommand group whose listed sub-subcommands read."""
    return lambda args: [] if args and args[0] in names else None


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


def version_only(*flags: str) -> Check:
    """A command that is read-only only when asked for its version or help."""
    accepted = {"--version", "--help", *flags}
    return lambda args: [] if len(args) == 1 and args[0] in accepted else None


def names(*commands: str, check: Check | None = None) -> dict[str, Check]:
    """The same check for several commands (default: reads its operands)."""
    return dict.fromkeys(commands, check or files())


_SED_ADDRESS = r"(?:\d+|\$|/(?:[^/\\]|\\.)*/[IM]*)"
_SED_RANGE = rf"(?:{_SED_ADDRESS}(?:\s*,\s*(?:{_SED_ADDRESS}|[+~]\d+))?)?\s*!?\s*"
_SED_PLAIN = re.compile(rf"\s*{_SED_RANGE}[pdqQ=lnNgGhHxz]?\s*")
_SED_SUBST = re.compile(rf"\s*{_SED_RANGE}s(.)")


def sed_script_is_safe(script: str) -> bool:
    """Whether a sed script only prints: addresses with p/d/q/=..., and s/// without w or e."""
    for piece in re.split(r"[;\n]", script):
        if _SED_PLAIN.fullmatch(piece):
            continue
        match = _SED_SUBST.match(piece)
        if match is None or match.group(1) in "\\\n ":
            return False
        delimiter = re.escape(match.group(1))
        rest = piece[match.end() :]
        part = rf"(?:[^{delimiter}\\]|\\.)*"
        if not re.fullmatch(rf"{part}{delimiter}{part}{delimiter}[gpiImM0-9]*\s*", rest):
            return False
    return True


_AWK_UNSAFE = re.compile(r"system|getline|[|>@]|ENVIRON|close|fflush")


def _awk(args: list[str]) -> list[str] | None:
    options, operands = parse_args(args, "Fv", ("--field-separator", "--assign"))
    if any(name not in ("-F", "-v", "--field-separator", "--assign") for name, _ in options):
        return None
    if not operands or _AWK_UNSAFE.search(operands[0]):
        return None
    return operands[1:]


def _git(args: list[str]) -> list[str] | None:
    directory, i = ".", 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        if arg == "-C" and i + 1 < len(args):
            directory, i = os.path.join(directory, args[i + 1]), i + 2
        elif arg in ("--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--bare"):
            i += 1
        elif arg.startswith(("--git-dir=", "--work-tree=")):
            i += 1
        elif arg in ("--version", "--help", "-h", "--exec-path") and i == len(args) - 1:
            return []
        else:
            return None
    sub = _GIT.get(args[i]) if i < len(args) else None
    if sub is None or sub(args[i + 1 :]) is None:
        return None
    return [directory]


def _git_branch(args: list[str]) -> list[str] | None:
    listing = ("--contains", "--no-contains", "--merged", "--no-merged", "--points-at")
    options, operands = parse_args(args, "", (*listing, "--sort", "--format", "--abbrev"))
    mutating = ("--delete", "--move", "--copy", "--force", "--set-upstream-to", "--track")
    mutating += ("--unset-upstream", "--edit-description", "--no-track", "--create-reflog")
    if has_option(options, "dDmMcCuft", mutating):
        return None
    if operands and not has_option(options, "l", ("--list", *listing)):
        return None
    return []


def _git_tag(args: list[str]) -> list[str] | None:
    listing = ("--contains", "--no-contains", "--merged", "--no-merged", "--points-at")
    options, operands = parse_args(args, "", (*listing, "--sort", "--format"))
    mutating = ("--delete", "--annotate", "--sign", "--local-user", "--force", "--message")
    if has_option(options, "dasufmFe", (*mutating, "--file", "--edit", "--create-reflog")):
        return None
    if operands and not has_option(options, "lv", ("--list", "--verify", *listing)):
        return None
    return []


def _git_config(args: list[str]) -> list[str] | None:
    if args[:1] in (["get"], ["list"]):
        return []
    options, operands = parse_args(args, "f", ("--file", "--blob", "--type", "--default"))
    writing = ("--add", "--unset", "--unset-all", "--replace-all", "--rename-section")
    if has_option(options, "e", (*writing, "--remove-section", "--edit")):
        return None
    reading = ("--list", "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color")
    if any(name in reading or name == "-l" for name, _ in options):
        return []
    return [] if len(operands) == 1 else None


def _git_reflog(args: list[str]) -> list[str] | None:
    operands = [a for a in args if not a.startswith("-")]
    return None if operands[:1] in (["expire"], ["delete"]) else []


def _git_remote(args: list[str]) -> list[str] | None:
    operands = [a for a in args if not a.startswith("-")]
    return [] if operands[:1] in ([], ["show"], ["get-url"]) else None


_GIT_OUT = no_paths(forbid_long=("--output",))
_GIT: dict[str, Check] = {
    **names("status", "blame", "annotate", "shortlog", "describe", "rev-parse", check=no_paths()),
    **names("rev-list", "ls-files", "ls-tree", "ls-remote", "cat-file", check=no_paths()),
    **names("show-ref", "show-branch", "merge-base", "name-rev", "count-objects", check=no_paths()),
    **names("for-each-ref", "cherry", "var", "version", "help", "check-ignore", check=no_paths()),
    **names(
        "check-attr", "diff-files", "diff-index", "verify-commit", "verify-tag", check=no_paths()
    ),
    **names("log", "diff", "show", "whatchanged", "diff-tree", "range-diff", check=_GIT_OUT),
    "grep": no_paths(forbid="O", forbid_long=("--open-files-in-pager",)),
    "branch": _git_branch,
    "tag": _git_tag,
    "config": _git_config,
    "reflog": _git_reflog,
    "remote": _git_remote,
    "stash": first_in("list", "show"),
    "worktree": first_in("list"),
    "notes": first_in("list", "show"),
    "submodule": first_in("status", "summary"),
    "lfs": first_in("ls-files", "status", "env", "version"),
}

_DOCKER_LEAF = dict.fromkeys(("ls", "list", "ps", "inspect", "logs", "top", "port", "diff"), None)
_DOCKER_COMPOSE = tool(
    dict.fromkeys(("ps", "logs", "config", "images", "ls", "top", "version", "port"), None),
    global_values=("-f", "--file", "-p", "--project-name", "--profile", "--env-file"),
)
_DOCKER = tool(
    {
        **dict.fromkeys(("ps", "images", "logs", "inspect", "info", "version", "stats"), None),
        **dict.fromkeys(("top", "port", "history", "diff", "search", "--version", "-v"), None),
        **dict.fromkeys(
            ("container", "image", "volume", "network", "node", "service"),
            tool({**_DOCKER_LEAF, "stats": None, "history": None}),
        ),
        "system": first_in("df", "info"),
        "context": first_in("ls", "list", "inspect", "show"),
        "buildx": first_in("ls", "inspect", "version"),
        "compose": _DOCKER_COMPOSE,
    },
    global_values=("--context", "-c", "-H", "--host", "--log-level", "-l", "--config"),
)

_NO_WEB = no_paths(forbid="w", forbid_long=("--web",))


def _gh_group(*subs: str) -> Check:
    return tool(dict.fromkeys(subs, _NO_WEB))


_GH = tool(
    {
        **dict.fromkeys(("status", "--version", "version"), None),
        "repo": _gh_group("view", "list"),
        "issue": _gh_group("list", "view", "status"),
        "pr": _gh_group("list", "view", "status", "diff", "checks"),
        "run": _gh_group("list", "view"),
        "release": _gh_group("list", "view"),
        "workflow": _gh_group("list", "view"),
        "gist": _gh_group("list", "view"),
        "search": _gh_group("repos", "issues", "prs", "commits", "code"),
        "auth": _gh_group("status"),
        "label": _gh_group("list"),
        "cache": _gh_group("list"),
    }
)

_NONE = no_paths(max_operands=0)
_NPM = tool(
    {
        **dict.fromkeys(("list", "ls", "ll", "la", "view", "info", "show", "v", "outdated"), None),
        **dict.fromkeys(("search", "explain", "why", "root", "prefix", "help", "ping"), None),
        **dict.fromkeys(("fund", "query", "whoami", "doctor", "--version", "-v"), None),
        "version": _NONE,
        "audit": _NONE,
        "config": first_in("get", "list", "ls"),
        "pkg": first_in("get"),
    }
)
_PNPM = tool(
    {
        **dict.fromkeys(("list", "ls", "ll", "outdated", "why", "root", "bin", "view"), None),
        **dict.fromkeys(("info", "--version", "-v"), None),
        "audit": no_paths(forbid_long=("--fix",)),
        "config": first_in("get", "list"),
        "store": first_in("path", "status"),
        "licenses": first_in("list", "ls"),
    }
)
_YARN = tool(
    {
        **dict.fromkeys(("list", "info", "why", "outdated", "--version", "-v", "bin"), None),
        "audit": None,
        "config": first_in("get", "list"),
        "licenses": first_in("list", "ls"),
    }
)
_PIP = tool(
    {
        **dict.fromkeys(("list", "show", "freeze", "check", "--version", "-V", "help"), None),
        **dict.fromkeys(("debug", "inspect"), None),
        "index": first_in("versions"),
        "config": first_in("list", "get", "debug"),
        "cache": first_in("list", "dir", "info"),
    }
)


def _python(args: list[str]) -> list[str] | None:
    if args[:2] == ["-m", "pip"]:
        return _PIP(args[2:])
    return version_only("-V")(args)


_GREP = files(
    "efmABCdD",
    ("--regexp", "--file", "--max-count", "--include", "--exclude", "--exclude-dir"),
    pattern_first=True,
)
_RG = files(
    "efgtTmABCjMr",
    ("--regexp", "--file", "--glob", "--iglob", "--type", "--type-not", "--max-depth"),
    forbid_long=("--pre",),
    pattern_first=True,
    default=["."],
)

READ_ONLY_CHECKS: dict[str, Check] = {
    **names("cat", "tac", "rev", "wc", "md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum"),
    **names("head", "tail", check=files("ncs", ("--lines", "--bytes", "--pid"))),
    **names("stat", "readlink", "realpath", "cmp", "comm", "paste", "expand", "unexpand"),
    **names("diff", check=files("CUxXIFS", ("--label", "--exclude", "--unified", "--context"))),
    **names("nl", check=files("bdfhilnsvw")),
    **names("cut", check=files("bcdf")),
    **names("fold", check=files("w")),
    **names("strings", check=files("nte")),
    **names("od", check=files("AjNStw")),
    **names("hexdump", check=files("efns")),
    **names("ls", "dir", check=files("IwT", ("--hide", "--ignore", "--width"), default=["."])),
    **names("du", check=files("dBtX", ("--max-depth", "--block-size"), default=["."])),
    **names("tree", check=files("LPI", forbid="o", default=["."])),
    **names("file", check=files("mFe", forbid="C", forbid_long=("--compile",))),
    **names("sort", check=files("ktST", forbid="o", forbid_long=("--output", "--compress"))),
    **names("uniq", check=files("fsw", max_operands=1)),
    **names("xxd", check=files("cglso", max_operands=1)),
    **names("shuf", "base64", check=files("nw", forbid="o", forbid_long=("--output",))),
    **names("join", check=files("tjeo12")),
    **names("column", check=files("sc")),
    **names("jq", check=files("fL", ("--arg", "--argjson", "--indent"), pattern_first=True)),
    **names("grep", "egrep", "fgrep", check=_GREP),
    **names("rg", "ag", "ack", check=_RG),
    **names("awk", "gawk", "mawk", "nawk", check=_awk),
    **names(
        "echo",
        "pwd",
        "true",
        "false",
        ":",
        "test",
        "[",
        "which",
        "whereis",
        "type",
        check=no_paths(),
    ),
    **names(
        "whoami",
        "id",
        "groups",
        "uname",
        "uptime",
        "nproc",
        "free",
        "ps",
        "printenv",
        check=no_paths(),
    ),
    **names(
        "locale",
        "arch",
        "tty",
        "sleep",
        "seq",
        "expr",
        "jobs",
        "dirs",
        "popd",
        "basename",
        check=no_paths(),
    ),
    **names(
        "dirname",
        "logname",
        "users",
        "who",
        "getconf",
        "cal",
        "factor",
        "numfmt",
        "tr",
        check=no_paths(),
    ),
    **names("set", "ulimit", "help", "times", "lsof", "df", "dpkg-query", check=no_paths()),
    **names("printf", check=no_paths(forbid="v")),
    **names("date", check=no_paths(forbid="s", forbid_long=("--set",))),
    **names(
        "hostname", check=no_paths(forbid="Fb", forbid_long=("--file", "--boot"), max_operands=0)
    ),
    **names("umask", "alias", check=no_paths(max_operands=0)),
    "env": lambda args: [] if not args else None,
    "declare": lambda args: [] if args == ["-p"] or not args else None,
    "export": lambda args: [] if args in ([], ["-p"]) else None,
    "command": lambda args: [] if args[:1] in (["-v"], ["-V"]) else None,
    "git": _git,
    "docker": _DOCKER,
    "podman": _DOCKER,
    "docker-compose": _DOCKER_COMPOSE,
    "gh": _GH,
    "npm": _NPM,
    "pnpm": _PNPM,
    "yarn": _YARN,
    "pip": _PIP,
    "pip3": _PIP,
    "python": _python,
    "python3": _python,
    "uv": tool(
        {
            "--version": None,
            "version": _NONE,
            "pip": first_in("list", "show", "freeze", "tree", "check"),
            "python": first_in("list", "find", "dir"),
            "tool": first_in("list", "dir"),
            "cache": first_in("dir"),
        }
    ),
    "cargo": tool(dict.fromkeys(("--version", "-V", "version", "search", "help", "--list"), None)),
    "go": tool({"version": None, "doc": None, "help": None, "env": no_paths(forbid="wu")}),
    "kubectl": tool(
        {
            **dict.fromkeys(("get", "describe", "logs", "version", "top", "explain"), None),
            **dict.fromkeys(("api-resources", "api-versions", "cluster-info", "events"), None),
            "config": first_in("view", "get-contexts", "current-context", "get-clusters"),
            "auth": first_in("can-i", "whoami"),
        },
        global_values=("-n", "--namespace", "--context", "--kubeconfig", "--cluster"),
    ),
    "helm": tool(
        {
            **dict.fromkeys(("list", "ls", "status", "get", "history", "show", "search"), None),
            **dict.fromkeys(("version", "env", "template", "lint"), None),
            "repo": first_in("list", "ls"),
            "dependency": first_in("list"),
        },
        global_values=("-n", "--namespace", "--kube-context", "--kubeconfig"),
    ),
    "terraform": tool(
        {
            **dict.fromkeys(("version", "-version", "--version", "show", "output"), None),
            **dict.fromkeys(("providers", "graph", "validate"), None),
            "state": first_in("list", "show"),
        },
        global_values=("-chdir",),
    ),
    "brew": tool(
        dict.fromkeys(
            (
                "list",
                "ls",
                "info",
                "search",
                "--version",
                "config",
                "doctor",
                "outdated",
                "deps",
                "leaves",
                "uses",
                "desc",
            ),
            None,
        )
    ),
    "apt": tool(dict.fromkeys(("list", "show", "search", "policy"), None)),
    "apt-cache": tool(
        dict.fromkeys(("search", "show", "policy", "depends", "rdepends", "showpkg"), None)
    ),
    "dpkg": lambda args: [] if args[:1] and args[0] in _DPKG_READ else None,
    "systemctl": tool(
        dict.fromkeys(
            (
                "status",
                "is-active",
                "is-enabled",
                "is-failed",
                "list-units",
                "list-unit-files",
                "list-timers",
                "list-sockets",
                "show",
                "cat",
                "list-dependencies",
                "--version",
            ),
            None,
        ),
        skip_options=True,
    ),
    "journalctl": no_paths(
        forbid_long=(
            "--vacuum-size",
            "--vacuum-time",
            "--vacuum-files",
            "--rotate",
            "--flush",
            "--sync",
            "--relinquish-var",
            "--setup-keys",
            "--update-catalog",
        )
    ),
    **names(
        "node",
        "ruby",
        "rustc",
        "gcc",
        "g++",
        "clang",
        "make",
        "cmake",
        "deno",
        "bun",
        "php",
        check=version_only("-v", "-V"),
    ),
    **names(
        "java",
        "javac",
        "dotnet",
        "tsc",
        "ruff",
        "mypy",
        "pytest",
        "curl",
        "wget",
        "openssl",
        "black",
        "eslint",
        "prettier",
        "poetry",
        "swift",
        "mvn",
        "gradle",
        "rustup",
        check=version_only("-version", "version", "-V"),
    ),
    **names("perl", "lua", "ssh", check=version_only("-v", "-V")),
}

_DPKG_READ = frozenset(
    {"-l", "--list", "-L", "--listfiles", "-s", "--status", "-S", "--search", "-p"}
    | {"--print-avail", "--get-selections", "--print-architecture", "--version"}
)
