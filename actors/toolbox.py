"""Tools every service session gets until its workspace provides more."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from agent_core.tool import FunctionTool, Toolkit


def get_current_time(timezone: str = "UTC") -> str:
    """Return the current date and time.

    Args:
        timezone: IANA time zone name, e.g. "Europe/Paris".
    """
    try:
        zone = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone {timezone!r}") from exc
    return datetime.now(zone).isoformat(timespec="seconds")


def session_toolkit() -> Toolkit:
    """Return a fresh toolkit for one session."""
    return Toolkit([FunctionTool(get_current_time, is_concurrency_safe=True, is_read_only=True)])
