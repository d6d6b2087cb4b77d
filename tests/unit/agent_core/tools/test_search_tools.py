"""Glob and Grep on a real tree; Grep's ripgrep and pure-Python engines must agree."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from agent_core.tool import Glob, Grep
from tests.unit.agent_core.tools._helpers import Runner

HAS_RG = shutil.which("rg") is not None
ENGINES = [
    pytest.param(
        True, id="ripgrep", marks=pytest.mark.skipif(not HAS_RG, reason="rg not installed")
    ),
    pytest.param(False, id="python"),
]


def age(path: Path, seconds_ago: int) -> None:
    """Give a file a distinct modification time."""
    stamp = 1_700_000_000 - seconds_ago
    os.utime(path, (stamp, stamp))


@pytest.fixture
def tree(ws: Path, tmp_path: Path) -> Path:
    files = {
        "src/app.py": "import os\n\ndef main():\n    print('Hello')\n    return 0\n",
        "src/util.py": "def helper():\n    return 'hello world'\n",
        "src/web/page.ts": "const hello = 1;\nexport default hello;\n",
        "src/web/page.tsx": "export const Hello = () => null;\n",
        "docs/readme.md": "# Hello docs\n\nnothing else\n",
        ".hidden/conf.py": "HELLO = True\n",
        ".git/config": "hello from git\n",
        "ctx.txt": "one\ntwo\nhello\nthree\nfour\nfive\nsix\nhello\nseven\n",
        "-dash.txt": "-x flag\n",
    }
    for index, (name, content) in enumerate(sorted(files.items())):
        path = ws / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
        age(path, index * 10)
    (ws / "blob.bin").write_bytes(b"hello\x00binary")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.py").write_text("hello from outside\n")
    (ws / "escape").symlink_to(outside)
    (ws / "alias.py").symlink_to(ws / "src/util.py")
    return ws


# --- Glob -------------------------------------------------------------------------------------


async def test_glob_newest_first(tree: Path) -> None:
    result = await Runner(Glob(tree))("Glob", pattern="**/*.py")

    assert result.ok
    # Newest first (a symlink has its target's time); VCS directories and symlinked
    # directories are not entered.
    assert result.text.splitlines() == [
        str(tree / ".hidden/conf.py"),
        str(tree / "src/app.py"),
        str(tree / "alias.py"),
        str(tree / "src/util.py"),
    ]


async def test_glob_braces_path_and_paging(tree: Path) -> None:
    run = Runner(Glob(tree))

    braces = await run("Glob", pattern="**/*.{ts,tsx}", path="src")
    first = await run("Glob", pattern="**/*", head_limit=2)
    rest = await run("Glob", pattern="**/*", head_limit=0, offset=2)

    assert sorted(braces.text.splitlines()) == [
        str(tree / "src/web/page.ts"),
        str(tree / "src/web/page.tsx"),
    ]
    assert first.text.count("\n") >= 2
    assert "Use offset=2 for more." in first.text
    assert "[Showing" not in rest.text
    assert not any(".git/" in line for line in rest.text.splitlines())


async def test_glob_absolute_pattern_outside_the_workspace(tree: Path, tmp_path: Path) -> None:
    result = await Runner(Glob(tree))("Glob", pattern=str(tmp_path / "outside" / "*.py"))

    assert result.text == str(tmp_path / "outside" / "leak.py")


async def test_glob_no_match_and_missing_directory(tree: Path) -> None:
    run = Runner(Glob(tree))

    none = await run("Glob", pattern="**/*.rs")
    missing = await run("Glob", pattern="*", path="nowhere")

    assert none.ok
    assert none.text == "No files found matching pattern: **/*.rs"
    assert not missing.ok
    assert missing.text == f"Directory does not exist: {tree / 'nowhere'}"


# --- Grep -------------------------------------------------------------------------------------


@pytest.mark.parametrize("use_rg", ENGINES)
async def test_files_with_matches_newest_first(tree: Path, use_rg: bool) -> None:
    result = await Runner(Grep(tree, use_ripgrep=use_rg))("Grep", pattern="hello")

    # Hidden files are searched; .git, binary files and symlinks met while walking are not.
    assert result.text.splitlines() == [
        str(tree / "ctx.txt"),
        str(tree / "src/util.py"),
        str(tree / "src/web/page.ts"),
    ]


@pytest.mark.parametrize("use_rg", ENGINES)
async def test_content_with_context_and_separators(tree: Path, use_rg: bool) -> None:
    run = Runner(Grep(tree, use_ripgrep=use_rg))

    result = await run("Grep", pattern="hello", path="ctx.txt", output_mode="content", **{"-C": 1})

    assert result.text == "2-two\n3:hello\n4-three\n--\n7-six\n8:hello\n9-seven"


@pytest.mark.parametrize("use_rg", ENGINES)
async def test_content_across_files_with_paths(tree: Path, use_rg: bool) -> None:
    run = Runner(Grep(tree, use_ripgrep=use_rg))

    result = await run("Grep", pattern="hello", output_mode="content", i=True, glob="*.py")

    assert result.text.splitlines() == [
        f"{tree}/.hidden/conf.py:1:HELLO = True",
        f"{tree}/src/app.py:4:    print('Hello')",
        f"{tree}/src/util.py:2:    return 'hello world'",
    ]


@pytest.mark.parametrize("use_rg", ENGINES)
async def test_count_type_filter_and_no_line_numbers(tree: Path, use_rg: bool) -> None:
    run = Runner(Grep(tree, use_ripgrep=use_rg))

    count = await run("Grep", pattern="hello", output_mode="count", path="ctx.txt")
    typed = await run("Grep", pattern="(?i)hello", output_mode="count", type="ts")
    plain = await run("Grep", pattern="two", path="ctx.txt", output_mode="content", n=False)
    dashed = await run("Grep", pattern="-x", output_mode="content", **{"-n": False})

    assert count.text == f"{tree}/ctx.txt:2"
    assert typed.text == f"{tree}/src/web/page.ts:2\n{tree}/src/web/page.tsx:1"
    assert plain.text == "two"
    assert dashed.text == f"{tree}/-dash.txt:-x flag"


@pytest.mark.parametrize("use_rg", ENGINES)
async def test_multiline_patterns(tree: Path, use_rg: bool) -> None:
    run = Runner(Grep(tree, use_ripgrep=use_rg))

    result = await run(
        "Grep", pattern=r"def main\(\):.*?print", path="src", multiline=True, output_mode="content"
    )

    assert result.text == f"{tree}/src/app.py:3:def main():\n{tree}/src/app.py:4:    print('Hello')"


@pytest.mark.parametrize("use_rg", ENGINES)
async def test_paging_no_match_and_bad_pattern(tree: Path, use_rg: bool) -> None:
    run = Runner(Grep(tree, use_ripgrep=use_rg))

    page = await run("Grep", pattern="e", output_mode="content", path="ctx.txt", head_limit=2)
    none = await run("Grep", pattern="zzz_absent")
    bad = await run("Grep", pattern="(unclosed")
    missing = await run("Grep", pattern="x", path="nowhere")

    assert page.text.startswith(
        "1:one\n3:hello\n\n[Showing lines 1-2 of 6. Use offset=2 for more.]"
    )
    assert none.ok
    assert none.text == "No matches found for pattern: zzz_absent"
    assert not bad.ok
    assert not missing.ok


@pytest.mark.skipif(not HAS_RG, reason="rg not installed")
@pytest.mark.parametrize(
    "arguments",
    [
        {"pattern": "hello"},
        {"pattern": "hello", "i": True},
        {"pattern": "return", "output_mode": "content"},
        {"pattern": "o", "output_mode": "count"},
        {"pattern": "hello", "output_mode": "content", "-A": 2, "-B": 1},
        {"pattern": "e", "output_mode": "content", "glob": "src/**"},
        {"pattern": "e", "output_mode": "content", "glob": "!*.py"},
        {"pattern": "hello", "output_mode": "count", "glob": "*.{ts,tsx,md}", "i": True},
        {"pattern": r"\bexport\b", "output_mode": "content", "path": "src/web"},
        {"pattern": "hello", "path": "escape", "output_mode": "content"},
        {"pattern": "hello", "path": "blob.bin"},
        {"pattern": "one.*four", "output_mode": "content", "multiline": True, "path": "ctx.txt"},
    ],
)
async def test_ripgrep_and_python_agree(tree: Path, arguments: dict[str, Any]) -> None:
    with_rg = await Runner(Grep(tree))("Grep", **arguments)
    without = await Runner(Grep(tree, use_ripgrep=False))("Grep", **arguments)

    assert with_rg.text == without.text
    assert with_rg.state is without.state


def test_grep_schema_follows_agentscope_names() -> None:
    schema = Grep(".").input_schema

    assert set(schema["properties"]) == {
        "pattern", "path", "output_mode", "glob", "type", "-A", "-B", "-C", "context", "n", "i",
        "case_insensitive", "multiline", "head_limit", "offset",
    }  # fmt: skip
    assert schema["required"] == ["pattern"]
    assert schema["properties"]["output_mode"]["enum"] == ["content", "files_with_matches", "count"]
    assert set(Glob(".").input_schema["properties"]) == {"pattern", "path", "head_limit", "offset"}
