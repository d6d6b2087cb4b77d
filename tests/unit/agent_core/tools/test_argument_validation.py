"""Every tool's arguments are checked against its `input_schema` before the tool runs."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel

from agent_core.message import TextBlock, ToolCallBlock, ToolResultState
from agent_core.state import AgentState
from agent_core.tool import FunctionTool, Read, TaskCreate, ToolBase, ToolChunk, Toolkit
from agent_core.tool._arguments import _plainly_valid, argument_errors


class Say(ToolBase):
    """Shaped like TeamSay: a required `content`, an optional `to`."""

    name = "Say"
    description = "Say something."
    input_schema: dict[str, Any] = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "content": {"type": "string"},
            "to": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        "required": ["content"],
    }

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def __call__(self, content: str, to: str | None = None) -> ToolChunk:  # type: ignore[override]
        self.calls.append({"content": content, "to": to})
        return ToolChunk(content=[TextBlock(text="sent")])


class Loose(ToolBase):
    """A tool whose schema is not valid JSON Schema (as a broken MCP server might send)."""

    name = "loose"
    description = "Anything goes."
    input_schema: dict[str, Any] = {"type": "object", "properties": {"x": {"type": 12}}}  # noqa: RUF012

    async def __call__(self, **kwargs: Any) -> AsyncGenerator[ToolChunk, None]:  # type: ignore[override]
        yield ToolChunk(content=[TextBlock(text=json.dumps(kwargs))])


class Color(Enum):
    RED = "red"
    BLUE = "blue"


class Point(BaseModel):
    x: int
    y: int


def paint(color: Color, at: Point, times: int = 1) -> str:
    """Paint a point.

    Args:
        color: Which color.
        at: Where.
        times: How many coats.
    """
    return f"{color.value} at {at.x},{at.y} x{times}"


async def run(toolkit: Toolkit, name: str, arguments: dict[str, Any]) -> tuple[str, ToolChunk]:
    call = ToolCallBlock(id="c1", name=name, input=json.dumps(arguments))
    chunks = [chunk async for chunk in toolkit.call(call, AgentState())]
    text = "".join(b.text for c in chunks for b in c.content if isinstance(b, TextBlock))
    return text, chunks[-1]


async def test_a_missing_argument_names_the_field_and_never_reaches_the_tool() -> None:
    say = Say()

    text, last = await run(Toolkit([say]), "Say", {"to": "lead", "message": "hi"})

    assert last.state is ToolResultState.ERROR
    assert "TypeError" not in text
    assert text.splitlines() == [
        "Invalid arguments for tool 'Say':",
        "- content: missing required argument (expected string)",
        "Expected arguments: content (string, required), to (string or null, optional)",
    ]
    assert say.calls == []


async def test_valid_arguments_reach_the_tool() -> None:
    say = Say()

    text, last = await run(Toolkit([say]), "Say", {"content": "hi"})

    assert (text, last.state) == ("sent", ToolResultState.SUCCESS)
    assert say.calls == [{"content": "hi", "to": None}]


async def test_a_wrong_type_names_the_field_the_expected_shape_and_what_came() -> None:
    text, last = await run(Toolkit([Say()]), "Say", {"content": 42, "to": ["a"]})

    assert last.state is ToolResultState.ERROR
    assert "- content: expected string, got integer 42" in text
    assert '- to: expected string or null, got array ["a"]' in text


async def test_builtin_tools_are_checked_before_they_run(tmp_path: Path) -> None:
    toolkit = Toolkit([Read(tmp_path), TaskCreate()])

    read, _ = await run(toolkit, "Read", {"path": "x.txt"})
    task, _ = await run(toolkit, "TaskCreate", {"subject": 3})

    assert "- file_path: missing required argument (expected string)" in read
    assert "- subject: expected string, got integer 3" in task


async def test_function_tools_are_checked_against_nested_and_enum_schemas() -> None:
    toolkit = Toolkit([FunctionTool(paint)])

    ok, _ = await run(toolkit, "paint", {"color": "red", "at": {"x": 1, "y": 2}})
    bad, last = await run(toolkit, "paint", {"color": "green", "at": {"x": 1}, "times": 0.5})

    assert ok == "red at 1,2 x1"
    assert last.state is ToolResultState.ERROR
    assert '- color: expected one of ["red", "blue"], got string "green"' in bad
    assert "- at.y: missing required argument (expected integer)" in bad
    assert "- times: expected integer, got number 0.5" in bad


async def test_a_tool_with_an_invalid_schema_judges_its_arguments_itself() -> None:
    text, last = await run(Toolkit([Loose()]), "loose", {"x": 1})

    assert (text, last.state) == ('{"x": 1}', ToolResultState.SUCCESS)


async def test_null_for_an_optional_argument_means_not_given(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    say = Say()
    toolkit = Toolkit([Read(tmp_path), say])

    read, last = await run(toolkit, "Read", {"file_path": "a.txt", "offset": None, "pages": None})
    await run(toolkit, "Say", {"content": "hi", "to": None})
    missing, _ = await run(toolkit, "Read", {"file_path": None})

    assert last.state is ToolResultState.SUCCESS
    assert "     1\tone" in read
    assert say.calls == [{"content": "hi", "to": None}]  # null is allowed there: passed on
    assert "- file_path: expected string, got null null" in missing


_SCALAR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "n": {"type": "integer", "description": "A count."},
        "x": {"type": "number"},
        "s": {"type": "string", "default": ""},
        "b": {"type": "boolean"},
    },
    "required": ["n"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    "arguments",
    [
        {"n": 1},
        {"n": 1, "x": 2.5, "s": "a", "b": True},
        {"n": 1, "x": 2},
        {"n": True},
        {"n": 1.0},
        {"n": "1"},
        {"x": 1.5},
        {"n": 1, "extra": 1},
        {"n": 1, "b": 0},
        {"n": 1, "s": None},
    ],
)
def test_the_quick_check_accepts_only_what_the_validator_accepts(arguments: dict[str, Any]) -> None:
    validator = Draft202012Validator(_SCALAR_SCHEMA)
    if _plainly_valid(_SCALAR_SCHEMA, arguments):
        assert validator.is_valid(arguments)
    assert (argument_errors("t", _SCALAR_SCHEMA, arguments) is None) == validator.is_valid(
        arguments
    )


def test_a_schema_beyond_the_quick_check_goes_to_the_validator() -> None:
    bounded = {**_SCALAR_SCHEMA, "properties": {"n": {"type": "integer", "minimum": 5}}}
    assert not _plainly_valid(bounded, {"n": 1})
    assert argument_errors("t", bounded, {"n": 1}) is not None
