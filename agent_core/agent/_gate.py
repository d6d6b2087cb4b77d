"""The permission gate between a reasoning step's tool calls and their execution."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from agent_core.message import ToolCallBlock
from agent_core.permission import PermissionBehavior, PermissionDecision, PermissionEngine
from agent_core.tool import Toolkit


@dataclass
class GateResult:
    """The calls of one step, sorted by what happens to them next."""

    allowed: list[ToolCallBlock] = field(default_factory=list)
    denied: list[tuple[ToolCallBlock, PermissionDecision]] = field(default_factory=list)
    asking: list[ToolCallBlock] = field(default_factory=list)
    external: list[ToolCallBlock] = field(default_factory=list)

    @property
    def parks(self) -> bool:
        """Whether the reply must wait for the user or an external executor."""
        return bool(self.asking or self.external)


def _arguments(call: ToolCallBlock) -> dict[str, object] | None:
    try:
        value = json.loads(call.input or "{}")
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


async def gate_calls(
    toolkit: Toolkit, engine: PermissionEngine, calls: list[ToolCallBlock]
) -> GateResult:
    """Decide every call: run it, deny it, ask the user, or hand it to an external executor.

    Unknown tools and unparsable inputs are let through: the toolkit answers them with an
    error result the model can read.
    """
    result = GateResult()
    for call in calls:
        tool = toolkit.get(call.name)
        arguments = _arguments(call)
        if tool is None or arguments is None:
            result.allowed.append(call)
            continue
        if tool.is_external_tool:
            result.external.append(call)
            continue
        decision = await engine.decide(tool, arguments)
        if decision.behavior is PermissionBehavior.ALLOW:
            result.allowed.append(call)
        elif decision.behavior is PermissionBehavior.DENY:
            result.denied.append((call, decision))
        else:
            asked = call.model_copy(update={"suggested_rules": decision.suggestions})
            result.asking.append(asked)
    return result
