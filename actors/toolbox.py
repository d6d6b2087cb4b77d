"""The toolkit of a service session: its own tools plus what its workspace provides."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from agent_core.message import TextBlock, ToolResultState
from agent_core.permission import PermissionBehavior, PermissionContext, PermissionDecision
from agent_core.tool import (
    TaskCreate,
    TaskGet,
    TaskList,
    TaskUpdate,
    ToolBase,
    ToolChunk,
    Toolkit,
)


class CurrentTime(ToolBase):
    """Tells the current date and time; harmless, so it never needs permission."""

    name = "get_current_time"
    description = "Return the current date and time in an IANA time zone (default UTC)."
    input_schema: dict[str, Any] = {  # noqa: RUF012 - read-only class-level schema
        "type": "object",
        "properties": {
            "timezone": {"type": "string", "description": 'IANA zone, e.g. "Europe/Paris".'}
        },
    }
    is_concurrency_safe = True
    is_read_only = True

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        """Always allowed: reading the clock changes nothing."""
        return PermissionDecision(behavior=PermissionBehavior.ALLOW, reason="harmless")

    async def __call__(self, timezone: str = "UTC", **_: Any) -> AsyncIterator[ToolChunk]:
        """Yield the time, or an error naming an unknown zone."""
        try:
            now = datetime.now(ZoneInfo(timezone)).isoformat(timespec="seconds")
        except (ZoneInfoNotFoundError, ValueError):
            yield ToolChunk(
                content=[TextBlock(text=f"Unknown time zone {timezone!r}.")],
                state=ToolResultState.ERROR,
                is_last=True,
            )
            return
        yield ToolChunk(content=[TextBlock(text=now)], state=ToolResultState.SUCCESS, is_last=True)


def session_toolkit(workspace_tools: Sequence[ToolBase] = ()) -> Toolkit:
    """Return a fresh toolkit for one reply: the clock, the task list, the workspace's tools."""
    return Toolkit(
        [CurrentTime(), TaskCreate(), TaskGet(), TaskList(), TaskUpdate(), *workspace_tools]
    )
