"""The two search engines behind `Grep`: ripgrep (`rg --json`) and a pure-Python fallback.

Both produce the same `FileHits`, which `Grep` renders, so the output does not depend on
which engine ran. The fallback walks like ripgrep does with `--hidden`: hidden files are
searched, version-control directories and symlinks met while walking are not, and files
containing a NUL byte are treated as binary and skipped (unless named as the search path).
Unlike ripgrep it does not read `.gitignore` / `.ignore` / `.rgignore` files.
"""

from __future__ import annotations

import asyncio
import base64
import bisect
import contextlib
import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_core.tool.builtin._base import VCS_DIRS
from agent_core.tool.builtin._patterns import glob_filter

# Search stops once this many lines are collected, whichever engine runs.
MAX_ROWS = 50_000
_MAX_FILE_BYTES = 64 * 1024 * 1024
# One `rg --json` line holds a whole matched line, which can be huge (minified files).
_MAX_JSON_LINE = 32 * 1024 * 1024
# File types the fallback knows (`rg --type` knows many more).
FILE_TYPES: dict[str, tuple[str, ...]] = {
    "py": ("*.py", "*.pyi"),
    "js": ("*.js", "*.jsx", "*.mjs", "*.cjs"),
    "ts": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "rust": ("*.rs",),
    "go": ("*.go",),
    "java": ("*.java",),
    "kotlin": ("*.kt", "*.kts"),
    "c": ("*.c", "*.h"),
    "cpp": ("*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx", "*.h", "*.inl"),
    "cs": ("*.cs",),
    "rb": ("*.rb",),
    "php": ("*.php",),
    "sh": ("*.sh", "*.bash", "*.zsh"),
    "md": ("*.md", "*.markdown", "*.mdx"),
    "json": ("*.json",),
    "yaml": ("*.yaml", "*.yml"),
    "toml": ("*.toml",),
    "html": ("*.html", "*.htm"),
    "css": ("*.css", "*.scss"),
    "sql": ("*.sql",),
    "txt": ("*.txt",),
}


class SearchError(Exception):
    """The search could not run (bad pattern, unknown file type, ripgrep failure)."""


@dataclass
class Query:
    """One search, engine-independent."""

    pattern: str
    root: str
    root_is_file: bool = False
    ignore_case: bool = False
    multiline: bool = False
    before: int = 0
    after: int = 0
    globs: list[str] = field(default_factory=list)
    file_type: str | None = None
    first_match_only: bool = False


@dataclass
class FileHits:
    """The lines found in one file: line number -> (text, is a match)."""

    path: str
    rows: dict[int, tuple[str, bool]] = field(default_factory=dict)

    def add(self, number: int, text: str, is_match: bool) -> None:
        """Record a line; a match wins over context for the same line."""
        if is_match or number not in self.rows:
            self.rows[number] = (text, is_match)

    @property
    def matched(self) -> int:
        """How many lines match."""
        return sum(1 for _, is_match in self.rows.values() if is_match)


@dataclass
class Found:
    """What a search found; `capped` when it stopped at `MAX_ROWS`."""

    files: list[FileHits] = field(default_factory=list)
    capped: bool = False


def ripgrep() -> str | None:
    """The ripgrep executable on PATH, if any."""
    return shutil.which("rg")


# --- ripgrep ---------------------------------------------------------------------------------


def _rg_args(query: Query) -> list[str]:
    args = ["--json", "--no-config", "--hidden"]
    for name in sorted(VCS_DIRS):
        args += ["--glob", f"!{name}"]
    if query.ignore_case:
        args.append("-i")
    if query.multiline:
        args += ["-U", "--multiline-dotall"]
    if query.before:
        args += ["-B", str(query.before)]
    if query.after:
        args += ["-A", str(query.after)]
    if query.first_match_only:
        args += ["--max-count", "1"]
    if query.file_type:
        args += ["--type", query.file_type]
    for pattern in query.globs:
        args += ["--glob", pattern]
    return [*args, "-e", query.pattern, "--", query.root]


def _rg_text(value: dict[str, Any]) -> str:
    if "text" in value:
        return str(value["text"])
    return base64.b64decode(value.get("bytes", "")).decode("utf-8", errors="replace")


def _add_rg_message(found: dict[str, FileHits], message: dict[str, Any]) -> int:
    """Fold one `rg --json` message into `found`; return how many lines it added."""
    kind = message.get("type")
    if kind not in ("match", "context"):
        return 0
    data = message["data"]
    path = _rg_text(data["path"])
    hits = found.setdefault(path, FileHits(path))
    lines = _rg_text(data["lines"]).split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    for offset, line in enumerate(lines):
        hits.add(data["line_number"] + offset, line.rstrip("\r"), kind == "match")
    return len(lines)


async def search_rg(executable: str, query: Query) -> Found:
    """Run ripgrep and collect its matches (ripgrep is killed if this is cancelled).

    Raises:
        SearchError: On an invalid pattern or file type.
    """
    root = Path(query.root)
    process = await asyncio.create_subprocess_exec(
        executable,
        *_rg_args(query),
        # ripgrep matches globs that contain a `/` against paths relative to its working
        # directory, so run it from the search root to anchor them there.
        cwd=root.parent if query.root_is_file else root,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=_MAX_JSON_LINE,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    found: dict[str, FileHits] = {}
    rows = 0
    capped = False
    try:
        async for raw in process.stdout:
            rows += _add_rg_message(found, json.loads(raw))
            if rows >= MAX_ROWS:
                capped = True
                break
        if capped:
            process.kill()
        errors = (await process.stderr.read()).decode(errors="replace").strip()
        code = await process.wait()
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
    if code == 2 and not found and not capped:
        raise SearchError(errors or "ripgrep failed")
    return Found(list(found.values()), capped)


# --- pure Python -----------------------------------------------------------------------------


def _compile(query: Query) -> re.Pattern[str]:
    flags = re.MULTILINE
    if query.ignore_case:
        flags |= re.IGNORECASE
    if query.multiline:
        flags |= re.DOTALL
    try:
        return re.compile(query.pattern, flags)
    except re.error as exc:
        raise SearchError(f"Invalid regular expression {query.pattern!r}: {exc}") from exc


def _candidates(query: Query) -> Iterator[Path]:
    """The files to search, in walk order: filtered by glob and type, no symlinks, no VCS."""
    root = Path(query.root)
    if query.root_is_file:
        yield root
        return
    type_globs: list[str] = []
    if query.file_type:
        if query.file_type not in FILE_TYPES:
            known = ", ".join(sorted(FILE_TYPES))
            raise SearchError(f"Unknown file type {query.file_type!r}; known types: {known}")
        type_globs = list(FILE_TYPES[query.file_type])
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in VCS_DIRS)
        for name in sorted(filenames):
            path = Path(directory, name)
            relative = path.relative_to(root).as_posix()
            if path.is_symlink() or not glob_filter(query.globs, relative):
                continue
            if type_globs and not glob_filter(type_globs, name):
                continue
            yield path


def _search_file(
    path: Path, shown: str, regex: re.Pattern[str], query: Query, *, walked: bool
) -> FileHits:
    hits = FileHits(shown)
    try:
        if path.stat().st_size > _MAX_FILE_BYTES:
            return hits
        data = path.read_bytes()
    except OSError:
        return hits
    if walked and b"\x00" in data:  # binary; a file named explicitly is searched anyway
        return hits
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    spans: list[tuple[int, int]] = []
    if query.multiline:
        starts = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]
        for match in regex.finditer(text):
            first = bisect.bisect_right(starts, match.start()) - 1
            last = bisect.bisect_right(starts, max(match.start(), match.end() - 1)) - 1
            spans.append((first, min(last, len(lines) - 1)))
            if query.first_match_only:
                break
    else:
        for index, line in enumerate(lines):
            if regex.search(line.rstrip("\r")):
                spans.append((index, index))
                if query.first_match_only:
                    break
    for first, last in spans:
        for index in range(max(0, first - query.before), min(len(lines), last + query.after + 1)):
            hits.add(index + 1, lines[index].rstrip("\r"), first <= index <= last)
    return hits


def search_python(query: Query, timeout: float) -> Found:
    """Search like `search_rg`, in pure Python (blocking: run it in a thread).

    Raises:
        SearchError: On an invalid pattern, an unknown file type, or a timeout.
    """
    regex = _compile(query)
    found = Found()
    rows = 0
    single = query.root_is_file
    deadline = time.monotonic() + timeout
    for path in _candidates(query):
        if time.monotonic() > deadline:
            raise SearchError(f"Search timed out after {timeout:g} seconds; narrow it.")
        shown = query.root if single else os.path.join(query.root, path.relative_to(query.root))
        hits = _search_file(path, shown, regex, query, walked=not single)
        if hits.rows:
            found.files.append(hits)
            rows += len(hits.rows)
            if rows >= MAX_ROWS:
                found.capped = True
                break
    return found
