"""Permission types of agent_core (the engine lives beside them)."""

from agent_core.permission.types import PermissionBehavior, PermissionRule

__all__ = ["PermissionBehavior", "PermissionRule"]
