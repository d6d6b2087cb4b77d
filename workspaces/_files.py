"""Filesystem primitives of the local layout: locking, atomic writes, path components, digests.

Everything here blocks; callers run it in a worker thread.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from workspaces.errors import CorruptWorkspace

# Version-control metadata is never copied into, nor hashed as part of, a skill.
VCS_DIRS = frozenset({".git", ".svn", ".hg", ".bzr", ".jj", ".sl"})

# Room for a digest suffix within NAME_MAX (255 bytes).
_MAX_COMPONENT = 200

Signature = tuple[int, int, int]
"""What identifies one version of a file: (inode, size, mtime in ns)."""


@contextlib.contextmanager
def exclusive(directory: Path) -> Iterator[None]:
    """Hold an exclusive lock on `directory` (flock), across threads and processes.

    The lock lives on the directory itself, so the layout gains no lock file.
    """
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so that readers see the old or the new file, never a part."""
    staging = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with staging.open("wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(staging, path)
    finally:
        staging.unlink(missing_ok=True)


def signature(path: Path) -> Signature | None:
    """The file's current signature, or None when it does not exist."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def read_json_array(path: Path) -> list[Any]:
    """The JSON array stored at `path` ([] when the file does not exist).

    Raises:
        CorruptWorkspace: The file is not a JSON array.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise CorruptWorkspace(f"{path} is not valid JSON: {exc}") from exc
    if not isinstance(data, list):
        raise CorruptWorkspace(f"{path} must hold a JSON array, not {type(data).__name__}")
    return data


def write_json(path: Path, data: Any) -> None:
    """Store `data` at `path` as indented JSON, atomically."""
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False).encode() + b"\n")


def component(value: str) -> str:
    """`value` as one safe, readable path component (reversible unless very long).

    Anything but letters, digits and `_.-~` is percent-encoded (so `/` cannot climb out), a
    leading dot too (so `.`, `..` and hidden names cannot appear); an overlong value keeps a
    prefix and gains a digest of the whole.

    Raises:
        ValueError: `value` is empty.
    """
    if not value:
        raise ValueError("an empty string cannot name a directory")
    encoded = quote(value, safe="")
    if encoded.startswith("."):
        encoded = "%2E" + encoded[1:]
    if len(encoded) > _MAX_COMPONENT:
        digest = hashlib.sha256(value.encode()).hexdigest()[:16]
        encoded = f"{encoded[: _MAX_COMPONENT - 17]}-{digest}"
    return encoded


def tree_sha256(directory: Path) -> str:
    """A digest of a directory's files (relative paths, contents, symlink targets)."""
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d not in VCS_DIRS)
        base = Path(root)
        for name in sorted(files + [d for d in dirs if (base / d).is_symlink()]):
            path = base / name
            relative = path.relative_to(directory).as_posix()
            digest.update(relative.encode() + b"\0")
            if path.is_symlink():
                digest.update(b"L" + os.readlink(path).encode() + b"\0")
            else:
                digest.update(b"F" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()
