"""`Grep`: search file contents by regular expression (ripgrep, or pure Python without it)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from agent_core.tool.base import ToolChunk
from agent_core.tool.builtin._base import (
    StatelessTool,
    ToolInput,
    Workspace,
    done,
    input_schema,
    normal,
)
from agent_core.tool.builtin._grep_search import (
    MAX_ROWS,
    FileHits,
    Found,
    Query,
    SearchError,
    ripgrep,
    search_python,
    search_rg,
)
from agent_core.tool.builtin._patterns import split_globs
from agent_core.tool.builtin._search import SearchRules, paginate

DEFAULT_HEAD_LIMIT = 250
MAX_COLUMNS = 500
OutputMode = Literal["content", "files_with_matches", "count"]


class GrepInput(ToolInput):
    """Arguments of `Grep` (ripgrep's flags keep their names: `-A`, `-B`, `-C`, `i`, `n`)."""

    pattern: str = Field(description="The regular expression to search for.")
    path: str | None = Field(
        default=None,
        description="File or directory to search in (defaults to the workspace directory).",
    )
    output_mode: OutputMode = Field(
        default="files_with_matches",
        description=(
            "'files_with_matches' lists matching files (default), 'content' shows matching "
            "lines (supports -A/-B/-C and n), 'count' shows the number of matching lines per "
            "file."
        ),
    )
    glob: str | None = Field(
        default=None,
        description="Only search files matching this glob, e.g. '*.js' or '*.{ts,tsx}'.",
    )
    file_type: str | None = Field(
        default=None, alias="type", description="Only search files of this type (py, js, rust...)."
    )
    after: int | None = Field(
        default=None, ge=0, alias="-A", description="Lines to show after each match (content)."
    )
    before: int | None = Field(
        default=None, ge=0, alias="-B", description="Lines to show before each match (content)."
    )
    around: int | None = Field(
        default=None, ge=0, alias="-C", description="Lines to show around each match (content)."
    )
    context: int | None = Field(
        default=None, ge=0, description="Same as -C: lines to show around each match."
    )
    line_numbers: bool = Field(
        default=True, alias="n", description="Show line numbers (content mode; default true)."
    )
    ignore_case: bool = Field(default=False, alias="i", description="Case-insensitive search.")
    case_insensitive: bool = Field(default=False, description="Same as i.")
    multiline: bool = Field(
        default=False,
        description="Let patterns span lines ('.' also matches newlines).",
    )
    head_limit: int | None = Field(
        default=None,
        ge=0,
        description=f"At most this many lines/entries (default {DEFAULT_HEAD_LIMIT}; 0: no limit).",
    )
    offset: int = Field(default=0, ge=0, description="Skip this many lines/entries first.")


def _kind(path: Path) -> Literal["file", "dir"] | None:
    """Whether `path` is a directory, another existing file, or missing."""
    if path.is_dir():
        return "dir"
    return "file" if path.exists() else None


def _clip(text: str) -> str:
    return text if len(text) <= MAX_COLUMNS else text[:MAX_COLUMNS] + " [line truncated]"


def _content_lines(files: list[FileHits], numbers: bool, separate: bool, single: bool) -> list[str]:
    lines: list[str] = []
    for hits in sorted(files, key=lambda h: h.path):
        previous: int | None = None
        for number in sorted(hits.rows):
            # With context, `--` separates blocks: between files and across gaps in a file.
            starts_block = previous is None or number != previous + 1
            if separate and lines and starts_block:
                lines.append("--")
            previous = number
            text, is_match = hits.rows[number]
            fields = [] if single else [hits.path]
            if numbers:
                fields.append(str(number))
            lines.append((":" if is_match else "-").join([*fields, _clip(text)]))
    return lines


def render(
    found: Found, mode: OutputMode, *, numbers: bool, separate: bool, single: bool
) -> list[str]:
    """Turn search results into output lines, in a deterministic order.

    Args:
        found: What the search found.
        mode: The output mode.
        numbers: Show line numbers (content mode).
        separate: Put `--` between non-adjacent blocks of lines (when context was asked for).
        single: The search was over one file, so lines are not prefixed with its path.

    Returns:
        Files newest first ('files_with_matches'), or lines by path ('count', 'content').
    """
    if mode == "files_with_matches":

        def mtime(hits: FileHits) -> float:
            try:
                return os.stat(hits.path).st_mtime
            except OSError:
                return 0.0

        return [h.path for h in sorted(found.files, key=lambda h: (-mtime(h), h.path))]
    if mode == "count":
        return [f"{h.path}:{h.matched}" for h in sorted(found.files, key=lambda h: h.path)]
    return _content_lines(found.files, numbers, separate, single)


class Grep(SearchRules, StatelessTool[GrepInput]):
    """Search file contents with a regular expression.

    Uses ripgrep (`rg`) when it is on PATH, otherwise an equivalent pure-Python search (which
    does not honour `.gitignore`). Results are ordered deterministically and paged with
    `head_limit` / `offset`.
    """

    name = "Grep"
    description = (
        "Search file contents with a regular expression (ripgrep syntax).\n\n"
        "- Use this instead of running grep or rg through Bash.\n"
        "- Filter files with glob (e.g. '*.py', '**/*.{ts,tsx}') or type (e.g. 'py', 'js').\n"
        "- output_mode: 'files_with_matches' (default) lists files, newest first; 'content' "
        "shows matching lines as path:line:text (context lines use '-'); 'count' shows "
        "matching lines per file.\n"
        "- Context with -A/-B/-C, case-insensitive with i, multi-line patterns with "
        "multiline.\n"
        f"- Results are limited to head_limit lines/entries (default {DEFAULT_HEAD_LIMIT}); "
        "use offset to page."
    )
    input_model = GrepInput
    input_schema = input_schema(GrepInput)
    is_concurrency_safe = True
    is_read_only = True

    def __init__(self, cwd: str | Path, *, use_ripgrep: bool = True, timeout: float = 60.0) -> None:
        """Create the tool for the workspace at `cwd`.

        Args:
            cwd: The workspace directory.
            use_ripgrep: Use `rg` when it is installed; False forces the Python search.
            timeout: Seconds a search may take.
        """
        self.workspace = Workspace(cwd)
        self.use_ripgrep = use_ripgrep
        self.search_timeout = timeout

    def prepare(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Accept `-i` and `-n`, as some models spell ripgrep's flags, for `i` and `n`."""
        for flag in ("i", "n"):
            if f"-{flag}" in kwargs and flag not in kwargs:
                kwargs[flag] = kwargs.pop(f"-{flag}")
        return kwargs

    async def run(self, params: GrepInput) -> AsyncIterator[ToolChunk]:
        """Search and render one page of results."""
        root = self.workspace.path(params.path) if params.path else self.workspace.cwd
        shown_root = normal(root)
        kind = await asyncio.to_thread(_kind, root)
        if kind is None:
            yield done(f"Path does not exist: {shown_root}", error=True)
            return
        content = params.output_mode == "content"
        around = params.context if params.context is not None else params.around
        query = Query(
            pattern=params.pattern,
            root=shown_root,
            root_is_file=kind == "file",
            ignore_case=params.ignore_case or params.case_insensitive,
            multiline=params.multiline,
            before=(params.before if params.before is not None else around or 0) if content else 0,
            after=(params.after if params.after is not None else around or 0) if content else 0,
            globs=split_globs(params.glob or ""),
            file_type=params.file_type,
            first_match_only=params.output_mode == "files_with_matches",
        )
        try:
            found = await self._search(query)
        except SearchError as exc:
            yield done(str(exc), error=True)
            return
        if not found.files:
            yield done(f"No matches found for pattern: {params.pattern}")
            return
        lines = await asyncio.to_thread(  # files are ordered by mtime: a stat per file
            render,
            found,
            params.output_mode,
            numbers=params.line_numbers,
            separate=bool(query.before or query.after),
            single=query.root_is_file,
        )
        limit = DEFAULT_HEAD_LIMIT if params.head_limit is None else params.head_limit
        noun = "lines" if content else "files"
        text = paginate(lines, limit, params.offset, noun=noun)
        if found.capped:
            text += f"\n\n[The search stopped after {MAX_ROWS} lines; narrow the pattern or path.]"
        yield done(text)

    async def _search(self, query: Query) -> Found:
        executable = ripgrep() if self.use_ripgrep else None
        if executable is None:
            return await asyncio.to_thread(search_python, query, self.search_timeout)
        try:
            async with asyncio.timeout(self.search_timeout):
                return await search_rg(executable, query)
        except TimeoutError as exc:
            raise SearchError(
                f"Search timed out after {self.search_timeout:g} seconds; narrow it."
            ) from exc
