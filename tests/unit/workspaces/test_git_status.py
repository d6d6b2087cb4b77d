"""The git state of a workspace directory (`git status --porcelain=v2` and `diff --shortstat`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from workspaces import GitStatus, read_git_status
from workspaces.git import parse_porcelain_v2


def git(directory: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=directory,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def test_records_of_every_kind_are_counted() -> None:
    stdout = b"\0".join(
        [
            b"# branch.oid 0123456789abcdef0123456789abcdef01234567",
            b"# branch.head feature",
            b"# branch.upstream origin/feature",
            b"# branch.ab +2 -1",
            b"1 M. N... 100644 100644 100644 aaa bbb staged.txt",
            b"1 .M N... 100644 100644 100644 aaa bbb unstaged.txt",
            b"1 MM N... 100644 100644 100644 aaa bbb both.txt",
            b"2 R. N... 100644 100644 100644 aaa bbb R100 new name.txt",
            b"old name.txt",
            b"u UU N... 100644 100644 100644 100644 aaa bbb ccc conflict.txt",
            b"? untracked.txt",
            b"! ignored.txt",
            b"",
        ]
    )
    assert parse_porcelain_v2(stdout) == GitStatus(
        branch="feature",
        head="0123456789abcdef0123456789abcdef01234567",
        ahead=2,
        behind=1,
        staged=3,
        unstaged=2,
        untracked=1,
        conflicted=1,
    )


def test_detached_and_unborn_heads() -> None:
    detached = parse_porcelain_v2(b"# branch.oid abc\0# branch.head (detached)\0")
    assert (detached.branch, detached.head) == (None, "abc")
    unborn = parse_porcelain_v2(b"# branch.oid (initial)\0# branch.head main\0")
    assert (unborn.branch, unborn.head, unborn.ahead) == ("main", None, None)


async def test_a_directory_outside_any_repository_has_no_git_state(tmp_path: Path) -> None:
    assert await read_git_status(tmp_path) is None
    assert await read_git_status(tmp_path / "missing") is None


async def test_a_repository_before_and_after_its_first_commit(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "trunk")
    (tmp_path / "a.txt").write_text("1\n2\n")
    unborn = await read_git_status(tmp_path)
    assert unborn == GitStatus(branch="trunk", untracked=1)

    git(tmp_path, "add", "a.txt")
    git(tmp_path, "commit", "-q", "-m", "one")
    (tmp_path / "a.txt").write_text("1\nchanged\n3\n")
    git(tmp_path, "add", "a.txt")
    status = await read_git_status(tmp_path)
    assert status == GitStatus(
        branch="trunk",
        head=git(tmp_path, "rev-parse", "HEAD"),
        insertions=2,
        deletions=1,
        staged=1,
    )
