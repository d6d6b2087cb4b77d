"""Value types of the permission system: modes, rules, decisions and the context holding them."""

from __future__ import annotations

from enum import StrEnum

from pydantic import ConfigDict, Field

from agent_core.deferred_model import DeferredModel


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


class PermissionRule(DeferredModel):
    """A rule that allows, denies or asks for calls of one tool matching `rule_content`."""

    model_config = ConfigDict(extra="forbid")

    tool_name: str = Field(description="Tool the rule applies to.")
    rule_content: str | None = Field(
        default=None, description="Tool-specific pattern; None matches every call of the tool."
    )
    behavior: PermissionBehavior = Field(description="What matching calls get.")
    source: str = Field(default="user", description="Where the rule came from.")


class AdditionalWorkingDirectory(DeferredModel):
    """A directory the agent may work in besides its workspace root."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="Absolute directory path.")
    source: str = Field(default="session", description="Where the directory came from.")


class PermissionDecision(DeferredModel):
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


class PermissionContext(DeferredModel):
    """Mode, working directories and rules (by tool name) of one agent.

    `extra_read_only_commands` is an opt-in widening of what Bash auto-allows as read-only.
    By default only the spec's short list counts (ls, cat, grep, git status/log/diff, docker
    ps ... see `agent_core.permission._listed`), checked literally. Each entry is a command
    prefix (`date`, `sort`, `kubectl get`, `git branch`, `timeout`); a command line whose every
    command (including those run by `find -exec`, `xargs` or `sh -c`, and wrappers such as
    `timeout`) starts with a listed or default prefix counts as read-only, but only if Troupe's
    analysis also proves it reads only: listing `sed` allows `sed -n 1p f`, never `sed -i`,
    and listing `find` does not allow `find -delete`. Such lines may also use `2>/dev/null`,
    control structures stay excluded.
    """

    model_config = ConfigDict(extra="forbid")

    mode: PermissionMode = PermissionMode.DEFAULT
    working_directories: dict[str, AdditionalWorkingDirectory] = Field(default_factory=dict)
    allow_rules: dict[str, list[PermissionRule]] = Field(default_factory=dict)
    deny_rules: dict[str, list[PermissionRule]] = Field(default_factory=dict)
    ask_rules: dict[str, list[PermissionRule]] = Field(default_factory=dict)
    extra_read_only_commands: list[str] = Field(
        default_factory=list,
        description=(
            "Opt-in: command prefixes (`date`, `kubectl get`, `git branch`) that Bash also "
            "auto-allows as read-only when its analysis proves the command only reads. "
            "Empty by default: only the spec's short read-only list is auto-allowed."
        ),
    )
