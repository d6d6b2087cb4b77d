"""FunctionTool: schemas from signatures and docstrings, and running wrapped functions."""

from __future__ import annotations

import functools
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field, ValidationError

from agent_core.errors import ToolError
from agent_core.message import Base64Source, DataBlock, TextBlock, ToolResultState
from agent_core.model.base import ToolSchema
from agent_core.tool import FunctionTool, ToolChunk
from agent_core.tool.function import parse_docstring


class Point(BaseModel):
    x: int
    y: int = 0


class Node(BaseModel):
    value: int
    children: list[Node] = Field(default_factory=list)


async def run(tool: FunctionTool, **kwargs: Any) -> list[ToolChunk]:
    return [chunk async for chunk in tool(**kwargs)]


def text_of(chunks: list[ToolChunk]) -> str:
    return "".join(b.text for c in chunks for b in c.content if isinstance(b, TextBlock))


def get_weather(city: str, unit: str = "celsius") -> str:
    """Get the current weather for a city.

    Uses a fake backend, so the answer is always mild.

    Args:
        city: The city name to look up.
        unit: Temperature unit, either "celsius"
            or "fahrenheit".

    Returns:
        A sentence about the weather.
    """
    return f"The weather in {city} is 22 {unit}"


# --- schema ---------------------------------------------------------------------------------


def test_name_description_and_schema_from_the_function() -> None:
    tool = FunctionTool(get_weather)

    assert tool.name == "get_weather"
    assert tool.description == (
        "Get the current weather for a city.\n\nUses a fake backend, so the answer is always mild."
    )
    assert tool.input_schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city name to look up."},
            "unit": {
                "type": "string",
                "default": "celsius",
                "description": 'Temperature unit, either "celsius" or "fahrenheit".',
            },
        },
        "required": ["city"],
        "additionalProperties": False,
    }
    assert tool.schema() == ToolSchema(
        name="get_weather", description=tool.description, parameters=tool.input_schema
    )


def test_schema_types_for_common_annotations() -> None:
    def search(
        query: str,
        limit: int = 10,
        threshold: float = 0.5,
        exact: bool = False,
        tags: list[str] | None = None,
        mode: Literal["fast", "deep"] = "fast",
    ) -> str:
        return query

    props = FunctionTool(search).input_schema["properties"]

    assert props["query"] == {"type": "string"}
    assert props["limit"] == {"type": "integer", "default": 10}
    assert props["threshold"] == {"type": "number", "default": 0.5}
    assert props["exact"] == {"type": "boolean", "default": False}
    assert props["tags"] == {
        "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
        "default": None,
    }
    assert props["mode"] == {"type": "string", "enum": ["fast", "deep"], "default": "fast"}
    assert FunctionTool(search).input_schema["required"] == ["query"]


def test_pydantic_model_parameters_are_inlined_without_titles() -> None:
    def plot(point: Point, title: str = "chart") -> str:
        return title

    schema = FunctionTool(plot).input_schema

    assert "$defs" not in schema
    assert "title" not in schema
    assert schema["properties"]["point"] == {
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
        "required": ["x"],
    }
    # A parameter that happens to be called `title` survives the title stripping.
    assert schema["properties"]["title"] == {"type": "string", "default": "chart"}


def test_recursive_models_keep_their_definitions() -> None:
    def total(tree: Node) -> int:
        return tree.value

    schema = FunctionTool(total).input_schema

    assert schema["properties"]["tree"] == {"$ref": "#/$defs/Node"}
    assert schema["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}


def test_function_without_docstring_or_hints() -> None:
    def anything(value, flag=True):  # type: ignore[no-untyped-def]
        return value

    tool = FunctionTool(anything)

    assert tool.description == ""
    assert tool.input_schema["properties"] == {"value": {}, "flag": {"default": True}}
    assert tool.input_schema["required"] == ["value"]


def test_no_parameters() -> None:
    def ping() -> str:
        """Ping."""
        return "pong"

    schema = FunctionTool(ping).input_schema

    assert schema == {"type": "object", "properties": {}, "additionalProperties": False}


def test_overrides_and_flags() -> None:
    tool = FunctionTool(
        get_weather,
        name="weather",
        description="Weather lookup.",
        is_concurrency_safe=True,
        is_read_only=True,
        timeout=5.0,
    )

    assert (tool.name, tool.description) == ("weather", "Weather lookup.")
    assert (tool.is_concurrency_safe, tool.is_read_only, tool.timeout) == (True, True, 5.0)
    assert (tool.is_external_tool, tool.is_mcp, tool.is_state_injected) == (False, False, False)


def test_bound_methods_partials_and_callable_objects() -> None:
    class Greeter:
        """Greets people."""

        def greet(self, who: str) -> str:
            """Say hello."""
            return f"hello {who}"

        def __call__(self, who: str) -> str:
            return f"hi {who}"

    def scaled(value: int, factor: int) -> int:
        """Scale a value."""
        return value * factor

    method = FunctionTool(Greeter().greet)
    partial = FunctionTool(functools.partial(scaled, factor=3))
    instance = FunctionTool(Greeter())

    assert (method.name, method.description) == ("greet", "Say hello.")
    assert list(method.input_schema["properties"]) == ["who"]
    assert (partial.name, partial.description) == ("scaled", "Scale a value.")
    assert partial.input_schema["required"] == ["value"]
    assert (instance.name, instance.description) == ("Greeter", "Greets people.")


def test_parameter_names_that_shadow_pydantic_attributes() -> None:
    def export(json: bool, copy: int = 1, schema: str = "x") -> str:
        return f"{json} {copy} {schema}"

    tool = FunctionTool(export)

    assert list(tool.input_schema["properties"]) == ["json", "copy", "schema"]


async def test_shadowing_parameter_names_receive_their_values() -> None:
    def export(json: bool, copy: int = 1) -> str:
        return f"{json} {copy}"

    chunks = await run(FunctionTool(export), json=True, copy=2)

    assert text_of(chunks) == "True 2"


def test_unresolvable_annotation_raises_tool_error() -> None:
    def broken(x: DoesNotExist) -> None:  # type: ignore[name-defined]  # noqa: F821
        return None

    with pytest.raises(ToolError, match="broken"):
        FunctionTool(broken)


def test_non_callable_raises_tool_error() -> None:
    with pytest.raises(ToolError, match="callable"):
        FunctionTool(42)  # type: ignore[arg-type]


def test_parse_docstring_sections() -> None:
    summary, args = parse_docstring(
        """Do a thing.

        Args:
            a (int): First.
            *rest: The rest,
                spread over lines.
            **opts: Options.

        Raises:
            ValueError: never a parameter.
        """
    )

    assert summary == "Do a thing."
    assert args == {"a": "First.", "rest": "The rest, spread over lines.", "opts": "Options."}


# --- calling --------------------------------------------------------------------------------


async def test_sync_function_runs_in_a_worker_thread() -> None:
    seen: list[bool] = []

    def where() -> str:
        seen.append(threading.current_thread() is threading.main_thread())
        return "done"

    chunks = await run(FunctionTool(where))

    assert seen == [False]
    assert len(chunks) == 1
    assert chunks[0].is_last
    assert chunks[0].state is ToolResultState.SUCCESS
    assert text_of(chunks) == "done"


async def test_async_function() -> None:
    async def add(a: int, b: int = 1) -> int:
        return a + b

    chunks = await run(FunctionTool(add), a=2)

    assert [c.state for c in chunks] == [ToolResultState.SUCCESS]
    assert text_of(chunks) == "3"


async def test_arguments_are_coerced_into_models() -> None:
    def norm(point: Point) -> str:
        assert isinstance(point, Point)
        return f"{point.x},{point.y}"

    chunks = await run(FunctionTool(norm), point={"x": 3})

    assert text_of(chunks) == "3,0"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": [1, 2]}, '{"a":[1,2]}'),
        (Point(x=1), '{"x":1,"y":0}'),
        (None, "null"),
        ("plain", "plain"),
    ],
)
async def test_return_values_become_text(value: Any, expected: str) -> None:
    def give() -> Any:
        return value

    assert text_of(await run(FunctionTool(give))) == expected


async def test_blocks_and_chunks_pass_through() -> None:
    image = DataBlock(source=Base64Source(data="AAAA", media_type="image/png"))
    blocks: list[TextBlock | DataBlock] = [TextBlock(text="caption"), image]

    def blocks_out() -> list[TextBlock | DataBlock]:
        return blocks

    def chunk_out() -> ToolChunk:
        return ToolChunk(content=[TextBlock(text="x")], metadata={"k": 1})

    (from_blocks,) = await run(FunctionTool(blocks_out))
    (from_chunk,) = await run(FunctionTool(chunk_out))

    assert from_blocks.content == blocks
    assert from_chunk.metadata == {"k": 1}
    assert from_chunk.is_last
    assert from_chunk.state is ToolResultState.SUCCESS


async def test_sync_generator_yields_one_chunk_per_item() -> None:
    def count(n: int) -> Iterator[str]:
        for i in range(n):
            yield f"line {i}\n"

    chunks = await run(FunctionTool(count), n=3)

    assert [text_of([c]) for c in chunks] == ["line 0\n", "line 1\n", "line 2\n", ""]
    assert [c.state for c in chunks[:-1]] == [ToolResultState.RUNNING] * 3
    assert not any(c.is_last for c in chunks[:-1])
    assert chunks[-1].is_last
    assert chunks[-1].state is ToolResultState.SUCCESS


async def test_async_generator_can_end_with_its_own_final_chunk() -> None:
    async def stream() -> AsyncIterator[str | ToolChunk]:
        yield "partial"
        yield ToolChunk(content=[TextBlock(text="bad")], state=ToolResultState.ERROR, is_last=True)
        yield "never seen"

    chunks = await run(FunctionTool(stream))

    assert [text_of([c]) for c in chunks] == ["partial", "bad"]
    assert chunks[-1].state is ToolResultState.ERROR


async def test_missing_argument_is_an_error_chunk() -> None:
    chunks = await run(FunctionTool(get_weather), unit="kelvin")

    assert len(chunks) == 1
    assert chunks[0].state is ToolResultState.ERROR
    assert chunks[0].is_last
    assert "Invalid arguments for tool 'get_weather'" in text_of(chunks)
    assert "city: missing required argument" in text_of(chunks)


async def test_wrong_type_and_unknown_argument_are_named() -> None:
    def repeat(text: str, times: int) -> str:
        return text * times

    chunks = await run(FunctionTool(repeat), text="a", times="many", colour="red")
    message = text_of(chunks)

    assert chunks[-1].state is ToolResultState.ERROR
    assert "times: Input should be a valid integer" in message
    assert "'many'" in message
    assert "colour: unexpected argument" in message


async def test_bad_literal_value_is_reported() -> None:
    def pick(mode: Literal["fast", "deep"]) -> str:
        return mode

    chunks = await run(FunctionTool(pick), mode="slow")

    assert chunks[-1].state is ToolResultState.ERROR
    assert "mode: Input should be 'fast' or 'deep'" in text_of(chunks)


async def test_var_keyword_functions_receive_extra_arguments() -> None:
    def collect(first: str, **rest: Any) -> dict[str, Any]:
        return {"first": first, **rest}

    tool = FunctionTool(collect)
    chunks = await run(tool, first="a", other=2)

    assert "rest" not in tool.input_schema["properties"]
    assert text_of(chunks) == '{"first":"a","other":2}'


async def test_exception_becomes_error_chunk() -> None:
    async def explode(path: str) -> str:
        raise FileNotFoundError(f"no such file: {path}")

    chunks = await run(FunctionTool(explode), path="/x")

    assert len(chunks) == 1
    assert chunks[0].state is ToolResultState.ERROR
    assert chunks[0].is_last
    assert text_of(chunks) == "FileNotFoundError: no such file: /x"


async def test_exception_mid_generator_keeps_earlier_output() -> None:
    def lines() -> Iterator[str]:
        yield "first"
        raise RuntimeError("disk gone")

    chunks = await run(FunctionTool(lines))

    assert [text_of([c]) for c in chunks] == ["first", "RuntimeError: disk gone"]
    assert chunks[-1].state is ToolResultState.ERROR


async def test_consumer_stopping_early_closes_the_generator() -> None:
    closed: list[bool] = []

    async def forever() -> AsyncIterator[str]:
        try:
            while True:
                yield "tick"
        finally:
            closed.append(True)

    stream = FunctionTool(forever)()
    first = await anext(stream)
    await stream.aclose()

    assert text_of([first]) == "tick"
    assert closed == [True]


def test_tool_chunk_defaults() -> None:
    chunk = ToolChunk()

    assert (chunk.content, chunk.state, chunk.metadata, chunk.is_last) == (
        [],
        ToolResultState.RUNNING,
        {},
        False,
    )
    assert not chunk.is_final
    assert ToolChunk(state=ToolResultState.ERROR).is_final
    with pytest.raises(ValidationError):
        ToolChunk(unknown=1)  # type: ignore[call-arg]
