"""`AgentState`: everything needed to resume an agent where it left off (JSON round-trip)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent_core.message import DataOrText, Msg


class ReplyContext(BaseModel):
    """Position of the reply in progress (empty `reply_id` when none is)."""

    model_config = ConfigDict(extra="forbid")

    reply_id: str = Field(default="", description="Id of the reply in progress.")
    cur_iter: int = Field(default=0, description="Reasoning-acting iterations done so far.")


class AgentState(BaseModel):
    """The persistent state of one agent in one session."""

    model_config = ConfigDict(extra="forbid")

    session_id: str = Field(default="", description="Session the state belongs to.")
    summary: str | list[DataOrText] = Field(
        default="", description="Summary of compressed context."
    )
    context: list[Msg] = Field(default_factory=list, description="The conversation so far.")
    reply_context: ReplyContext = Field(default_factory=ReplyContext)
    middle_context: dict[str, Any] = Field(
        default_factory=dict, description="State kept by middlewares, by middleware name."
    )

    def current_reply(self) -> Msg | None:
        """Return the assistant Msg of the reply in progress, if any."""
        if not self.reply_context.reply_id:
            return None
        for msg in reversed(self.context):
            if msg.id == self.reply_context.reply_id:
                return msg
        return None
