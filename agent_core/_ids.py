"""Identifiers and timestamps shared by messages, events and state."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime


def new_id() -> str:
    """Return a fresh 32-character hex identifier."""
    return uuid.uuid4().hex


def now_iso() -> str:
    """Return the current UTC time as an ISO 8601 string."""
    return datetime.now(UTC).isoformat()
