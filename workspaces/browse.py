"""Browsing a workspace's files from the host, confined to the workspace root.

The process serving workspaces is not sandboxed, while the workspace directory is written by
agents: it may hold symbolic links pointing anywhere (`/etc`, another tenant's workspace).
Paths are therefore walked one component at a time from a descriptor of the root, each
component opened with `O_NOFOLLOW` relative to its parent's descriptor. A link anywhere on the
way is refused, never followed, and since every check is the open itself, nothing an agent
renames meanwhile can redirect the walk. `..` is resolved lexically beforehand (sound because
no link is followed) and may not climb out of the root.

Everything here blocks; callers run it in a worker thread.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from pydantic import ConfigDict, Field

from agent_core.deferred_model import DeferredModel
from workspaces.errors import PathForbidden, PathNotFound, TooLarge, WrongFileType

MAX_FILE_BYTES = 1 << 30
"""The largest file served (1 GiB)."""

MAX_ENTRIES = 10_000
"""The most entries a directory listing returns."""

CHUNK_BYTES = 256 * 1024
"""How much of a file is read (and sent on) at a time."""

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO an agent left there must not hang the host.
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY


class DirectoryEntry(DeferredModel):
    """One entry in a workspace directory listing."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The entry name, without any leading directory.")
    is_dir: bool = Field(description="Whether the entry is itself a directory.")
    size_bytes: int | None = Field(
        default=None,
        description="File size in bytes. Null for a directory, a symbolic link, or an entry "
        "that could not be examined.",
    )
    updated_at: float | None = Field(
        default=None, description="Last modification time as a Unix timestamp."
    )


class DirectoryListing(DeferredModel):
    """One directory level, plus the path it actually resolved to."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        description="Absolute path of the directory that was listed (the workspace root is "
        "backend-dependent, so a caller passing a relative path learns where it is)."
    )
    entries: list[DirectoryEntry] = Field(
        description="The directory's immediate children, by name. Symbolic links are listed "
        "but never followed."
    )


class FileInfo(DeferredModel):
    """A regular file of a workspace, as found when it was opened."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="Its absolute path.")
    name: str = Field(description="Its name, without any leading directory.")
    size_bytes: int = Field(ge=0, description="Its size in bytes.")
    updated_at: float = Field(description="Last modification time as a Unix timestamp.")


def workspace_parts(root: Path, path: str) -> list[str]:
    """The components leading from `root` to `path`, `..` resolved.

    Args:
        root: The workspace root (absolute).
        path: Absolute, or relative to `root`; empty means `root`.

    Raises:
        PathForbidden: `path` is outside `root`.
        PathNotFound: `path` holds a NUL byte (no file has such a name).
    """
    if "\0" in path:
        raise PathNotFound(path)
    base = PurePosixPath(root)
    target = PurePosixPath(posixpath.normpath(base / path))
    if target != base and not target.is_relative_to(base):
        raise PathForbidden(f"{path!r} is outside the workspace ({root})")
    return list(target.relative_to(base).parts)


def list_directory(root: Path, path: str, max_entries: int = MAX_ENTRIES) -> DirectoryListing:
    """List one directory of the workspace at `root`.

    Raises:
        PathForbidden: `path` is outside the workspace or goes through a symbolic link.
        PathNotFound: Nothing is there.
        WrongFileType: It is not a directory.
        TooLarge: It holds more than `max_entries` entries.
    """
    parts = workspace_parts(root, path)
    fd = _walk(root, parts, path)
    try:
        entries: list[DirectoryEntry] = []
        with os.scandir(fd) as found:
            for entry in found:
                if len(entries) == max_entries:
                    raise TooLarge(f"{path!r} holds more than {max_entries} entries")
                entries.append(_entry(entry))
    finally:
        os.close(fd)
    entries.sort(key=lambda e: e.name)
    return DirectoryListing(path=str(PurePosixPath(root, *parts)), entries=entries)


def open_file(root: Path, path: str, max_bytes: int = MAX_FILE_BYTES) -> tuple[BinaryIO, FileInfo]:
    """Open a regular file of the workspace at `root` for reading (the caller closes it).

    Raises:
        PathForbidden: `path` is outside the workspace or goes through a symbolic link.
        PathNotFound: Nothing is there.
        WrongFileType: It is a directory, or not a regular file.
        TooLarge: It is larger than `max_bytes`.
    """
    parts = workspace_parts(root, path)
    if not parts:
        raise WrongFileType(f"{path!r} is the workspace root, a directory, not a file")
    parent = _walk(root, parts[:-1], path)
    try:
        fd = _open_at(parent, parts, len(parts) - 1, _FILE, path)
    finally:
        os.close(parent)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise WrongFileType(f"{path!r} is a directory, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise WrongFileType(f"{path!r} is not a regular file")
        if info.st_size > max_bytes:
            raise TooLarge(f"{path!r} is {info.st_size} bytes, over the {max_bytes}-byte limit")
        handle = os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise
    found = FileInfo(
        path=str(PurePosixPath(root, *parts)),
        name=_printable(parts[-1]),
        size_bytes=info.st_size,
        updated_at=info.st_mtime,
    )
    return handle, found


def _walk(root: Path, parts: list[str], shown: str) -> int:
    """A descriptor of the directory `parts` leads to from `root` (the caller closes it)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for index in range(len(parts)):
            child = _open_at(fd, parts, index, _DIRECTORY, shown)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_at(parent: int, parts: list[str], index: int, flags: int, shown: str) -> int:
    """Open `parts[index]` inside `parent` with `flags`; refusals become workspace errors."""
    name = parts[index]
    try:
        return os.open(name, flags, dir_fd=parent)
    except OSError as exc:
        so_far = "/".join(parts[: index + 1])
        if exc.errno == errno.ENOENT:
            raise PathNotFound(shown) from None
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise PathForbidden(f"{shown!r} cannot be read: permission denied") from None
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        # O_NOFOLLOW has refused a link (ELOOP, or ENOTDIR alongside O_DIRECTORY), or a
        # file stands where a directory is meant: say which.
        try:
            found = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            raise PathNotFound(shown) from None
        if stat.S_ISLNK(found.st_mode):
            raise PathForbidden(
                f"{shown!r} goes through {so_far!r}, a symbolic link; links in a workspace "
                "are not followed"
            ) from None
        if index < len(parts) - 1:
            raise PathNotFound(shown) from None
        raise WrongFileType(f"{shown!r} is a file, not a directory") from None


def _entry(entry: os.DirEntry[str]) -> DirectoryEntry:
    name = _printable(entry.name)
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:  # removed since the directory was read
        return DirectoryEntry(name=name, is_dir=False)
    is_file = stat.S_ISREG(info.st_mode)
    return DirectoryEntry(
        name=name,
        is_dir=stat.S_ISDIR(info.st_mode),
        size_bytes=info.st_size if is_file else None,
        updated_at=info.st_mtime,
    )


def _printable(name: str) -> str:
    """`name` as valid UTF-8 (file names are bytes; undecodable ones are shown replaced)."""
    return os.fsencode(name).decode("utf-8", "replace")
