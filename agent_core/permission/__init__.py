"""The permission system of agent_core: modes, rules, decisions and the engine.

`PermissionEngine` decides each tool call from a `PermissionContext`; the `bash_*` and `file_*`
functions are the permission hooks the built-in tools call (see `bash` and `paths`).

The types load eagerly; the engine, the rules, the path checks and the Bash analysis (a shell
parser and command tables) load on first use: every process that reads messages or states
imports this package, and most never decide a tool call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_core._lazy import lazy_names
from agent_core.permission.errors import InvalidRuleError, PermissionSystemError, ShellSyntaxError
from agent_core.permission.types import (
    AdditionalWorkingDirectory,
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
)

if TYPE_CHECKING:
    from agent_core.permission.bash import (
        BashAnalysis,
        SubCommand,
        analyze_command,
        bash_match_rule,
        bash_permission,
        bash_read_paths,
        bash_rule_subjects,
        bash_suggestions,
        is_read_only,
    )
    from agent_core.permission.engine import PermissionEngine
    from agent_core.permission.paths import (
        dangerous_path_reason,
        file_match_rule,
        file_read_paths,
        file_rule_subjects,
        file_suggestions,
        file_write_permission,
        glob_match,
        is_inside,
    )
    from agent_core.permission.rules import ReadPaths, RuleSubjects


_LAZY = {
    "BashAnalysis": "agent_core.permission.bash",
    "SubCommand": "agent_core.permission.bash",
    "analyze_command": "agent_core.permission.bash",
    "bash_match_rule": "agent_core.permission.bash",
    "bash_permission": "agent_core.permission.bash",
    "bash_read_paths": "agent_core.permission.bash",
    "bash_rule_subjects": "agent_core.permission.bash",
    "bash_suggestions": "agent_core.permission.bash",
    "is_read_only": "agent_core.permission.bash",
    "PermissionEngine": "agent_core.permission.engine",
    "dangerous_path_reason": "agent_core.permission.paths",
    "file_match_rule": "agent_core.permission.paths",
    "file_read_paths": "agent_core.permission.paths",
    "file_rule_subjects": "agent_core.permission.paths",
    "file_suggestions": "agent_core.permission.paths",
    "file_write_permission": "agent_core.permission.paths",
    "glob_match": "agent_core.permission.paths",
    "is_inside": "agent_core.permission.paths",
    "ReadPaths": "agent_core.permission.rules",
    "RuleSubjects": "agent_core.permission.rules",
}


__getattr__ = lazy_names(__name__, _LAZY)


__all__ = [
    "AdditionalWorkingDirectory",
    "BashAnalysis",
    "InvalidRuleError",
    "PermissionBehavior",
    "PermissionContext",
    "PermissionDecision",
    "PermissionEngine",
    "PermissionMode",
    "PermissionRule",
    "PermissionSystemError",
    "ReadPaths",
    "RuleSubjects",
    "ShellSyntaxError",
    "SubCommand",
    "analyze_command",
    "bash_match_rule",
    "bash_permission",
    "bash_read_paths",
    "bash_rule_subjects",
    "bash_suggestions",
    "dangerous_path_reason",
    "file_match_rule",
    "file_read_paths",
    "file_rule_subjects",
    "file_suggestions",
    "file_write_permission",
    "glob_match",
    "is_inside",
    "is_read_only",
]
