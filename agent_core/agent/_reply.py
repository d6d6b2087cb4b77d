"""The reply under construction: every event the loop emits is folded into its `Msg` first."""

from __future__ import annotations

from agent_core._block_index import BlockIndex
from agent_core._fold import apply_event
from agent_core._ids import new_id
from agent_core.event import (
    AgentEvent,
    TextBlockDeltaEvent,
    TextBlockEndEvent,
    TextBlockStartEvent,
    ToolResultEndEvent,
    ToolResultStartEvent,
    ToolResultTextDeltaEvent,
    UserInterruptEvent,
)
from agent_core.message import Msg, ToolResultBlock, ToolResultState


class ReplyBuilder:
    """Owns the assistant `Msg` of one reply and keeps it equal to the fold of its events.

    The one exception, as in AgentScope: a confirmed call takes the input the user edited, which
    the fold of `USER_CONFIRM_RESULT` does not apply.

    Hosts use it too: a runtime that must close a reply its agent could not finish (a crash)
    folds the reply's logged events into a Msg and emits the closing events through a builder.
    """

    def __init__(self, msg: Msg, session_id: str) -> None:
        self.msg = msg
        self.session_id = session_id
        self._blocks = BlockIndex()  # a long reply's deltas find their block without a scan

    @property
    def reply_id(self) -> str:
        """Id of the reply (the assistant Msg's id)."""
        return self.msg.id

    def emit(self, event: AgentEvent) -> AgentEvent:
        """Fold `event` into the reply's Msg and return it for yielding."""
        apply_event(self.msg, event, self._blocks)
        return event

    def close_open_calls(
        self, reason: str, state: ToolResultState = ToolResultState.ERROR
    ) -> list[AgentEvent]:
        """End every tool call without a finished result, so the context stays well-formed."""
        results = {b.id: b for b in self.msg.content if isinstance(b, ToolResultBlock)}
        events: list[AgentEvent] = []
        rid = self.reply_id
        for call in self.msg.get_content_blocks("tool_call"):
            result = results.get(call.id)
            if result is not None and result.state is not ToolResultState.RUNNING:
                continue
            if result is None:
                start = ToolResultStartEvent(
                    reply_id=rid, tool_call_id=call.id, tool_call_name=call.name
                )
                events.append(self.emit(start))
            events += [
                self.emit(
                    ToolResultTextDeltaEvent(reply_id=rid, tool_call_id=call.id, delta=reason)
                ),
                self.emit(ToolResultEndEvent(reply_id=rid, tool_call_id=call.id, state=state)),
            ]
        return events

    def interrupt(self, message: str) -> list[AgentEvent]:
        """Close the interrupted reply: open calls end `interrupted`, then `message` as text."""
        rid, block_id = self.reply_id, new_id()
        return [
            self.emit(UserInterruptEvent(reply_id=rid)),
            *self.close_open_calls("Interrupted by the user.", ToolResultState.INTERRUPTED),
            self.emit(TextBlockStartEvent(reply_id=rid, block_id=block_id)),
            self.emit(TextBlockDeltaEvent(reply_id=rid, block_id=block_id, delta=message)),
            self.emit(TextBlockEndEvent(reply_id=rid, block_id=block_id)),
        ]
