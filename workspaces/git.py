"""The git state of a directory (branch, divergence, changed files), best effort.

Two `git` runs: `status --porcelain=v2 --branch -z` for the branch and file counts, then
`diff --shortstat HEAD` for the changed lines. Neither takes the index lock (the agent's own
shell may hold it). Not a repository, no git binary, a timeout: all read as "nothing to report".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import shlex
from collections.abc import Awaitable, Callable
from pathlib import Path

from pydantic import ConfigDict, Field

from agent_core.deferred_model import DeferredModel
from agent_core.message import TextBlock
from agent_core.tool.execution import ToolExecutor, ToolInvocation

log = logging.getLogger(__name__)

GIT_TIMEOUT = 5.0
"""Seconds allowed per git run: enough for a cold index, short enough for a request."""

_STATUS = (
    "git",
    "--no-optional-locks",
    "status",
    "--porcelain=v2",
    "--branch",
    "-z",
    "--untracked-files=normal",
    "--ignore-submodules=all",
)
_SHORTSTAT = ("git", "--no-optional-locks", "diff", "--shortstat", "HEAD")
_INSERTIONS = re.compile(rb"(\d+) insertion")
_DELETIONS = re.compile(rb"(\d+) deletion")
_AHEAD_BEHIND = re.compile(r"^\+(\d+) -(\d+)$")


class GitStatus(DeferredModel):
    """Git state of one directory."""

    model_config = ConfigDict(extra="forbid")

    branch: str | None = Field(default=None, description="Current branch; null when detached.")
    head: str | None = Field(
        default=None, description="Full commit SHA of HEAD; null before the first commit."
    )
    ahead: int | None = Field(
        default=None, description="Commits ahead of the upstream; null without an upstream."
    )
    behind: int | None = Field(
        default=None, description="Commits behind the upstream; null without an upstream."
    )
    insertions: int = Field(default=0, description="Lines added relative to HEAD.")
    deletions: int = Field(default=0, description="Lines removed relative to HEAD.")
    staged: int = Field(default=0, description="Files with staged changes.")
    unstaged: int = Field(default=0, description="Files with unstaged changes.")
    untracked: int = Field(default=0, description="Files git is not tracking.")
    conflicted: int = Field(default=0, description="Files with merge conflicts.")


GitRunner = Callable[[tuple[str, ...], Path], Awaitable[bytes | None]]
"""Runs a git command line in a directory: its stdout on success, else None."""


async def read_git_status(directory: Path, run: GitRunner | None = None) -> GitStatus | None:
    """The git state of `directory`, or None when there is nothing to report.

    Args:
        directory: Where to look.
        run: How git runs; default: here, in this process. A workspace's directory is the
            agent's: its git configuration can run commands (`core.fsmonitor`, hooks), so a
            server runs git inside the workspace's sandbox (`run_in_workspace`).
    """
    _run = run or run_here
    status = await _run(_STATUS, directory)
    if status is None:
        return None
    summary = parse_porcelain_v2(status)
    if summary.branch is None and summary.head is None:
        return None
    diff = await _run(_SHORTSTAT, directory)
    if diff is None:  # e.g. no commit yet: HEAD is unborn
        return summary
    insertions, deletions = _INSERTIONS.search(diff), _DELETIONS.search(diff)
    return summary.model_copy(
        update={
            "insertions": int(insertions.group(1)) if insertions else 0,
            "deletions": int(deletions.group(1)) if deletions else 0,
        }
    )


def run_in_workspace(executor: ToolExecutor) -> GitRunner:
    """A `GitRunner` that runs git as a shell command wherever `executor` runs tools."""

    async def run(argv: tuple[str, ...], directory: Path) -> bytes | None:
        invocation = ToolInvocation(
            tool="Bash",
            cwd=str(directory),
            arguments={
                "command": f"{shlex.join(argv)} 2>/dev/null",
                "timeout": int(GIT_TIMEOUT * 1000),
            },
        )
        out: list[str] = []
        code: object = None
        async with contextlib.aclosing(executor.execute(invocation)) as outputs:
            async for output in outputs:
                chunk = output.chunk
                if chunk is None:
                    continue
                out.extend(b.text for b in chunk.content if isinstance(b, TextBlock))
                if chunk.is_final:
                    code = chunk.metadata.get("exit_code")
        return "".join(out).encode() if code == 0 else None

    return run


async def run_here(argv: tuple[str, ...], directory: Path) -> bytes | None:
    """Stdout of a successful run, or None (failure, missing binary or directory, timeout)."""
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=directory,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
    except OSError as exc:
        log.debug("git could not run in %s: %s", directory, exc)
        return None
    try:
        stdout, _ = await asyncio.wait_for(process.communicate(), GIT_TIMEOUT)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        return None
    return stdout if process.returncode == 0 else None


def parse_porcelain_v2(stdout: bytes) -> GitStatus:
    """Branch, upstream divergence and file counts from `git status --porcelain=v2 --branch -z`.

    Unreadable records are skipped: a status missing one odd entry is still worth showing.
    """
    fields: dict[str, str | None] = {"branch": None, "head": None}
    ahead = behind = None
    counts = {"staged": 0, "unstaged": 0, "untracked": 0, "conflicted": 0}
    chunks = stdout.split(b"\0")
    index = 0
    while index < len(chunks):
        record = chunks[index].decode("utf-8", errors="replace")
        index += 1
        kind, _, rest = record.partition(" ")
        if kind == "#":
            key, _, value = rest.partition(" ")
            if key == "branch.oid":
                fields["head"] = None if value == "(initial)" else value
            elif key == "branch.head":
                fields["branch"] = None if value == "(detached)" else value
            elif key == "branch.ab" and (match := _AHEAD_BEHIND.match(value)):
                ahead, behind = int(match.group(1)), int(match.group(2))
        elif kind == "?":
            counts["untracked"] += 1
        elif kind == "u":  # an unmerged entry's XY is the conflict pair, not staged/unstaged
            counts["conflicted"] += 1
        elif kind in ("1", "2"):
            if kind == "2":  # a rename's original path is the next NUL-separated field
                index += 1
            xy = rest.split(" ", 1)[0]
            if len(xy) == 2:
                counts["staged"] += xy[0] != "."
                counts["unstaged"] += xy[1] != "."
    return GitStatus(
        branch=fields["branch"], head=fields["head"], ahead=ahead, behind=behind, **counts
    )
