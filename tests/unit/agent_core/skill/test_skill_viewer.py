"""The `Skill` viewer tool, on its own and dispatched by a toolkit."""

from __future__ import annotations

import json

import pytest

from agent_core.errors import ToolError
from agent_core.message import TextBlock, ToolCallBlock, ToolResultState
from agent_core.skill import Skill, SkillViewer
from agent_core.tool import Toolkit

REVIEW = "---\nname: review\ndescription: Review a pull request.\n---\n\n1. Read the diff.\n"


def text(chunk_content: list[object]) -> str:
    return "".join(b.text for b in chunk_content if isinstance(b, TextBlock))


async def test_viewer_returns_the_full_markdown_through_the_toolkit() -> None:
    viewer = SkillViewer([Skill.parse(REVIEW, "/skills/review")])
    assert viewer.name == "Skill"
    assert viewer.is_read_only
    assert viewer.is_concurrency_safe
    assert viewer.input_schema["required"] == ["skill"]

    toolkit = Toolkit([viewer])
    call = ToolCallBlock(id="c1", name="Skill", input=json.dumps({"skill": "review"}))
    chunks = [chunk async for chunk in toolkit.call(call)]
    (final,) = chunks
    assert final.state is ToolResultState.SUCCESS
    output = text(final.content)
    assert output.endswith(REVIEW)
    assert "/skills/review" in output
    assert final.metadata == {"skill": "review", "path": "/skills/review"}


async def test_unknown_skill_is_an_error_listing_the_available_ones() -> None:
    viewer = SkillViewer([Skill.parse(REVIEW, "/skills/review")])
    (chunk,) = [chunk async for chunk in viewer(skill="deploy")]
    assert chunk.state is ToolResultState.ERROR
    assert chunk.is_last
    assert text(chunk.content) == "Skill 'deploy' not found. Available skills: review"


def test_duplicate_skill_names_are_rejected() -> None:
    skill = Skill.parse(REVIEW, "/skills/review")
    with pytest.raises(ToolError, match="two skills are named 'review'"):
        SkillViewer([skill, skill])
