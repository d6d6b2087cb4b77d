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

from agent_core.permission._args import (
    Check,
    any_args,
    files,
    first_in,
    has_option,
    names,
    no_paths,
    parse_args,
    tool,
    version_only,
)

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


def _pager(args: list[str]) -> list[str] | None:
    """Less and more, without `+cmd` start commands (they may run `!shell`) or a log file."""
    if any(arg.startswith("+") for arg in args):
        return None
    return files("bhjkPxyz", forbid="oO", forbid_long=("--log-file", "--LOG-FILE"))(args)


def _printf(args: list[str]) -> list[str] | None:
    """Printf prints, or with -v sets a shell variable: a lowercase one cannot steer programs."""
    options = parse_args(args, "v")[0]
    names = [value or "" for name, value in options if name == "-v"]
    return [] if all(n.isidentifier() and n.islower() for n in names) else None


def _read(args: list[str]) -> list[str] | None:
    """`read` only sets shell variables; lowercase ones cannot steer other programs."""
    options, operands = parse_args(args, "adinNptu")
    variables = operands + [value or "" for name, value in options if name == "-a"]
    return [] if all(v.isidentifier() and v.islower() for v in variables) else None


def _git(args: list[str]) -> list[str] | None:
    directory, i = ".", 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        if arg == "-C" and i + 1 < len(args):
            directory, i = os.path.join(directory, args[i + 1]), i + 2
        elif arg in _GIT_FLAGS or arg.startswith(("--git-dir=", "--work-tree=")):
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
    mutating: tuple[str, ...] = ("--delete", "--move", "--copy", "--force", "--track")
    mutating = (
        *mutating,
        "--unset-upstream",
        "--edit-description",
        "--no-track",
        "--create-reflog",
    )
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


_GIT_FLAGS = frozenset({"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--bare"})
_GIT: dict[str, Check] = {
    **names(
        "status blame annotate shortlog describe rev-parse rev-list ls-files ls-tree", no_paths()
    ),
    **names(
        "ls-remote cat-file show-ref show-branch merge-base name-rev count-objects", no_paths()
    ),
    **names("for-each-ref cherry var version help check-ignore check-attr diff-files", no_paths()),
    **names("diff-index verify-commit verify-tag", no_paths()),
    **names("log diff show whatchanged diff-tree range-diff", no_paths(forbid_long=("--output",))),
    "grep": no_paths(forbid="O", forbid_long=("--open-files-in-pager",)),
    "branch": _git_branch,
    "tag": _git_tag,
    "config": _git_config,
    "reflog": _git_reflog,
    "remote": _git_remote,
    "stash": first_in("list show"),
    "worktree": first_in("list"),
    "notes": first_in("list show"),
    "submodule": first_in("status summary"),
    "lfs": first_in("ls-files status env version"),
}

_DOCKER_COMPOSE = tool(
    any_args("ps logs config images ls top version port"),
    global_values=("-f", "--file", "-p", "--project-name", "--profile", "--env-file"),
)
_DOCKER = tool(
    {
        **any_args("ps images logs inspect info version stats top port history diff search"),
        **any_args("--version -v"),
        **names(
            "container image volume network node service",
            tool(any_args("ls list ps inspect logs top port diff stats history")),
        ),
        "system": first_in("df info"),
        "context": first_in("ls list inspect show"),
        "buildx": first_in("ls inspect version"),
        "compose": _DOCKER_COMPOSE,
    },
    global_values=("--context", "-c", "-H", "--host", "--log-level", "-l", "--config"),
)


def _gh(subs: str) -> Check:
    return tool(dict.fromkeys(subs.split(), no_paths(forbid="w", forbid_long=("--web",))))


_GH = tool(
    {
        **any_args("status --version version"),
        "repo": _gh("view list"),
        "issue": _gh("list view status"),
        "pr": _gh("list view status diff checks"),
        **names("run release workflow gist", _gh("list view")),
        "search": _gh("repos issues prs commits code"),
        "auth": _gh("status"),
        "label": _gh("list"),
        "cache": _gh("list"),
    }
)

_NONE = no_paths(max_operands=0)
_NPM = tool(
    {
        **any_args("list ls ll la view info show v outdated search explain why root prefix help"),
        **any_args("ping fund query whoami doctor --version -v"),
        "version": _NONE,
        "audit": _NONE,
        "config": first_in("get list ls"),
        "pkg": first_in("get"),
    }
)
_PNPM = tool(
    {
        **any_args("list ls ll outdated why root bin view info --version -v"),
        "audit": no_paths(forbid_long=("--fix",)),
        "config": first_in("get list"),
        "store": first_in("path status"),
        "licenses": first_in("list ls"),
    }
)
_YARN = tool(
    {
        **any_args("list info why outdated --version -v bin audit"),
        "config": first_in("get list"),
        "licenses": first_in("list ls"),
    }
)
_PIP = tool(
    {
        **any_args("list show freeze check --version -V help debug inspect"),
        "index": first_in("versions"),
        "config": first_in("list get debug"),
        "cache": first_in("list dir info"),
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
_DPKG_READ = frozenset(
    ("-l", "--list", "-L", "--listfiles", "-s", "--status", "-S", "--search", "-p", "--version")
)
_JOURNAL_WRITES = "--vacuum-size --vacuum-time --vacuum-files --rotate --flush --sync"
_JOURNAL_WRITES += " --relinquish-var --setup-keys --update-catalog"

READ_ONLY_CHECKS: dict[str, Check] = {
    **names("cat tac rev wc md5sum sha1sum sha256sum sha512sum cksum stat readlink realpath"),
    **names("cmp comm paste expand unexpand"),
    **names("head tail", files("ncs", ("--lines", "--bytes", "--pid"))),
    **names("less more", _pager),
    **names("diff", files("CUxXIFS", ("--label", "--exclude", "--unified", "--context"))),
    **names("nl", files("bdfhilnsvw")),
    **names("cut", files("bcdf")),
    **names("fold", files("w")),
    **names("strings", files("nte")),
    **names("od", files("AjNStw")),
    **names("hexdump", files("efns")),
    **names("ls dir", files("IwT", ("--hide", "--ignore", "--width"), default=["."])),
    **names("du", files("dBtX", ("--max-depth", "--block-size"), default=["."])),
    **names("tree", files("LPI", forbid="o", default=["."])),
    **names("file", files("mFe", forbid="C", forbid_long=("--compile",))),
    **names("sort", files("ktST", forbid="o", forbid_long=("--output", "--compress"))),
    **names("uniq", files("fsw", max_operands=1)),
    **names("xxd", files("cglso", max_operands=1)),
    **names("shuf base64", files("nw", forbid="o", forbid_long=("--output",))),
    **names("join", files("tjeo12")),
    **names("column", files("sc")),
    **names("jq", files("fL", ("--arg", "--argjson", "--indent"), pattern_first=True)),
    **names("grep egrep fgrep", _GREP),
    **names("rg ag ack", _RG),
    **names("awk gawk mawk nawk", _awk),
    **names("echo pwd true false : test [ which whereis type whoami id groups uname", no_paths()),
    **names("uptime nproc free ps printenv locale arch tty sleep seq expr jobs dirs", no_paths()),
    **names("popd basename dirname logname users who getconf cal factor numfmt tr", no_paths()),
    **names("set ulimit help times lsof df dpkg-query", no_paths()),
    "printf": _printf,
    **names("date", no_paths(forbid="s", forbid_long=("--set",))),
    **names("hostname", no_paths(forbid="Fb", forbid_long=("--file", "--boot"), max_operands=0)),
    **names("umask alias", _NONE),
    "env": lambda args: [] if not args else None,
    "read": _read,
    "declare": lambda args: [] if args in ([], ["-p"]) else None,
    "export": lambda args: [] if args in ([], ["-p"]) else None,
    "command": lambda args: [] if args[:1] in (["-v"], ["-V"]) else None,
    "git": _git,
    **names("docker podman", _DOCKER),
    "docker-compose": _DOCKER_COMPOSE,
    "gh": _GH,
    "npm": _NPM,
    "pnpm": _PNPM,
    "yarn": _YARN,
    **names("pip pip3", _PIP),
    **names("python python3", _python),
    "uv": tool(
        {
            "--version": None,
            "version": _NONE,
            "pip": first_in("list show freeze tree check"),
            "python": first_in("list find dir"),
            "tool": first_in("list dir"),
            "cache": first_in("dir"),
        }
    ),
    "cargo": tool(any_args("--version -V version search help --list")),
    "go": tool({**any_args("version doc help"), "env": no_paths(forbid="wu")}),
    "kubectl": tool(
        {
            **any_args("get describe logs version top explain api-resources api-versions"),
            **any_args("cluster-info events"),
            "config": first_in("view get-contexts current-context get-clusters"),
            "auth": first_in("can-i whoami"),
        },
        global_values=("-n", "--namespace", "--context", "--kubeconfig", "--cluster"),
    ),
    "helm": tool(
        {
            **any_args("list ls status get history show search version env template lint"),
            "repo": first_in("list ls"),
            "dependency": first_in("list"),
        },
        global_values=("-n", "--namespace", "--kube-context", "--kubeconfig"),
    ),
    "terraform": tool(
        {
            **any_args("version -version --version show output providers graph validate"),
            "state": first_in("list show"),
        },
        global_values=("-chdir",),
    ),
    "brew": tool(any_args("list ls info search --version config doctor outdated deps leaves")),
    "apt": tool(any_args("list show search policy")),
    "apt-cache": tool(any_args("search show policy depends rdepends showpkg")),
    "dpkg": lambda args: [] if args[:1] and args[0] in _DPKG_READ else None,
    "systemctl": tool(
        any_args("status is-active is-enabled is-failed list-units list-unit-files list-timers")
        | any_args("list-sockets show cat list-dependencies --version"),
        skip_options=True,
    ),
    "journalctl": no_paths(forbid_long=_JOURNAL_WRITES.split()),
    **names("node ruby rustc gcc g++ clang make cmake deno bun php", version_only("-v -V")),
    **names(
        "java javac dotnet tsc ruff mypy pytest curl wget openssl black eslint prettier",
        version_only("-version version -V"),
    ),
    **names("poetry swift mvn gradle rustup", version_only("-version version -V")),
    **names("perl lua ssh", version_only("-v -V")),
}
