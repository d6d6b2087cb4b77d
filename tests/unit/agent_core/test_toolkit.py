"""Toolkit: registration, schemas and dispatch of tool calls."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import pytest

from agent_core.errors import ToolError
from agent_core.message import TextBlock, ToolCallBlock, ToolResultState
from agent_core.tool import FunctionTool, ToolBase, ToolChunk, Toolkit


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


def echo(text: str) -> str:
    """Echo the text back."""
    return text


class Countdown(ToolBase):
    """A hand-written tool streaming several chunks without a final one."""

    name = "countdown"
    description = "Count down from n."
    input_schema: dict[str, Any] = {  # noqa: RUF012
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
    }
    is_read_only = True

    async def __call__(self, n: int) -> AsyncGenerator[ToolChunk, None]:
        for i in range(n, 0, -1):
            yield ToolChunk(content=[TextBlock(text=str(i))])


class Lookup(ToolBase):
    """A tool written the spec's other way: a coroutine returning one chunk."""

    name = "lookup"
    description = "Look a key up."
    input_schema: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012

    async def __call__(self) -> ToolChunk:  # type: ignore[override]
        return ToolChunk(content=[TextBlock(text="found")])


class Broken(ToolBase):
    name = "broken"
    description = "Fails after one chunk."
    input_schema: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012

    async def __call__(self) -> AsyncIterator[ToolChunk]:
        yield ToolChunk(content=[TextBlock(text="partial")])
        raise ConnectionError("backend went away")


def call(name: str, arguments: Any = None, raw: str | None = None) -> ToolCallBlock:
    text = raw if raw is not None else json.dumps(arguments or {})
    return ToolCallBlock(id="call_1", name=name, input=text)


async def collect(toolkit: Toolkit, tool_call: ToolCallBlock) -> list[ToolChunk]:
    return [chunk async for chunk in toolkit.call(tool_call)]


def text_of(chunks: list[ToolChunk]) -> str:
    return "".join(b.text for c in chunks for b in c.content if isinstance(b, TextBlock))


def assert_single_final(chunks: list[ToolChunk], state: ToolResultState) -> None:
    assert [c.is_last for c in chunks] == [False] * (len(chunks) - 1) + [True]
    assert chunks[-1].state is state


# --- registration ---------------------------------------------------------------------------


def test_callables_are_wrapped_and_order_is_kept() -> None:
    countdown = Countdown()
    toolkit = Toolkit([add, countdown, FunctionTool(echo, name="say")])

    assert [t.name for t in toolkit.tools] == ["add", "countdown", "say"]
    assert isinstance(toolkit.get("add"), FunctionTool)
    assert toolkit.get("countdown") is countdown
    assert toolkit.get("echo") is None
    assert [s.name for s in toolkit.schemas()] == ["add", "countdown", "say"]
    assert toolkit.schemas()[0].parameters["required"] == ["a", "b"]
    assert toolkit.schemas()[1].parameters == Countdown.input_schema


def test_register_returns_the_tool_and_an_empty_toolkit_is_valid() -> None:
    toolkit = Toolkit()

    registered = toolkit.register(echo)

    assert isinstance(registered, FunctionTool)
    assert toolkit.tools == [registered]


def test_duplicate_names_are_rejected() -> None:
    toolkit = Toolkit([echo])

    with pytest.raises(ToolError, match="'echo' is already registered"):
        toolkit.register(FunctionTool(add, name="echo"))
    with pytest.raises(ToolError, match="already registered"):
        Toolkit([add, add])
    assert [t.name for t in toolkit.tools] == ["echo"]


def test_invalid_names_and_non_callables_are_rejected() -> None:
    with pytest.raises(ToolError, match="invalid tool name"):
        Toolkit([lambda: "x"])
    with pytest.raises(ToolError, match="cannot register"):
        Toolkit(["not a tool"])  # type: ignore[list-item]


# --- calling --------------------------------------------------------------------------------


async def test_call_runs_the_tool() -> None:
    chunks = await collect(Toolkit([add]), call("add", {"a": 2, "b": 3}))

    assert_single_final(chunks, ToolResultState.SUCCESS)
    assert text_of(chunks) == "5"


async def test_stream_without_final_chunk_gets_a_success_ending() -> None:
    chunks = await collect(Toolkit([Countdown()]), call("countdown", {"n": 3}))

    assert [text_of([c]) for c in chunks] == ["3", "2", "1", ""]
    assert_single_final(chunks, ToolResultState.SUCCESS)


async def test_coroutine_tool_returning_one_chunk() -> None:
    chunks = await collect(Toolkit([Lookup()]), call("lookup"))

    assert len(chunks) == 1
    assert text_of(chunks) == "found"
    assert_single_final(chunks, ToolResultState.SUCCESS)


async def test_empty_input_means_no_arguments() -> None:
    def ping() -> str:
        return "pong"

    chunks = await collect(Toolkit([ping]), call("ping", raw=""))

    assert text_of(chunks) == "pong"


async def test_unknown_tool() -> None:
    chunks = await collect(Toolkit([add, echo]), call("multiply", {"a": 1}))

    assert_single_final(chunks, ToolResultState.ERROR)
    assert text_of(chunks) == "Tool 'multiply' not found. Available tools: add, echo"


async def test_invalid_json() -> None:
    chunks = await collect(Toolkit([add]), call("add", raw='{"a": 1,'))

    assert_single_final(chunks, ToolResultState.ERROR)
    assert text_of(chunks).startswith("Invalid JSON arguments for tool 'add':")


@pytest.mark.parametrize(("raw", "kind"), [("[1, 2]", "list"), ('"hi"', "str"), ("3", "int")])
async def test_non_object_arguments(raw: str, kind: str) -> None:
    chunks = await collect(Toolkit([add]), call("add", raw=raw))

    assert_single_final(chunks, ToolResultState.ERROR)
    assert text_of(chunks) == f"Arguments for tool 'add' must be a JSON object, got {kind}"


async def test_argument_validation_error_is_a_result() -> None:
    chunks = await collect(Toolkit([add]), call("add", {"a": "x", "b": 1}))

    assert_single_final(chunks, ToolResultState.ERROR)
    assert '- a: expected integer, got string "x"' in text_of(chunks)


async def test_exception_from_a_custom_tool_is_a_result() -> None:
    chunks = await collect(Toolkit([Broken()]), call("broken"))

    assert [text_of([c]) for c in chunks] == ["partial", "ConnectionError: backend went away"]
    assert_single_final(chunks, ToolResultState.ERROR)


async def test_wrong_arguments_to_a_custom_tool_are_a_result() -> None:
    chunks = await collect(Toolkit([Countdown()]), call("countdown", {"m": 1}))

    # Checked against the schema before the call: no TypeError from the tool's signature.
    assert_single_final(chunks, ToolResultState.ERROR)
    assert "- n: missing required argument (expected integer)" in text_of(chunks)


async def test_external_tools_are_not_executed() -> None:
    class Approval(Countdown):
        name = "approval"
        is_external_tool = True

    with pytest.raises(ToolError, match="executed externally"):
        await collect(Toolkit([Approval()]), call("approval", {"n": 1}))
