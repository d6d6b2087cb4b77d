"""Ids are fresh 32-hex strings, in forked children too; timestamps read as `isoformat` writes."""

from __future__ import annotations

import os
import re
import sys
from datetime import UTC, datetime

import pytest

from agent_core._ids import new_id, now_iso


def test_a_timestamp_is_what_isoformat_writes_for_the_current_utc_time() -> None:
    before = datetime.now(UTC)
    stamp = now_iso()
    after = datetime.now(UTC)
    parsed = datetime.fromisoformat(stamp)
    assert parsed.isoformat() == stamp
    assert before.replace(microsecond=0) <= parsed <= after


def test_ids_are_32_hex_digits_and_do_not_repeat() -> None:
    ids = {new_id() for _ in range(10_000)}
    assert len(ids) == 10_000
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)


@pytest.mark.skipif(sys.platform == "win32", reason="fork")
def test_a_forked_child_draws_other_ids_than_its_parent() -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its next id and leave at once
        os.write(write, new_id().encode())
        os._exit(0)
    os.close(write)
    child_id = os.read(read, 64).decode()
    os.waitpid(pid, 0)
    os.close(read)
    assert child_id != new_id()
