"""What the search tools (`Glob`, `Grep`) share: permission hooks on `path`, and paging."""

from __future__ import annotations

import glob
import os
from typing import Any

from agent_core.permission.paths import file_match_rule, file_read_paths, file_rule_subjects
from agent_core.permission.types import PermissionBehavior, PermissionRule
from agent_core.tool.builtin._base import Workspace


class SearchRules:
    """Permission hooks of a read-only tool whose subject is the place it searches.

    The place is the `path` argument (default: the workspace), moved by an absolute or `..`
    Glob pattern. Rules are file-rule globs matched against it, both as given and as its real
    path; a `<dir>/**` rule covers `<dir>` itself. The decision is left to the engine.
    """

    name: str
    workspace: Workspace
    # Whether the `pattern` argument is a path glob that can move the search (Glob's can).
    pattern_is_path: bool = False

    def _places(self, tool_input: dict[str, Any]) -> list[str] | None:
        path, pattern = tool_input.get("path"), tool_input.get("pattern")
        return file_read_paths(
            path if isinstance(path, str) and path else None,
            str(self.workspace.cwd),
            pattern if self.pattern_is_path and isinstance(pattern, str) else None,
        )

    def match_rule(self, rule_content: str | None, tool_input: dict[str, Any]) -> bool:
        """Whether the glob `rule_content` covers the searched place (None matches all)."""
        places = self._places(tool_input)
        if rule_content is None or places is None:
            return rule_content is None
        return all(file_match_rule(rule_content, p, str(self.workspace.cwd)) for p in places)

    def rule_subjects(self, tool_input: dict[str, Any]) -> list[dict[str, Any]]:
        """The call as rules see it: the searched place as given and as its real path."""
        places = self._places(tool_input) or []
        cwd = str(self.workspace.cwd)
        subjects = [view for place in places for view in file_rule_subjects(place, cwd)]
        return [{"path": view} for view in dict.fromkeys(subjects)] or [tool_input]

    def read_paths(self, tool_input: dict[str, Any]) -> list[str] | None:
        """Where the call reads (for engines that confine reads to working directories)."""
        return self._places(tool_input)

    def generate_suggestions(self, tool_input: dict[str, Any]) -> list[PermissionRule]:
        """Suggest allowing this tool on the searched directory (`src/**`)."""
        places = self._places(tool_input)
        if not places:
            return []
        root = os.path.normpath(self.workspace.cwd)
        rules: list[PermissionRule] = []
        for place in places:
            if place == root:
                content = "**"
            elif place.startswith(root.rstrip("/") + "/"):
                content = glob.escape(os.path.relpath(place, root)) + "/**"
            else:
                content = glob.escape(place.rstrip("/")) + "/**"
            rules.append(
                PermissionRule(
                    tool_name=self.name,
                    rule_content=content,
                    behavior=PermissionBehavior.ALLOW,
                    source="suggested",
                )
            )
        return rules


def paginate(lines: list[str], limit: int, offset: int, *, noun: str) -> str:
    """Join one page of result lines, with a marker saying how to get the next page.

    Args:
        lines: All result lines.
        limit: Page size; 0 means no limit.
        offset: How many lines to skip.
        noun: What the lines are ("files", "lines", ...), for the marker.

    Returns:
        The page's text.
    """
    total = len(lines)
    page = lines[offset : offset + limit] if limit else lines[offset:]
    if not page:
        return f"No {noun} at offset {offset} (there are {total})."
    text = "\n".join(page)
    end = offset + len(page)
    if end < total:
        text += f"\n\n[Showing {noun} {offset + 1}-{end} of {total}. Use offset={end} for more.]"
    return text
