"""Skills: SKILL.md parsing, the local loader and the system-prompt fragment."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.errors import ToolError
from agent_core.skill import LocalSkillLoader, Skill, parse_frontmatter, skills_prompt_fragment

PDF_SKILL = """---
name: pdf
description: Extract text and tables from PDF files.
license: Apache-2.0
---

# PDF

Run `scripts/extract.py <file>`.
"""


def write_skill(directory: Path, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "SKILL.md").write_text(text, encoding="utf-8")
    return directory


def test_loader_reads_the_directory_and_its_subdirectories(tmp_path: Path) -> None:
    write_skill(tmp_path, "---\nname: root\ndescription: The top skill.\n---\nbody\n")
    write_skill(tmp_path / "b-pdf", PDF_SKILL)
    write_skill(tmp_path / "a-csv", "---\nname: csv\ndescription: Work with CSV.\n---\n")
    write_skill(tmp_path / ".hidden", "---\nname: hidden\ndescription: Never loaded.\n---\n")
    (tmp_path / "notes").mkdir()

    skills = LocalSkillLoader(tmp_path).load()
    assert [s.name for s in skills] == ["root", "csv", "pdf"]
    pdf = skills[2]
    assert pdf.description == "Extract text and tables from PDF files."
    assert pdf.path == str(tmp_path / "b-pdf")
    assert pdf.content == PDF_SKILL
    assert pdf.metadata == {"license": "Apache-2.0"}

    assert [s.name for s in LocalSkillLoader(tmp_path, scan_subdir=False).load()] == ["root"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("# no frontmatter\n", "must start with a '---'"),
        ("---\nname: x\ndescription: never closed\n", "not closed"),
        ("---\ndescription: Nameless.\n---\n", "no 'name'"),
        ("---\nname: lonely\n---\n", "no 'description'"),
        ("---\nname: ''\ndescription: ''\n---\n", "no 'name' and 'description'"),
        ("---\nname: x\njust words\n---\n", "line 3 is not 'key: value'"),
    ],
)
def test_invalid_skill_files_are_named_in_the_error(
    tmp_path: Path, text: str, problem: str
) -> None:
    write_skill(tmp_path / "broken", text)
    with pytest.raises(ToolError, match=problem) as caught:
        LocalSkillLoader(tmp_path).load()
    assert str(tmp_path / "broken" / "SKILL.md") in str(caught.value)


def test_duplicate_names_and_missing_directories_are_errors(tmp_path: Path) -> None:
    write_skill(tmp_path / "one", PDF_SKILL)
    write_skill(tmp_path / "two", PDF_SKILL)
    with pytest.raises(ToolError, match="'pdf' is defined twice"):
        LocalSkillLoader(tmp_path).load()
    with pytest.raises(ToolError, match="does not exist"):
        LocalSkillLoader(tmp_path / "missing").load()


FRONTMATTERS = [
    "name: plain\ndescription: A plain value # with a comment",
    "name: \"double \\\"quoted\\\" \\u00e9\"\ndescription: 'single ''quoted'''",
    "name: folded\ndescription: >\n  Spans several\n  lines.\n\n  Second paragraph.\n",
    "name: literal\ndescription: |\n  Line one\n    indented\n  Line three\n",
    "name: continued\ndescription: A plain scalar\n  that goes on\n  over lines",
    "# a comment\nname: nested\ndescription: Has metadata.",
]


@pytest.mark.parametrize("frontmatter", FRONTMATTERS)
def test_frontmatter_subset_reads_like_yaml(frontmatter: str) -> None:
    yaml = pytest.importorskip("yaml")
    expected = {key: str(value).rstrip("\n") for key, value in yaml.safe_load(frontmatter).items()}
    assert parse_frontmatter(f"---\n{frontmatter}\n---\nbody") == expected


def test_colons_in_plain_values_are_accepted_where_yaml_would_refuse() -> None:
    fields = parse_frontmatter("---\nname: report\ndescription: Use when: asked.\n---\n")
    assert fields["description"] == "Use when: asked."


def test_nested_frontmatter_blocks_are_kept_as_text() -> None:
    fields = parse_frontmatter(
        "---\nname: n\ndescription: d\nmetadata:\n  version: 1.0\n  owner: team\n"
        "allowed-tools:\n  - Read\n  - Grep\n---\n"
    )
    assert fields["metadata"] == "version: 1.0\nowner: team"
    assert fields["allowed-tools"] == "- Read\n- Grep"


def test_prompt_fragment_lists_names_and_descriptions() -> None:
    assert skills_prompt_fragment([]) == ""
    skills = [
        Skill.parse(PDF_SKILL, "/skills/pdf"),
        Skill(name="csv", description="Work with\n  CSV files.", path="/skills/csv", content=""),
    ]
    fragment = skills_prompt_fragment(skills)
    assert "`Skill` tool" in fragment
    assert "- pdf: Extract text and tables from PDF files." in fragment
    assert "- csv: Work with CSV files." in fragment
    assert "Run `scripts/extract.py" not in fragment


def test_package_exports_resolve() -> None:
    import agent_core.skill as package

    assert sorted(package.__all__) == package.__all__
    assert all(getattr(package, name) is not None for name in package.__all__)
