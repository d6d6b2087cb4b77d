"""The workspace execution port: where a workspace-bound built-in tool's call actually runs.

A built-in file or shell tool (`Bash`, `Read`, `Write`, `Edit`, `Glob`, `Grep`) normally runs
in the calling process. Bound to a `ToolExecutor` it only validates its arguments and answers
the permission hooks locally; the call itself travels as a `ToolInvocation` to wherever the
workspace lives (a sandboxed process, a container, another node) and its output streams back
as `ToolOutput` frames. The agent, the toolkit and the permission engine cannot tell the
difference.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any, Protocol

from pydantic import ConfigDict, Field

from agent_core._ids import new_id
from agent_core.deferred_model import DeferredModel
from agent_core.message import TextBlock, ToolResultState
from agent_core.state import ToolContext
from agent_core.tool.base import ToolChunk


class ToolInvocation(DeferredModel):
    """One call of a workspace-bound built-in tool, as sent to where the workspace runs."""

    model_config = ConfigDict(extra="forbid")

    call_id: str = Field(default_factory=new_id, description="Identifies the call (for cancel).")
    tool_call_id: str | None = Field(
        default=None, description="The model's id of the tool call this runs, if known."
    )
    tool: str = Field(description="The built-in tool's name, e.g. `Bash`.")
    cwd: str = Field(description="The working directory the tool is bound to.")
    arguments: dict[str, Any] = Field(description="The validated arguments.")
    tool_context: ToolContext | None = Field(
        default=None,
        description="The caller's tool state (read cache) for tools that use the agent state.",
    )


class ToolOutput(DeferredModel):
    """One frame of a delegated call: an output chunk, the caller's tool state after it, or both."""

    model_config = ConfigDict(extra="forbid")

    chunk: ToolChunk | None = Field(default=None, description="The next piece of output.")
    tool_context: ToolContext | None = Field(
        default=None, description="The tool state after the call, to replace the caller's."
    )


class ToolExecutor(Protocol):
    """Runs built-in tool calls where a workspace lives.

    Closing the returned iterator early (an interrupted reply) must stop the call and kill
    whatever processes it started.
    """

    def execute(self, invocation: ToolInvocation) -> AsyncGenerator[ToolOutput, None]:
        """Run one call, streaming its output.

        The stream holds the tool's chunks (the last one final). For a call that carried a
        `tool_context`, the updated tool state rides on the final chunk's frame, since callers
        stop reading at the final chunk. A call that cannot run (the workspace is gone, its
        process died) ends with a final ERROR chunk saying why.
        """
        ...


def final_error(message: str) -> ToolOutput:
    """A frame ending a call that could not run (the workspace is gone, its process died)."""
    chunk = ToolChunk(content=[TextBlock(text=message)], state=ToolResultState.ERROR, is_last=True)
    return ToolOutput(chunk=chunk)
