"""Value types of the permission system: modes, rules, decisions and the context holding them."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class PermissionBehavior(StrEnum):
    """What a rule or decision does with a tool call."""

    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"
    PASSTHROUGH = "passthrough"


class PermissionMode(StrEnum):
    """The global policy for calls that no rule decides."""

    DEFAULT = "default"
    ACCEPT_EDITS = "accept_edits"
    EXPLORE = "explore"
    BYPASS = "bypass"
    DONT_ASK = "dont_ask"


class PermissionRule(BaseModel):
    """A rule that allows, denies or asks for calls of one tool matching `rule_content`."""

    model_config = ConfigDict(extra="forbid")

    tool_name: str = Field(description="Tool the rule applies to.")
    rule_content: str | None = Field(
        default=None, description="Tool-specific pattern; None matches every call of the tool."
    )
    behavior: PermissionBehavior = Field(description="What matching calls get.")
    source: str = Field(default="user", description="Where the rule came from.")


class AdditionalWorkingDirectory(BaseModel):
    """A directory the agent may work in besides its workspace root."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="Absolute directory path.")
    source: str = Field(default="session", description="Where the directory came from.")


class PermissionDecision(BaseModel):
    """The verdict on one tool call."""

    model_config = ConfigDict(extra="forbid")

    behavior: PermissionBehavior
    message: str = Field(default="", description="Why; shown to the model on DENY.")
    reason: str = Field(default="", description="Machine-readable cause (rule, mode, safety...).")
    bypass_immune: bool = Field(
        default=False, description="A safety ASK that allow rules cannot silence."
    )
    suggestions: list[PermissionRule] = Field(
        default_factory=list, description="Rules the user may accept to allow similar calls."
    )


class PermissionContext(BaseModel):
    """Mode, working directories and rules (by tool name) of one agent."""

    model_config = ConfigDict(extra="forbid")

    mode: PermissionMode = PermissionMode.DEFAULT
    working_directories: dict[str, AdditionalWorkingDirectory] = Field(default_factory=dict)
    allow_rules: dict[str, list[PermissionRule]] = Field(default_factory=dict)
    deny_rules: dict[str, list[PermissionRule]] = Field(default_factory=dict)
    ask_rules: dict[str, list[PermissionRule]] = Field(default_factory=dict)
