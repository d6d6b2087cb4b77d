"""One owner per data directory: a second lock fails at once and names the holder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from actors.local._dir_lock import DirLock, DirLocked


def test_second_lock_fails_naming_the_holder_until_released(tmp_path: Path) -> None:
    first, second = DirLock(tmp_path / "data"), DirLock(tmp_path / "data")
    first.acquire()
    with pytest.raises(DirLocked) as caught:
        second.acquire()
    assert caught.value.holder == os.getpid()
    assert str(caught.value) == f"{tmp_path / 'data'} is in use by process {os.getpid()}"
    first.release()
    second.acquire()
    second.release()


def test_acquire_is_idempotent_for_its_holder(tmp_path: Path) -> None:
    lock = DirLock(tmp_path)
    lock.acquire()
    lock.acquire()
    lock.release()
    lock.release()
