"""The permission system of agent_core: modes, rules, decisions and the engine."""

from agent_core.permission.types import (
    AdditionalWorkingDirectory,
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
)

__all__ = [
    "AdditionalWorkingDirectory",
    "PermissionBehavior",
    "PermissionContext",
    "PermissionDecision",
    "PermissionMode",
    "PermissionRule",
]
