"""An exclusive, process-lifetime lock on a directory: one owner of its data at a time."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

LOCK_NAME = ".lock"


class DirLocked(RuntimeError):
    """Another process holds the directory's lock.

    Attributes:
        path: The locked directory.
        holder: Process id written by the holder, or None when it cannot be read.
    """

    def __init__(self, path: Path, holder: int | None) -> None:
        who = f"process {holder}" if holder is not None else "another process"
        super().__init__(f"{path} is in use by {who}")
        self.path = path
        self.holder = holder


class DirLock:
    """`flock` on `<directory>/.lock`, which holds the owner's pid.

    The kernel drops the lock when the owner exits, however it exits, so a crash leaves no stale
    lock behind; the pid in the file only names the owner in the error.

    Args:
        directory: The directory to own; created when missing.
    """

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock now, without waiting; a no-op when this instance holds it.

        Raises:
            DirLocked: Another process (or another `DirLock` of this one) holds it.
        """
        if self._fd is not None:
            return
        self._directory.mkdir(parents=True, exist_ok=True)
        path = self._directory / LOCK_NAME
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(fd)
            os.close(fd)
            raise DirLocked(self._directory, holder) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Drop the lock; a no-op when not held."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def _read_pid(fd: int) -> int | None:
    try:
        return int(os.pread(fd, 32, 0).decode().strip())
    except (OSError, ValueError):
        return None
