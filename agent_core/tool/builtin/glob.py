"""`Glob`: find files by name pattern, newest first."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic import Field

from agent_core.tool.base import ToolChunk
from agent_core.tool.builtin._base import (
    VCS_DIRS,
    StatelessTool,
    ToolInput,
    Workspace,
    done,
    input_schema,
    normal,
)
from agent_core.tool.builtin._patterns import expand_braces, has_magic
from agent_core.tool.builtin._search import SearchRules, paginate

DEFAULT_HEAD_LIMIT = 250


class GlobInput(ToolInput):
    """Arguments of `Glob`."""

    pattern: str = Field(
        min_length=1, description="The glob pattern to match, e.g. '**/*.py' or 'src/**/*.ts'."
    )
    path: str | None = Field(
        default=None, description="The directory to search in (defaults to the workspace)."
    )
    head_limit: int | None = Field(
        default=None,
        ge=0,
        description=f"Return at most this many paths (default {DEFAULT_HEAD_LIMIT}; 0: no limit).",
    )
    offset: int = Field(default=0, ge=0, description="Skip this many matching paths first.")


def _split_absolute(pattern: str) -> tuple[Path, str]:
    """Split an absolute pattern into its literal leading directory and the glob below it."""
    parts = Path(pattern).parts
    for index, part in enumerate(parts):
        if has_magic(part):
            return Path(*parts[:index]), "/".join(parts[index:])
    return Path(*parts[:-1]), parts[-1]


def find_files(base: Path, pattern: str) -> list[Path]:
    """Files under `base` matching `pattern` (braces expanded), newest first.

    Symlinked directories are not descended into; version-control directories are skipped.

    Args:
        base: The directory to search.
        pattern: A glob relative to `base`.

    Returns:
        The matching regular files, by modification time (newest first), then by path.
    """
    found: dict[Path, float] = {}
    for expanded in expand_braces(pattern):
        for path in base.glob(expanded):
            if path in found or VCS_DIRS.intersection(path.relative_to(base).parts):
                continue
            try:
                if path.is_file():
                    found[path] = path.stat().st_mtime
            except OSError:
                continue
    return sorted(found, key=lambda p: (-found[p], str(p)))


class Glob(SearchRules, StatelessTool[GlobInput]):
    """List the files matching a glob pattern, most recently modified first."""

    name = "Glob"
    description = (
        "Find files by glob pattern, e.g. '**/*.py', 'src/**/*.{ts,tsx}'. Returns absolute "
        "paths sorted by modification time, newest first. The pattern is relative to `path` "
        "(default: the workspace directory). Use head_limit and offset to page through many "
        "results."
    )
    input_model = GlobInput
    input_schema = input_schema(GlobInput)
    is_concurrency_safe = True
    is_read_only = True
    pattern_is_path = True

    def __init__(self, cwd: str | Path) -> None:
        """Create the tool for the workspace at `cwd`.

        Args:
            cwd: The workspace directory.
        """
        self.workspace = Workspace(cwd)

    async def run(self, params: GlobInput) -> AsyncIterator[ToolChunk]:
        """Match the pattern and list the files."""
        yield await asyncio.to_thread(self._glob, params)

    def _glob(self, params: GlobInput) -> ToolChunk:
        base = self.workspace.path(params.path) if params.path else self.workspace.cwd
        pattern = params.pattern
        if Path(pattern).is_absolute():
            base, pattern = _split_absolute(pattern)
        if not base.is_dir():
            return done(f"Directory does not exist: {normal(base)}", error=True)
        try:
            files = find_files(base, pattern)
        except (OSError, ValueError) as exc:
            return done(f"Invalid glob pattern {params.pattern!r}: {exc}", error=True)
        if not files:
            return done(f"No files found matching pattern: {params.pattern}")
        limit = DEFAULT_HEAD_LIMIT if params.head_limit is None else params.head_limit
        return done(paginate([normal(p) for p in files], limit, params.offset, noun="files"))
