"""The permission engine: ALLOW, DENY or ASK for every tool call.

The flow per mode (the spec's flowcharts)::

    DEFAULT       deny rules → ask rules → check_permissions → allow rules → ASK
    ACCEPT_EDITS  deny rules → ask rules → read-only? ALLOW → check_permissions → allow rules → ASK
    EXPLORE       deny rules → ask rules → read-only? ALLOW, else DENY
    BYPASS        deny rules → ask rules → check_permissions (its DENY stands) → ALLOW
    DONT_ASK      as DEFAULT, with every ASK (ask rules, safety, fallback) turned into DENY

`check_permissions` may answer ALLOW or DENY (final), PASSTHROUGH (go on to allow rules), ASK
(allow rules may still allow it) or a bypass-immune safety ASK, which allow rules cannot
silence: it stands in DEFAULT and ACCEPT_EDITS, becomes DENY in DONT_ASK and is skipped in
BYPASS. Deny and ask rules are honored in every mode, BYPASS included; in EXPLORE an ask rule
that matches a change only through Troupe's per-command reading denies it (EXPLORE never
runs changes), one that matches the line literally asks. The built-in tools accept edits
inside the working directories in DONT_ASK as in ACCEPT_EDITS (as AgentScope 2.0.11 does).

Rules are matched twice (see `rules` and `_literal`): deny and ask rules apply when the
tool's own reading or the literal one matches, allow rules only when both do.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

from agent_core.permission._literal import literal_match
from agent_core.permission.paths import is_inside, working_directories
from agent_core.permission.rules import (
    ContextReadOnly,
    ReadPaths,
    add_rules,
    covers,
    describe,
    first_match,
    implements,
)
from agent_core.permission.rules import subjects_of as _subjects_of
from agent_core.permission.types import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
)

if TYPE_CHECKING:
    from agent_core.tool.base import ToolBase

_ALLOW = PermissionBehavior.ALLOW
_DENY = PermissionBehavior.DENY
_ASK = PermissionBehavior.ASK


class PermissionEngine:
    """Decides tool calls from a `PermissionContext` (mode, working directories, rules).

    The engine reads the context on every call, so changing `context.mode` or its rules takes
    effect at once; accepted rules are stored into it with `add_rules`.

    Args:
        context: The agent's permission context (kept by reference).
        confine_reads: Also confine reads: a read-only call of a tool that reports its paths
            (`read_paths`, see `rules.ReadPaths`: Read, Glob, Grep, read-only Bash) reading
            outside the working directories is not auto-allowed but treated as an ASK, which
            allow rules may still allow. Off by default, as in the spec; ignored in BYPASS.
    """

    def __init__(self, context: PermissionContext, *, confine_reads: bool = False) -> None:
        self.context = context
        self.confine_reads = confine_reads

    def add_rules(self, rules: Iterable[PermissionRule]) -> list[PermissionRule]:
        """Persist rules (typically accepted suggestions) into the context.

        Returns:
            The rules that were new.

        Raises:
            InvalidRuleError: A rule has behavior PASSTHROUGH.
        """
        return add_rules(self.context, rules)

    async def decide(self, tool: ToolBase, tool_input: dict[str, Any]) -> PermissionDecision:
        """Decide one call of `tool` with `tool_input`.

        Returns:
            ALLOW, DENY (its message is written for the model) or ASK (with the suggested
            rules the user may accept; none when accepting could not help, e.g. for a
            bypass-immune ASK).
        """
        context, mode = self.context, self.context.mode
        subjects = _subjects_of(tool, tool_input)
        rule = first_match(tool, context.deny_rules.get(tool.name, []), subjects, tool_input)
        if rule is not None:
            return _deny(f"{tool.name} was denied by the rule {describe(rule)}.", "rule:deny")
        asking = context.ask_rules.get(tool.name, [])
        rule = first_match(tool, asking, subjects, tool_input)
        if rule is not None:
            # in EXPLORE a change is denied, unless the rule asks about it in so many words
            if (
                mode is PermissionMode.EXPLORE
                and not any(literal_match(tool.name, r.rule_content, tool_input) for r in asking)
                and not await self._read_only(tool, tool_input)
            ):
                return _explore_denies(tool)
            message = f"The rule {describe(rule)} requires confirmation for {tool.name}."
            if mode is PermissionMode.DONT_ASK:
                return _unanswered(tool, message, "rule:ask")
            return PermissionDecision(behavior=_ASK, message=message, reason="rule:ask")

        if mode in (PermissionMode.EXPLORE, PermissionMode.ACCEPT_EDITS):
            if await self._read_only(tool, tool_input):
                if self._reads_confined(tool, tool_input):
                    return PermissionDecision(
                        behavior=_ALLOW, message="Read-only call.", reason="read_only"
                    )
                return self._after_tool(tool, tool_input, subjects, self._outside(tool))
            if mode is PermissionMode.EXPLORE:
                return _explore_denies(tool)

        decision = await tool.check_permissions(tool_input, context)
        if decision.behavior is _ALLOW:
            if (
                mode is PermissionMode.BYPASS
                or self._reads_confined(tool, tool_input)
                or not await self._read_only(tool, tool_input)
            ):
                return (
                    decision if decision.reason else decision.model_copy(update={"reason": "tool"})
                )
            decision = self._outside(tool)
        elif decision.behavior is _DENY:
            message = decision.message or f"{tool.name} was denied by its own permission check."
            return decision.model_copy(
                update={"message": message, "reason": decision.reason or "tool"}
            )
        elif decision.behavior is _ASK and decision.bypass_immune:
            if mode is PermissionMode.BYPASS:
                return PermissionDecision(
                    behavior=_ALLOW,
                    message="BYPASS mode skips safety prompts.",
                    reason="mode:bypass",
                )
            if mode is PermissionMode.DONT_ASK:
                return _unanswered(tool, decision.message, decision.reason or "safety")
            return decision
        return self._after_tool(tool, tool_input, subjects, decision)

    def _after_tool(
        self,
        tool: ToolBase,
        tool_input: dict[str, Any],
        subjects: list[dict[str, Any]],
        decision: PermissionDecision,
    ) -> PermissionDecision:
        """PASSTHROUGH or a regular ASK: BYPASS allows, allow rules allow, else ASK."""
        mode = self.context.mode
        if mode is PermissionMode.BYPASS:
            return PermissionDecision(behavior=_ALLOW, message="BYPASS mode.", reason="mode:bypass")
        if covers(tool, self.context.allow_rules.get(tool.name, []), subjects, tool_input):
            return PermissionDecision(
                behavior=_ALLOW, message="Allowed by an allow rule.", reason="rule:allow"
            )
        message = decision.message or f"{tool.name} needs confirmation: no allow rule matches."
        reason = decision.reason or f"mode:{mode.value}"
        if mode is PermissionMode.DONT_ASK:
            return _unanswered(tool, message, reason)
        suggestions = {
            (r.tool_name, r.rule_content, r.behavior): r
            for r in (*decision.suggestions, *tool.generate_suggestions(tool_input))
        }
        return PermissionDecision(
            behavior=_ASK, message=message, reason=reason, suggestions=list(suggestions.values())
        )

    async def _read_only(self, tool: ToolBase, tool_input: dict[str, Any]) -> bool:
        if implements(type(tool), ContextReadOnly):
            return await cast(ContextReadOnly, tool).check_read_only_in(tool_input, self.context)
        return await tool.check_read_only(tool_input)

    def _reads_confined(self, tool: ToolBase, tool_input: dict[str, Any]) -> bool:
        """Whether the call's reads need no confirmation.

        True when confinement is off, the tool does not report paths, or every path lies
        inside a working directory.
        """
        if not self.confine_reads or not implements(type(tool), ReadPaths):
            return True
        paths = cast(ReadPaths, tool).read_paths(tool_input)
        if paths is None:
            return False
        roots = working_directories(self.context)
        return all(os.path.isabs(path) and is_inside(path, roots, "/") for path in paths)

    @staticmethod
    def _outside(tool: ToolBase) -> PermissionDecision:
        return PermissionDecision(
            behavior=_ASK,
            message=f"{tool.name} would read outside the working directories.",
            reason="confine_reads",
        )


def _deny(message: str, reason: str) -> PermissionDecision:
    return PermissionDecision(behavior=_DENY, message=message, reason=reason)


def _explore_denies(tool: ToolBase) -> PermissionDecision:
    return _deny(
        f"{tool.name} was denied: in EXPLORE mode the agent may only read, and this call "
        "would change something.",
        "mode:explore",
    )


def _unanswered(tool: ToolBase, why: str, reason: str) -> PermissionDecision:
    return _deny(
        f"{tool.name} was denied: it needs confirmation ({why.rstrip('.')}), and DONT_ASK mode "
        "never asks.",
        reason,
    )
