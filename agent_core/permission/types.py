"""Value types of the permission system."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class PermissionBehavior(StrEnum):
    """What a rule or decision does with a tool call."""

    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"
    PASSTHROUGH = "passthrough"


class PermissionRule(BaseModel):
    """A rule that allows, denies or asks for calls of one tool matching `rule_content`."""

    model_config = ConfigDict(extra="forbid")

    tool_name: str = Field(description="Tool the rule applies to.")
    rule_content: str | None = Field(
        default=None, description="Tool-specific pattern; None matches every call of the tool."
    )
    behavior: PermissionBehavior = Field(description="What matching calls get.")
    source: str = Field(default="user", description="Where the rule came from.")
