"""Skills of a LocalWorkspace: installed under skills/<name>/, indexed by hash, persisted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.workspaces._helpers import write_skill
from workspaces import InvalidSkill, LocalWorkspace, SkillNotFound


def index_of(workspace: LocalWorkspace) -> list[dict[str, object]]:
    entries: list[dict[str, object]] = json.loads(
        (workspace.workdir / "skills" / ".skills").read_text()
    )
    return entries


async def test_an_added_skill_is_copied_indexed_and_listed(
    tmp_path: Path, workspace: LocalWorkspace
) -> None:
    source = write_skill(tmp_path / "src" / "pdf-tools", "pdf", "Extract text from PDFs.")
    installed = await workspace.add_skill(source)

    target = workspace.workdir / "skills" / "pdf"
    assert installed.skill.path == str(target)
    assert (target / "SKILL.md").read_text() == (source / "SKILL.md").read_text()
    assert (target / "scripts" / "run.sh").is_file()
    (entry,) = index_of(workspace)
    assert entry["name"] == "pdf"
    assert entry["dir"] == "pdf"
    assert len(str(entry["sha256"])) == 64

    (listed,) = await workspace.installed_skills()
    assert listed.skill.name == "pdf"
    assert listed.skill.description == "Extract text from PDFs."
    assert listed.updated_at == installed.updated_at


async def test_adding_identical_content_again_copies_nothing(
    tmp_path: Path, workspace: LocalWorkspace
) -> None:
    source = write_skill(tmp_path / "pdf", "pdf", "Extract text from PDFs.")
    first = await workspace.add_skill(source)
    marker = workspace.workdir / "skills" / "pdf" / "local-note.txt"
    marker.write_text("kept")  # would vanish if the directory were copied again
    index_before = index_of(workspace)

    again = await workspace.add_skill(source)
    assert again.updated_at == first.updated_at
    assert index_of(workspace) == index_before
    assert marker.exists()

    (source / "SKILL.md").write_text(
        "---\nname: pdf\ndescription: Extract text and tables.\n---\nNew body.\n"
    )
    replaced = await workspace.add_skill(source)
    assert replaced.skill.description == "Extract text and tables."
    assert "New body." in (workspace.workdir / "skills" / "pdf" / "SKILL.md").read_text()
    assert not marker.exists(), "changed content replaces the whole directory"
    (entry,) = index_of(workspace)
    assert entry["sha256"] != index_before[0]["sha256"]
    assert [s.name for s in await workspace.list_skills()] == ["pdf"]


async def test_skills_survive_restarts_and_removal_persists(tmp_path: Path) -> None:
    async with LocalWorkspace(tmp_path / "w") as first:
        await first.add_skill(write_skill(tmp_path / "a", "alpha", "First skill."))
        await first.add_skill(write_skill(tmp_path / "b", "beta", "Second skill."))

    async with LocalWorkspace(tmp_path / "w") as second:
        assert [s.name for s in await second.list_skills()] == ["alpha", "beta"]
        await second.remove_skill("alpha")
        assert not (second.workdir / "skills" / "alpha").exists()

    async with LocalWorkspace(tmp_path / "w") as third:
        assert [s.name for s in await third.list_skills()] == ["beta"]
        assert [e["name"] for e in index_of(third)] == ["beta"]


async def test_invalid_skills_are_refused(tmp_path: Path, workspace: LocalWorkspace) -> None:
    with pytest.raises(InvalidSkill, match=r"no SKILL\.md"):
        await workspace.add_skill(tmp_path / "missing")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "SKILL.md").write_text("no frontmatter here\n")
    with pytest.raises(InvalidSkill, match="frontmatter"):
        await workspace.add_skill(bad)
    write_skill(workspace.workdir, "self", "Contains the workspace.")
    with pytest.raises(InvalidSkill, match="contains"):
        await workspace.add_skill(workspace.workdir)
    with pytest.raises(SkillNotFound, match="'ghost'"):
        await workspace.remove_skill("ghost")
    assert await workspace.list_skills() == []


async def test_hand_placed_skill_directories_count_and_broken_ones_are_skipped(
    workspace: LocalWorkspace,
) -> None:
    write_skill(workspace.workdir / "skills" / "manual", "manual", "Put there by hand.")
    broken = workspace.workdir / "skills" / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("---\nname: broken\n---\n")
    assert [s.name for s in await workspace.list_skills()] == ["manual"]
    await workspace.remove_skill("manual")
    assert not (workspace.workdir / "skills" / "manual").exists()
