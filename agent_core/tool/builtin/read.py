"""`Read`: a file's lines, numbered like `cat -n`, or an image the model can look at."""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from agent_core.message import Base64Source, DataBlock, TextBlock
from agent_core.state import AgentState
from agent_core.tool.base import ToolChunk
from agent_core.tool.builtin._base import (
    Seen,
    StatefulTool,
    ToolInput,
    Workspace,
    done,
    done_blocks,
    input_schema,
    observe,
    remember,
)
from agent_core.tool.builtin._files import FileRules
from agent_core.tool.builtin._pdf import (
    MAX_PAGES_PER_READ,
    MAX_PAGES_WITHOUT_RANGE,
    PdfReadError,
    is_pdf,
    read_pdf_text,
)

MAX_LINES = 2000
_SNIFF_BYTES = 8192
_IMAGE_SIGNATURES: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
    (b"WEBP", 8, "image/webp"),
)


class ReadInput(ToolInput):
    """Arguments of `Read`."""

    file_path: str = Field(
        description="The file to read: an absolute path, or one relative to the workspace."
    )
    offset: int = Field(default=1, ge=1, description="1-based line number to start reading from.")
    limit: int = Field(
        default=MAX_LINES,
        ge=1,
        description=f"Maximum number of lines to read (at most {MAX_LINES}).",
        json_schema_extra={"maximum": MAX_LINES},
    )
    pages: str | None = Field(
        default=None,
        description=f'Page range of a PDF file, e.g. "1-5", "3" or "10-20"; at most '
        f"{MAX_PAGES_PER_READ} pages per call, and required for PDFs of more than "
        f"{MAX_PAGES_WITHOUT_RANGE} pages. Only applies to PDF files.",
    )


def _image_type(head: bytes) -> str | None:
    """The media type of an image the model can view (png, jpeg, gif, webp), from its bytes."""
    for signature, at, media_type in _IMAGE_SIGNATURES:
        if head[at : at + len(signature)] == signature and (at == 0 or head[:4] == b"RIFF"):
            return media_type
    return None


@dataclass
class _Window:
    """The requested lines of a text file, and what was left out."""

    lines: list[str] = field(default_factory=list)
    total: int = 0
    cut_at_chars: bool = False
    all_lines: list[str] | None = None


def _read_window(
    path: Path, offset: int, limit: int, max_line_chars: int, max_chars: int, keep_all: bool
) -> _Window:
    """Number the lines [offset, offset + limit) in one streaming pass over the file."""
    window = _Window(all_lines=[] if keep_all else None)
    used = 0
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            window.total = number
            if window.all_lines is not None:
                window.all_lines.append(line)
            if number < offset or number >= offset + limit or window.cut_at_chars:
                continue
            text = line.rstrip("\n")
            if len(text) > max_line_chars:
                text = text[:max_line_chars] + "... [line truncated]"
            row = f"{number:6d}\t{text}"
            if used + len(row) > max_chars and window.lines:
                window.cut_at_chars = True
                continue
            used += len(row) + 1
            window.lines.append(row)
    return window


class Read(FileRules, StatefulTool[ReadInput]):
    """Read a text file with line numbers, or an image file as an image.

    Binary files are reported, not dumped. Long files are shown a window at a time (`offset`,
    `limit`), long lines are cut, and a marker says what was left out. Every read is recorded
    in the agent state's read cache, which `Write` and `Edit` check.
    """

    name = "Read"
    description = (
        "Read a file from the filesystem. Relative paths are resolved against the workspace "
        "directory.\n\n"
        "- Returns up to 2000 lines by default, numbered like `cat -n` (line number, tab, "
        "content); use offset and limit to page through longer files.\n"
        "- Lines longer than the line limit are cut and marked.\n"
        "- Images (PNG, JPEG, GIF, WEBP) are returned as images.\n"
        "- PDF files (.pdf) are returned as text, page by page. For PDFs of more than "
        f"{MAX_PAGES_WITHOUT_RANGE} pages you MUST pass pages (at most {MAX_PAGES_PER_READ} "
        "pages per call).\n"
        "- Binary files are reported as such instead of being printed.\n"
        "- Reading a file is required before changing it with Write or Edit."
    )
    input_model = ReadInput
    input_schema = input_schema(ReadInput)
    is_concurrency_safe = True
    is_read_only = True

    def __init__(
        self,
        cwd: str | Path,
        *,
        max_line_chars: int = 2000,
        max_output_chars: int = 200_000,
        max_image_bytes: int = 5 * 1024 * 1024,
    ) -> None:
        """Create the tool for the workspace at `cwd`.

        Args:
            cwd: The workspace directory.
            max_line_chars: Longer lines are cut to this many characters.
            max_output_chars: Output beyond this many characters is left out (marked).
            max_image_bytes: Larger images are refused.
        """
        self.workspace = Workspace(cwd)
        self.max_line_chars = max_line_chars
        self.max_output_chars = max_output_chars
        self.max_image_bytes = max_image_bytes

    async def run(self, params: ReadInput, state: AgentState) -> AsyncIterator[ToolChunk]:
        """Read the file (in a worker thread) and record it in the read cache."""
        limit = min(params.limit, MAX_LINES)
        chunk, seen = await asyncio.to_thread(
            self._read,
            params.file_path,
            params.offset,
            limit,
            state.tool_context.max_cache_bytes,
            params.pages,
        )
        if seen is not None:
            remember(state, seen)
        yield chunk

    def _read(
        self, raw: str, offset: int, limit: int, cache_bytes: float, pages: str | None = None
    ) -> tuple[ToolChunk, Seen | None]:
        path = self.workspace.path(raw)
        shown = self.workspace.display(raw)
        if not path.exists():
            return done(f"File does not exist: {shown}", error=True), None
        if path.is_dir():
            return done(
                f"{shown} is a directory, not a file. Use Glob to list it.", error=True
            ), None
        try:
            return self._read_file(path, shown, offset, limit, cache_bytes, pages)
        except OSError as exc:
            return done(f"Cannot read {shown}: {exc.strerror or exc}", error=True), None

    def _read_file(
        self,
        path: Path,
        shown: str,
        offset: int,
        limit: int,
        cache_bytes: float,
        pages: str | None = None,
    ) -> tuple[ToolChunk, Seen]:
        size = os.stat(path).st_size
        with path.open("rb") as handle:
            head = handle.read(_SNIFF_BYTES)
        if is_pdf(path, head):
            try:
                return done(read_pdf_text(path, pages)), observe(path, None)
            except PdfReadError as exc:
                return done(f"{shown}: {exc}", error=True), observe(path, None)
        media_type = _image_type(head)
        if media_type is not None:
            if size > self.max_image_bytes:
                limit = self.max_image_bytes
                text = f"Image {shown} is too large to show ({size} bytes, limit {limit})."
                return done(text, error=True), observe(path, None)
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            image = DataBlock(source=Base64Source(data=data, media_type=media_type), name=path.name)
            caption = TextBlock(text=f"Image {shown} ({media_type}, {size} bytes)")
            return done_blocks([caption, image]), observe(path, None)
        if b"\x00" in head:
            text = f"{shown} is a binary file ({size} bytes); it cannot be shown as text."
            return done(text, error=True), observe(path, None)
        window = _read_window(
            path, offset, limit, self.max_line_chars, self.max_output_chars, size <= cache_bytes
        )
        seen = observe(path, window.all_lines)
        if window.total == 0:
            return done(f"File {shown} is empty."), seen
        if offset > window.total:
            text = f"File {shown} has {window.total} lines; offset {offset} is past the end."
            return done(text, error=True), seen
        text = "\n".join(window.lines)
        last = offset + len(window.lines) - 1
        if window.cut_at_chars or last < window.total:
            reason = " (output size limit reached)" if window.cut_at_chars else ""
            text += (
                f"\n\n[Showing lines {offset}-{last} of {window.total}{reason}. "
                f"Use offset={last + 1} to read more.]"
            )
        return done(text), seen
