"""Inbox items: what can be delivered to a session's mailbox.

* `ChatItem` — a `POST /chat/` input; consecutive message items form one reply's input.
* `HintItem` — a team message, scheduled fire or background-tool completion. Injected as a
  `HintBlock` before the next reasoning step of a running reply; an idle session wakes and
  replies to it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError

from agent_core._ids import new_id
from agent_core.deferred_model import DEFERRED, DeferredModel
from agent_core.event import (
    ExternalExecutionResultEvent,
    UserConfirmResultEvent,
    UserInterruptEvent,
)
from agent_core.message import DataOrText, HintBlock, Msg

TraceContext = dict[str, str]
_TRACE_CONTEXT = (
    "W3C trace context of the sender (`traceparent`, `tracestate`): the reply handling the item "
    "continues the sender's trace (`actors.ops.tracing`)."
)

ChatInput = (
    list[Msg] | UserConfirmResultEvent | ExternalExecutionResultEvent | UserInterruptEvent | None
)


class ChatItem(DeferredModel):
    """A `POST /chat/` input: user messages, a confirmation/external result, or None (continue)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["chat"] = "chat"
    item_id: str = Field(default_factory=new_id, description="Idempotency key of the delivery.")
    input: ChatInput = None
    trace_context: TraceContext = Field(default_factory=dict, description=_TRACE_CONTEXT)


class HintItem(DeferredModel):
    """An out-of-band hint for the session's agent."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["hint"] = "hint"
    item_id: str = Field(default_factory=new_id, description="Idempotency key of the delivery.")
    hint: str | list[DataOrText] = Field(description="The hint text or blocks.")
    source: str | None = Field(default=None, description="JSON tag labelling the origin.")
    trace_context: TraceContext = Field(default_factory=dict, description=_TRACE_CONTEXT)

    def block(self) -> HintBlock:
        """The hint as a content block (its id is the item id, so redelivery is recognisable)."""
        return HintBlock(id=self.item_id, hint=self.hint, source=self.source)


InboxItem = Annotated[ChatItem | HintItem, Field(discriminator="type")]

_ITEM: TypeAdapter[InboxItem] = TypeAdapter(InboxItem, config=DEFERRED)


class UnreadableItem(DeferredModel):
    """An inbox entry that does not parse as an item: why, and its stored form."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["unreadable"] = "unreadable"
    reason: str = Field(description="Why it cannot be read.")
    raw: str = Field(description="The stored JSON, as it was.")


def read_item(raw: bytes | str) -> InboxItem | UnreadableItem:
    """Parse a stored inbox item; an entry no version of the runtime could read is reported."""
    try:
        return _ITEM.validate_json(raw)
    except ValidationError as exc:
        reason = "; ".join(error["msg"] for error in exc.errors(include_url=False)[:3])
    except (ValueError, RecursionError) as exc:
        reason = f"{type(exc).__name__}: {exc}"
    text = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
    return UnreadableItem(reason=reason[:300], raw=text)
