"""Read, Write and Edit on real directories: read-before-write, edits, odd files and paths."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from agent_core.tool import Edit, Read, Write
from tests.unit.agent_core.tools._helpers import Runner

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(17)


@pytest.fixture
def run(ws: Path) -> Runner:
    return Runner(Read(ws), Write(ws), Edit(ws))


def bump_mtime(path: Path) -> None:
    """Change a file behind the agent's back, with a visibly different mtime."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))


# --- Read -------------------------------------------------------------------------------------


async def test_read_numbers_lines_like_cat_n(run: Runner, ws: Path) -> None:
    (ws / "a.txt").write_text("alpha\n\tbeta\ngamma")

    result = await run("Read", file_path=str(ws / "a.txt"))

    assert result.ok
    assert result.text == "     1\talpha\n     2\t\tbeta\n     3\tgamma"


async def test_read_relative_path_offset_and_limit(run: Runner, ws: Path) -> None:
    (ws / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))

    result = await run("Read", file_path="n.txt", offset=4, limit=3)

    assert result.text.splitlines()[:3] == ["     4\tline 4", "     5\tline 5", "     6\tline 6"]
    assert "[Showing lines 4-6 of 10. Use offset=7 to read more.]" in result.text


async def test_read_past_the_end_and_empty_file(run: Runner, ws: Path) -> None:
    (ws / "two.txt").write_text("a\nb\n")
    (ws / "empty.txt").write_text("")

    past = await run("Read", file_path="two.txt", offset=5)
    empty = await run("Read", file_path="empty.txt")

    assert not past.ok
    assert "has 2 lines; offset 5 is past the end" in past.text
    assert empty.ok
    assert "is empty" in empty.text


async def test_huge_file_shows_one_window_with_a_marker(run: Runner, ws: Path) -> None:
    (ws / "big.txt").write_text("".join(f"row {i}\n" for i in range(1, 5001)))

    result = await run("Read", file_path="big.txt")

    assert result.ok
    assert "  2000\trow 2000" in result.text
    assert "row 2001" not in result.text
    assert result.text.endswith("[Showing lines 1-2000 of 5000. Use offset=2001 to read more.]")


async def test_output_size_cap_and_long_lines_are_marked(ws: Path) -> None:
    (ws / "wide.txt").write_text("x" * 50 + "\n" + ("y" * 30 + "\n") * 10)
    run = Runner(Read(ws, max_line_chars=20, max_output_chars=100))

    result = await run("Read", file_path="wide.txt")

    assert "x" * 20 + "... [line truncated]" in result.text
    assert "(output size limit reached)" in result.text
    assert "Use offset=" in result.text


async def test_limit_above_the_maximum_is_refused_by_the_schema(run: Runner, ws: Path) -> None:
    (ws / "big.txt").write_text("z\n" * 2500)

    result = await run("Read", file_path="big.txt", limit=9999)

    assert not result.ok
    assert "- limit: 9999 is greater than the maximum of 2000" in result.text


async def test_missing_file_directory_and_bad_arguments(run: Runner, ws: Path) -> None:
    missing = await run("Read", file_path="nope.txt")
    directory = await run("Read", file_path=".")
    bad = await run("Read", file_path="a.txt", offset=0)

    assert not missing.ok
    assert missing.text == f"File does not exist: {ws / 'nope.txt'}"
    assert not directory.ok
    assert "is a directory" in directory.text
    assert not bad.ok
    assert "offset" in bad.text


async def test_binary_file_is_reported_not_dumped(run: Runner, ws: Path) -> None:
    (ws / "blob.bin").write_bytes(b"\x7fELF\x00\x01\x02" * 100)

    result = await run("Read", file_path="blob.bin")

    assert not result.ok
    assert (
        result.text
        == f"{ws / 'blob.bin'} is a binary file (700 bytes); it cannot be shown as text."
    )


@pytest.mark.parametrize(
    ("name", "payload", "media_type"),
    [
        ("pic.png", PNG, "image/png"),
        ("pic.jpg", b"\xff\xd8\xff\xe0" + bytes(20), "image/jpeg"),
        ("pic.gif", b"GIF89a" + bytes(20), "image/gif"),
        ("pic.webp", b"RIFF\x10\x00\x00\x00WEBPVP8 " + bytes(8), "image/webp"),
    ],
)
async def test_images_come_back_as_data_blocks(
    run: Runner, ws: Path, name: str, payload: bytes, media_type: str
) -> None:
    (ws / name).write_bytes(payload)

    result = await run("Read", file_path=name)

    assert result.ok
    [image] = result.data
    assert image.source.media_type == media_type
    assert base64.b64decode(image.source.data) == payload  # type: ignore[union-attr]
    assert image.name == name


async def test_read_records_the_real_path_in_the_cache(run: Runner, ws: Path) -> None:
    target = ws / "a.txt"
    target.write_text("one\n")
    (ws / "sub").mkdir()

    await run("Read", file_path="sub/../a.txt")

    [entry] = run.state.tool_context.read_file_cache
    assert entry.file_path == str(target.resolve())
    assert entry.updated_at == target.stat().st_mtime
    assert entry.lines == ["one\n"]


# --- Write ------------------------------------------------------------------------------------


async def test_write_new_file_matches_the_recorded_frame(run: Runner, ws: Path) -> None:
    path = ws / "ws_out.txt"

    result = await run("Write", file_path=str(path), content="hello")

    assert result.ok
    assert result.text == f"The file {path} has been written successfully (1 lines)."
    assert result.metadata == {
        "diff": f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+hello",
        "file_path": str(path),
        "occurrences": 1,
    }
    assert path.read_text() == "hello"


async def test_write_creates_parent_directories(run: Runner, ws: Path) -> None:
    result = await run("Write", file_path="deep/er/f.txt", content="a\nb\n")

    assert result.ok
    assert "(2 lines)" in result.text
    assert (ws / "deep/er/f.txt").read_text() == "a\nb\n"


async def test_overwriting_requires_a_prior_read(run: Runner, ws: Path) -> None:
    path = ws / "keep.txt"
    path.write_text("original\n")

    blind = await run("Write", file_path="keep.txt", content="clobbered\n")

    assert not blind.ok
    assert "has not been read yet" in blind.text
    assert path.read_text() == "original\n"

    await run("Read", file_path="keep.txt")
    informed = await run("Write", file_path="keep.txt", content="updated\n")

    assert informed.ok
    assert path.read_text() == "updated\n"
    assert informed.metadata["diff"].startswith(f"--- a/{path}\n+++ b/{path}\n")
    assert "-original\n+updated\n" in informed.metadata["diff"]


async def test_write_refuses_a_file_changed_since_it_was_read(run: Runner, ws: Path) -> None:
    path = ws / "racy.txt"
    path.write_text("v1\n")
    await run("Read", file_path="racy.txt")
    path.write_text("v2 from someone else\n")
    bump_mtime(path)

    result = await run("Write", file_path="racy.txt", content="v3\n")

    assert not result.ok
    assert "modified since it was last read" in result.text
    assert path.read_text() == "v2 from someone else\n"


async def test_consecutive_writes_need_no_new_read(run: Runner, ws: Path) -> None:
    await run("Write", file_path="f.txt", content="1\n")
    second = await run("Write", file_path="f.txt", content="2\n")
    edit = await run("Edit", file_path="f.txt", old_string="2", new_string="3")

    assert second.ok
    assert edit.ok
    assert (ws / "f.txt").read_text() == "3\n"


# --- Edit -------------------------------------------------------------------------------------


async def test_edit_replaces_a_unique_match(run: Runner, ws: Path) -> None:
    path = ws / "code.py"
    path.write_text("def f():\n    return 1\n")
    await run("Read", file_path="code.py")

    result = await run("Edit", file_path="code.py", old_string="return 1", new_string="return 2")

    assert result.ok
    assert result.text == f"The file {path} has been edited successfully (replaced 1 occurrence)."
    assert path.read_text() == "def f():\n    return 2\n"
    assert result.metadata["occurrences"] == 1
    assert result.metadata["file_path"] == str(path)
    assert "-    return 1\n+    return 2\n" in result.metadata["diff"]


async def test_non_unique_edit_is_refused_and_replace_all_works(run: Runner, ws: Path) -> None:
    path = ws / "dup.txt"
    path.write_text("x = 1\ny = x\nz = x\n")
    await run("Read", file_path="dup.txt")

    refused = await run("Edit", file_path="dup.txt", old_string="x", new_string="w")

    assert not refused.ok
    assert "occurs 3 times" in refused.text
    assert path.read_text() == "x = 1\ny = x\nz = x\n"

    done = await run("Edit", file_path="dup.txt", old_string="x", new_string="w", replace_all=True)

    assert done.ok
    assert "replaced all 3 occurrences" in done.text
    assert done.metadata["occurrences"] == 3
    assert path.read_text() == "w = 1\ny = w\nz = w\n"


async def test_edit_failures_leave_the_file_alone(run: Runner, ws: Path) -> None:
    path = ws / "f.txt"
    path.write_text("content\n")

    unread = await run("Edit", file_path="f.txt", old_string="content", new_string="c")
    await run("Read", file_path="f.txt")
    missing = await run("Edit", file_path="f.txt", old_string="absent", new_string="c")
    same = await run("Edit", file_path="f.txt", old_string="content", new_string="content")
    empty = await run("Edit", file_path="f.txt", old_string="", new_string="c")
    nofile = await run("Edit", file_path="nope.txt", old_string="a", new_string="b")

    assert "has not been read yet" in unread.text
    assert "was not found" in missing.text
    assert "identical" in same.text
    assert "must not be empty" in empty.text
    assert "Use Write to create a new file" in nofile.text
    assert not any(r.ok for r in (unread, missing, same, empty, nofile))
    assert path.read_text() == "content\n"


async def test_edit_refuses_a_file_changed_since_it_was_read(run: Runner, ws: Path) -> None:
    path = ws / "f.txt"
    path.write_text("a\n")
    await run("Read", file_path="f.txt")
    bump_mtime(path)

    result = await run("Edit", file_path="f.txt", old_string="a", new_string="b")

    assert "modified since it was last read" in result.text
    assert path.read_text() == "a\n"


async def test_edit_keeps_crlf_line_endings(run: Runner, ws: Path) -> None:
    path = ws / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await run("Read", file_path="win.txt")

    result = await run("Edit", file_path="win.txt", old_string="one\ntwo", new_string="1\n2")

    assert result.ok
    assert path.read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_edit_refuses_binary_files(run: Runner, ws: Path) -> None:
    path = ws / "blob.bin"
    path.write_bytes(b"\xff\xfe\x00garbage")
    await run("Read", file_path="blob.bin")

    result = await run("Edit", file_path="blob.bin", old_string="garbage", new_string="x")

    assert not result.ok
    assert "not UTF-8 text" in result.text


# --- paths outside the workspace and symlinks -----------------------------------------------


async def test_relative_dotdot_and_absolute_paths_outside_the_workspace(
    run: Runner, ws: Path, tmp_path: Path
) -> None:
    relative = await run("Write", file_path="../outside.txt", content="out\n")
    absolute = await run("Write", file_path=str(tmp_path / "abs.txt"), content="abs\n")

    assert relative.ok
    assert absolute.ok
    assert (tmp_path / "outside.txt").read_text() == "out\n"
    assert (tmp_path / "abs.txt").read_text() == "abs\n"
    assert relative.metadata["file_path"] == str(tmp_path / "outside.txt")


async def test_symlink_escape_reads_and_writes_the_target(
    run: Runner, ws: Path, tmp_path: Path
) -> None:
    secret_dir = tmp_path / "elsewhere"
    secret_dir.mkdir()
    (secret_dir / "secret.txt").write_text("s3cret\n")
    (ws / "link").symlink_to(secret_dir)

    read = await run("Read", file_path="link/secret.txt")
    # The cache knows the file by its real path, whichever way it is named.
    edit = await run(
        "Edit", file_path=str(secret_dir / "secret.txt"), old_string="s3cret", new_string="public"
    )

    assert "s3cret" in read.text
    assert edit.ok
    assert (secret_dir / "secret.txt").read_text() == "public\n"


async def test_dotdot_after_a_symlink_follows_the_link_target(
    run: Runner, ws: Path, tmp_path: Path
) -> None:
    inner = tmp_path / "outer" / "inner"
    inner.mkdir(parents=True)
    (ws / "link").symlink_to(inner)

    result = await run("Write", file_path="link/../escaped.txt", content="x\n")

    assert (tmp_path / "outer" / "escaped.txt").read_text() == "x\n"
    assert not (ws / "escaped.txt").exists()
    assert result.metadata["file_path"] == str((tmp_path / "outer" / "escaped.txt").resolve())


async def test_writing_through_a_symlink_keeps_the_link(
    run: Runner, ws: Path, tmp_path: Path
) -> None:
    target = tmp_path / "real.txt"
    target.write_text("old\n")
    (ws / "alias.txt").symlink_to(target)
    await run("Read", file_path="alias.txt")

    result = await run("Write", file_path="alias.txt", content="new\n")

    assert result.ok
    assert (ws / "alias.txt").is_symlink()
    assert target.read_text() == "new\n"


# --- the read cache -------------------------------------------------------------------------


async def test_cache_stays_bounded_but_remembers_what_was_read(ws: Path) -> None:
    run = Runner(Read(ws), Write(ws))
    run.state.tool_context.max_cache_files = 3
    for i in range(5):
        (ws / f"f{i}.txt").write_text("x" * 6000 + "\n")
        await run("Read", file_path=f"f{i}.txt")

    entries = run.state.tool_context.read_file_cache
    assert [Path(e.file_path).name for e in entries] == ["f2.txt", "f3.txt", "f4.txt"]
    assert sum(e.bytes for e in entries) <= run.state.tool_context.max_cache_bytes
    assert entries[-1].lines  # the newest keeps its content
    # Older entries may have lost their lines, but they still count as read.
    assert (await run("Write", file_path="f2.txt", content="y\n")).ok
    assert not (await run("Write", file_path="f0.txt", content="y\n")).ok


async def test_state_injected_tools_need_a_state(ws: Path) -> None:
    (ws / "a.txt").write_text("a\n")

    chunks = [chunk async for chunk in Read(ws)(file_path="a.txt")]

    assert chunks[-1].is_last
    assert "needs the agent state" in chunks[-1].content[0].text  # type: ignore[union-attr]


def test_schemas_follow_agentscope_names() -> None:
    read, write, edit = (t.input_schema for t in (Read("."), Write("."), Edit(".")))

    assert set(read["properties"]) == {"file_path", "offset", "limit", "pages"}
    assert read["required"] == ["file_path"]
    assert read["properties"]["limit"]["maximum"] == 2000
    assert set(write["properties"]) == {"file_path", "content"}
    assert write["required"] == ["file_path", "content"]
    assert set(edit["properties"]) == {"file_path", "old_string", "new_string", "replace_all"}
    assert edit["required"] == ["file_path", "old_string", "new_string"]
    assert edit["properties"]["replace_all"] == {
        "default": False,
        "description": edit["properties"]["replace_all"]["description"],
        "type": "boolean",
    }
