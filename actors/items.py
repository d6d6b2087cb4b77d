"""Inbox items: what can be delivered to a session's mailbox."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_core._ids import new_id
from agent_core.event import ExternalExecutionResultEvent, UserConfirmResultEvent
from agent_core.message import Msg

ChatInput = list[Msg] | UserConfirmResultEvent | ExternalExecutionResultEvent | None


class ChatItem(BaseModel):
    """A `POST /chat/` input: user messages, a confirmation/external result, or None (continue)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["chat"] = "chat"
    item_id: str = Field(default_factory=new_id, description="Idempotency key of the delivery.")
    input: ChatInput = None


InboxItem = Annotated[ChatItem, Field(discriminator="type")]
