"""The reply under construction: every event the loop emits is folded into its `Msg` first."""

from __future__ import annotations

from agent_core.event import AgentEvent
from agent_core.message import Msg


class ReplyBuilder:
    """Owns the assistant `Msg` of one reply and keeps it equal to the fold of its events."""

    def __init__(self, msg: Msg, session_id: str) -> None:
        self.msg = msg
        self.session_id = session_id

    @property
    def reply_id(self) -> str:
        """Id of the reply (the assistant Msg's id)."""
        return self.msg.id

    def emit(self, event: AgentEvent) -> AgentEvent:
        """Fold `event` into the reply's Msg and return it for yielding."""
        self.msg.append_event(event)
        return event
