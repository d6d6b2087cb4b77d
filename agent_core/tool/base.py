"""The tool interface: what a tool tells the model about itself, and how it streams its output."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from typing import Any

from pydantic import ConfigDict, Field

from agent_core._trusted import trusted
from agent_core.deferred_model import DeferredModel
from agent_core.message import DataOrText, ToolResultState
from agent_core.model.base import ToolSchema
from agent_core.permission.types import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionRule,
)


class ToolChunk(DeferredModel):
    """One piece of a tool's streamed output.

    A tool yields any number of chunks; the last one sets `is_last` and carries the final `state`
    (SUCCESS or ERROR). A stream that ends without such a chunk counts as a success.
    """

    model_config = ConfigDict(extra="forbid")

    content: list[DataOrText] = Field(
        default_factory=list, description="The incremental output of this chunk."
    )
    state: ToolResultState = Field(
        default=ToolResultState.RUNNING,
        description="RUNNING while output streams; the final chunk sets SUCCESS or ERROR.",
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Tool-specific data that is not shown to the model."
    )
    is_last: bool = Field(default=False, description="Whether this chunk ends the stream.")

    @property
    def is_final(self) -> bool:
        """Whether this chunk ends the stream: it says so, or it carries a terminal state."""
        return self.is_last or self.state is not ToolResultState.RUNNING


class ToolBase(ABC):
    """A capability the agent can call.

    Subclasses set the descriptive attributes (as class attributes or in `__init__`) and implement
    `__call__`. The permission hooks (`check_permissions`, `check_read_only`, `match_rule`,
    `generate_suggestions`) have conservative defaults that tools override.

    Attributes:
        name: The tool name presented to the model.
        description: What the tool does, written for the model.
        input_schema: JSON Schema (an object schema) of the tool's keyword arguments.
        is_concurrency_safe: Whether calls may run in parallel with other calls.
        is_read_only: Whether the tool only reads, without side effects.
        is_external_tool: Whether execution is delegated outside the runtime (no `__call__` use).
        is_state_injected: Whether the agent state is passed in as `_agent_state`.
        is_call_id_injected: Whether the model's tool call id is passed in as `_tool_call_id`
            (a delegated tool names its remote call after it).
        is_mcp: Whether the tool comes from an MCP server.
        mcp_name: The MCP server's name when `is_mcp` is true.
        timeout: Seconds a call may run; None means the runtime's default.
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    is_concurrency_safe: bool = False
    is_read_only: bool = False
    is_external_tool: bool = False
    is_state_injected: bool = False
    is_call_id_injected: bool = False
    is_mcp: bool = False
    mcp_name: str | None = None
    timeout: float | None = None

    def schema(self) -> ToolSchema:
        """Return the tool as the model sees it."""
        name, description, parameters = self.name, self.description, self.input_schema
        # Asked for twice per reasoning step: made once while the attributes stay the same
        # objects. The schema is the tool's own (models and formatters read it, never change it).
        kept: ToolSchema | None = getattr(self, "_schema", None)
        if (
            kept is not None
            and kept.name is name
            and kept.description is description
            and kept.parameters is parameters
        ):
            return kept
        if type(name) is str and type(description) is str and type(parameters) is dict:
            # Typed attributes need no validation.
            kept = trusted(ToolSchema, name=name, description=description, parameters=parameters)
        else:
            kept = ToolSchema(name=name, description=description, parameters=parameters)
        self._schema = kept
        return kept

    # `*args` keeps the signature gradual so subclasses can declare their real parameters; the
    # toolkit always calls with keyword arguments only.
    @abstractmethod
    def __call__(self, *args: Any, **kwargs: Any) -> AsyncIterator[ToolChunk]:
        """Run the tool on validated keyword arguments, streaming its output.

        Implement as an async generator. Each yielded chunk holds the next piece of output; the
        last one sets `is_last=True` and a final `state`. Failures the model should see are
        reported as a final chunk with state ERROR rather than raised.

        Args:
            *args: Unused; tools are always called with keyword arguments.
            **kwargs: The arguments, matching `input_schema`.

        Returns:
            An async iterator of chunks.

        Raises:
            Exception: Any exception escaping the stream is turned into an ERROR result by
                the toolkit.
        """

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        """Tool-specific permission analysis of one call, run before execution.

        Return ALLOW or DENY to decide, ASK (with `bypass_immune=True` for safety checks) to
        require confirmation, or PASSTHROUGH to leave the decision to rules and mode.
        """
        return PermissionDecision(behavior=PermissionBehavior.PASSTHROUGH)

    async def check_read_only(self, tool_input: dict[str, Any]) -> bool:
        """Whether this call only reads (defaults to `is_read_only`)."""
        return self.is_read_only

    def match_rule(self, rule_content: str | None, tool_input: dict[str, Any]) -> bool:
        """Whether a rule with `rule_content` applies to this call (default: exact JSON match)."""
        if rule_content is None:
            return True
        return rule_content == json.dumps(tool_input, sort_keys=True, ensure_ascii=False)

    def generate_suggestions(self, tool_input: dict[str, Any]) -> list[PermissionRule]:
        """Rules the user could accept to allow calls like this one (default: this exact call)."""
        return [
            PermissionRule(
                tool_name=self.name,
                rule_content=json.dumps(tool_input, sort_keys=True, ensure_ascii=False),
                behavior=PermissionBehavior.ALLOW,
                source="suggested",
            )
        ]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
