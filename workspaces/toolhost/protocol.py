"""The tool host's wire protocol: one JSON object per line over the process's stdin/stdout.

The workspace side writes `CallRequest`s and `CancelRequest`s; the tool host answers each call
with `OutputReply` frames and exactly one `EndReply`. Calls are multiplexed by `call_id`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, TypeAdapter

from agent_core.deferred_model import DEFERRED, DeferredModel
from agent_core.tool.execution import ToolInvocation, ToolOutput


class _Frame(DeferredModel):
    model_config = ConfigDict(extra="forbid")


class CallRequest(_Frame):
    """Run a tool call."""

    type: Literal["call"] = "call"
    invocation: ToolInvocation


class CancelRequest(_Frame):
    """Stop a running call and kill the processes it started."""

    type: Literal["cancel"] = "cancel"
    call_id: str


class OutputReply(_Frame):
    """The next frame of a call's output."""

    type: Literal["output"] = "output"
    call_id: str
    output: ToolOutput


class EndReply(_Frame):
    """A call is over (finished, failed or cancelled); no more frames follow for it."""

    type: Literal["end"] = "end"
    call_id: str
    error: str | None = Field(default=None, description="Why the call broke, if it did.")


Request = Annotated[CallRequest | CancelRequest, Field(discriminator="type")]
Reply = Annotated[OutputReply | EndReply, Field(discriminator="type")]

REQUESTS: TypeAdapter[CallRequest | CancelRequest] = TypeAdapter(Request, config=DEFERRED)
REPLIES: TypeAdapter[OutputReply | EndReply] = TypeAdapter(Reply, config=DEFERRED)

MAX_LINE = 64 * 1024 * 1024
"""The longest frame either side reads (a large file read travels as one frame)."""
