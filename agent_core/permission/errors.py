"""Errors raised by agent_core.permission.

A denied or unanswered permission is a `PermissionDecision`, never an exception; these are for
misuse of the permission API::

    PermissionSystemError            root (an AgentCoreError)
    ├── InvalidRuleError             a rule cannot be stored (e.g. behavior PASSTHROUGH)
    └── ShellSyntaxError             a shell command could not be parsed

`analyze_command` catches `ShellSyntaxError` and reports it in `BashAnalysis.error`, so callers of
the public helpers never see it. Every exception pickles.
"""

from __future__ import annotations

from agent_core.errors import AgentCoreError


class PermissionSystemError(AgentCoreError):
    """Root of every agent_core.permission error."""


class InvalidRuleError(PermissionSystemError):
    """A permission rule cannot be stored."""


class ShellSyntaxError(PermissionSystemError):
    """A shell command could not be parsed (or uses syntax the parser does not support)."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(message, position)
        self.message = message
        self.position = position

    def __str__(self) -> str:
        return f"{self.message} (at offset {self.position})"
