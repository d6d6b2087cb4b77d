"""Ports: what the agent needs from its host, as Protocols the runtime implements."""

from __future__ import annotations

from typing import Protocol

from agent_core.message import HintBlock


class HintSource(Protocol):
    """Supplies out-of-band hints (team messages, scheduled fires, tool completions).

    The agent drains it before every reasoning step and injects what it returns as `HintBlock`s.
    """

    async def drain(self) -> list[HintBlock]:
        """Return (and take) the hints that arrived since the last call; [] when none."""
        ...
