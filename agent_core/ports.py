"""Ports: what the agent needs from its host, as Protocols the runtime implements."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from agent_core.message import HintBlock, Msg, ToolCallBlock, ToolResultBlock

if TYPE_CHECKING:
    from agent_core.tool.base import ToolChunk


class HintSource(Protocol):
    """Supplies out-of-band hints (team messages, scheduled fires, tool completions).

    The agent drains it before every reasoning step and injects what it returns as `HintBlock`s.
    """

    async def drain(self) -> list[HintBlock]:
        """Return (and take) the hints that arrived since the last call; [] when none."""
        ...


@runtime_checkable
class Offloader(Protocol):
    """Persists content the agent drops from its context, so it can read it back on demand.

    Compression hands over the messages it summarized, truncation the whole oversized tool
    result; the returned reference (typically a file path the agent's file tools can open) is
    written into the context in place of the dropped content. Workspaces implement it.
    """

    async def offload_context(self, session_id: str, msgs: list[Msg], **kwargs: Any) -> str:
        """Persist compressed messages of `session_id`, after those offloaded before.

        Returns:
            A reference to the persisted content (e.g. a file path).

        Raises:
            Exception: the backend's own error (e.g. `WorkspaceError`) when it cannot persist;
                the agent lets it propagate.
        """
        ...

    async def offload_tool_result(
        self, session_id: str, tool_result: ToolResultBlock, **kwargs: Any
    ) -> str:
        """Persist the full output of a tool result that was truncated in the context.

        Returns:
            A reference to the persisted content (e.g. a file path).

        Raises:
            Exception: the backend's own error (e.g. `WorkspaceError`) when it cannot persist;
                the agent lets it propagate.
        """
        ...


class BackgroundSink(Protocol):
    """Takes over tool calls that outlive their foreground timeout.

    The agent gives the model a placeholder result and hands the still-running call over; the
    sink finishes it and reports the outcome back to the agent (e.g. as a hint in its inbox).
    """

    def adopt(
        self,
        call: ToolCallBlock,
        next_chunk: asyncio.Future[ToolChunk],
        rest: AsyncIterator[ToolChunk],
    ) -> None:
        """Own the call from now on: await `next_chunk`, then read `rest` to its end.

        Must not block; the agent continues its reply right after this returns.
        """
        ...
