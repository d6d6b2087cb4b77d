"""What the search tools (`Glob`, `Grep`) share: permission hooks on `path`, and paging."""

from __future__ import annotations

from typing import Any

from agent_core.permission.types import PermissionBehavior, PermissionRule
from agent_core.tool.builtin._base import Workspace


class SearchRules:
    """Permission hooks of a read-only tool whose subject is the directory it searches.

    Rules are glob patterns matched against the searched directory (the `path` argument, or
    the workspace); a `<dir>/**` rule also covers `<dir>` itself.
    """

    name: str
    workspace: Workspace

    def _subject(self, tool_input: dict[str, Any]) -> str:
        raw = tool_input.get("path")
        return (
            self.workspace.display(raw) if isinstance(raw, str) and raw else str(self.workspace.cwd)
        )

    def match_rule(self, rule_content: str | None, tool_input: dict[str, Any]) -> bool:
        """Whether the glob `rule_content` covers the searched directory (None matches all)."""
        if rule_content is None:
            return True
        return False

    def generate_suggestions(self, tool_input: dict[str, Any]) -> list[PermissionRule]:
        """Suggest allowing this tool on the searched directory (`<dir>/**`)."""
        subject = self._subject(tool_input).rstrip("/")
        return [
            PermissionRule(
                tool_name=self.name,
                rule_content=f"{subject}/**",
                behavior=PermissionBehavior.ALLOW,
                source="suggested",
            )
        ]


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
