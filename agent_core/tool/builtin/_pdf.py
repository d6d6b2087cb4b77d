"""Reading PDF files for `Read`: the text of a range of pages (with pypdf)."""

from __future__ import annotations

import re
from pathlib import Path

MAX_PAGES_WITHOUT_RANGE = 10
"""PDFs with more pages than this must be read with an explicit `pages` range."""
MAX_PAGES_PER_READ = 20
"""At most this many pages are read by one call."""

_RANGE = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?")


class PdfReadError(Exception):
    """The PDF cannot be read as asked; the message is for the model."""


def is_pdf(path: Path, head: bytes) -> bool:
    """Whether the file is a PDF: by its `.pdf` name or its `%PDF-` signature."""
    return path.suffix.lower() == ".pdf" or head.startswith(b"%PDF-")


def page_span(pages: str | None, total: int) -> tuple[int, int]:
    """The first and last page (1-based, inclusive) that `pages` asks for.

    Raises:
        PdfReadError: the range is malformed, outside the document or too long, or no range
            was given for a long document.
    """
    if pages is None:
        if total > MAX_PAGES_WITHOUT_RANGE:
            raise PdfReadError(
                f"The PDF has {total} pages, more than {MAX_PAGES_WITHOUT_RANGE}: pass pages "
                f'(e.g. "1-5") to read some of them, at most {MAX_PAGES_PER_READ} per call.'
            )
        return 1, max(total, 1)
    match = _RANGE.fullmatch(pages)
    if match is None:
        raise PdfReadError(
            f'Invalid pages {pages!r}: expected a page number or a range like "3" or "1-5".'
        )
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) else first
    if first < 1 or first > last or first > total:
        raise PdfReadError(f"Invalid pages {pages!r}: the PDF has {total} page(s).")
    last = min(last, total)
    if last - first + 1 > MAX_PAGES_PER_READ:
        raise PdfReadError(
            f"Requested {last - first + 1} pages; at most {MAX_PAGES_PER_READ} pages can be "
            "read per call."
        )
    return first, last


def read_pdf_text(path: Path, pages: str | None) -> str:
    """The text of the requested pages, each under a `--- Page i/N ---` header (blocking).

    Raises:
        PdfReadError: the file is not a readable PDF, or `pages` is not a valid request.
    """
    # pypdf is slow to import and most processes never read a PDF.
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(path)
        total = len(reader.pages)
        first, last = page_span(pages, total)
        parts = [
            f"--- Page {number}/{total} ---\n{reader.pages[number - 1].extract_text() or ''}"
            for number in range(first, last + 1)
        ]
    except (PyPdfError, ValueError, KeyError) as exc:
        raise PdfReadError(f"Cannot read the PDF: {exc}") from exc
    return "\n\n".join(parts)
