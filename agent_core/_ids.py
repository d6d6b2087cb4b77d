"""Identifiers and timestamps shared by messages, events and state.

Both are made on every event of a reply, so they avoid `uuid` and `datetime.isoformat`: an id is
16 random bytes in hex (what `uuid4().hex` carries, less the version bits), and a timestamp
reuses its formatted second while the second lasts. The bytes come from a private generator
seeded from the OS (again in every forked child), not from a system call per id: ids must not
collide, they are not secrets.
"""

from __future__ import annotations

import os
import random
import time
from datetime import UTC, datetime

_random = random.Random()
os.register_at_fork(after_in_child=_random.seed)
_getrandbits = _random.getrandbits
_time_ns = time.time_ns

_second = -1
_second_text = ""


def new_id() -> str:
    """Return a fresh 32-character hex identifier."""
    return _getrandbits(128).to_bytes(16, "little").hex()  # what `randbytes(16)` makes


def now_iso() -> str:
    """Return the current UTC time as an ISO 8601 string, as `datetime.isoformat` writes it."""
    global _second, _second_text
    nanos = _time_ns()
    second = nanos // 1_000_000_000
    if second != _second:
        _second_text = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        _second = second
    micros = str(nanos)[-9:-3]  # the microsecond digits, zero-padded as they stand
    if micros == "000000":
        return f"{_second_text}+00:00"
    return f"{_second_text}.{micros}+00:00"
