"""`Read` on PDF files: the text of a page range (`pages`), as AgentScope's Read does it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.tool import Read
from tests.unit.agent_core.tools._helpers import Runner


def make_pdf(path: Path, pages: int) -> Path:
    """A PDF whose page k says "text of page k" (Helvetica), with a correct xref table."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"",  # the page tree, filled in below
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    kids = []
    for number in range(1, pages + 1):
        text = f"BT /F1 12 Tf 72 720 Td (text of page {number}) Tj ET".encode()
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(text), text))
        content = len(objects)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % content
        )
        kids.append(b"%d 0 R" % len(objects))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(kids), pages)
    body = bytearray(b"%PDF-1.4\n")
    offsets = []
    for index, obj in enumerate(objects, start=1):
        offsets.append(len(body))
        body += b"%d 0 obj\n%s\nendobj\n" % (index, obj)
    xref = len(body)
    body += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    body += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    body += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    path.write_bytes(bytes(body))
    return path


@pytest.fixture
def run(tmp_path: Path) -> Runner:
    return Runner(Read(tmp_path))


async def test_a_short_pdf_is_read_whole_page_by_page(run: Runner, tmp_path: Path) -> None:
    make_pdf(tmp_path / "short.pdf", 3)

    result = await run("Read", file_path="short.pdf")

    assert result.ok
    assert result.text.split("\n\n") == [f"--- Page {k}/3 ---\ntext of page {k}" for k in (1, 2, 3)]


async def test_pages_selects_a_range_or_one_page(run: Runner, tmp_path: Path) -> None:
    make_pdf(tmp_path / "doc.pdf", 30)

    some = await run("Read", file_path="doc.pdf", pages="11-13")
    one = await run("Read", file_path="doc.pdf", pages=" 7 ")
    tail = await run("Read", file_path="doc.pdf", pages="25-40")  # clipped to the last page

    assert some.ok
    assert [line for line in some.text.splitlines() if line.startswith("---")] == [
        "--- Page 11/30 ---",
        "--- Page 12/30 ---",
        "--- Page 13/30 ---",
    ]
    assert one.text == "--- Page 7/30 ---\ntext of page 7"
    assert tail.text.count("--- Page ") == 6


async def test_a_long_pdf_needs_a_range_of_at_most_twenty_pages(
    run: Runner, tmp_path: Path
) -> None:
    make_pdf(tmp_path / "long.pdf", 25)

    whole = await run("Read", file_path="long.pdf")
    too_many = await run("Read", file_path="long.pdf", pages="1-21")

    assert not whole.ok
    assert "The PDF has 25 pages, more than 10: pass pages" in whole.text
    assert not too_many.ok
    assert "Requested 21 pages; at most 20 pages can be read per call." in too_many.text


@pytest.mark.parametrize(
    ("pages", "message"),
    [
        ("first", "Invalid pages 'first': expected a page number or a range"),
        ("5-2", "Invalid pages '5-2': the PDF has 3 page(s)."),
        ("4", "Invalid pages '4': the PDF has 3 page(s)."),
        ("0", "Invalid pages '0': the PDF has 3 page(s)."),
    ],
)
async def test_bad_ranges_are_errors(run: Runner, tmp_path: Path, pages: str, message: str) -> None:
    make_pdf(tmp_path / "doc.pdf", 3)

    result = await run("Read", file_path="doc.pdf", pages=pages)

    assert not result.ok
    assert message in result.text


async def test_a_broken_pdf_is_an_error_and_pages_is_ignored_for_text(
    run: Runner, tmp_path: Path
) -> None:
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\nnot really a pdf")
    (tmp_path / "notes.txt").write_text("plain\n")

    broken = await run("Read", file_path="broken.pdf")
    text = await run("Read", file_path="notes.txt", pages="1-2")

    assert not broken.ok
    assert "Cannot read the PDF" in broken.text
    assert text.ok
    assert text.text == "     1\tplain"
