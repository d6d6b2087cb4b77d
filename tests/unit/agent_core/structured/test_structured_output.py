"""Structured output: a forced tool call, validated, repaired, or given up on with a typed error."""

from __future__ import annotations

import pickle
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from pydantic import BaseModel, Field

from agent_core.errors import ModelResponseError, StructuredOutputError
from agent_core.message import Msg, ToolCallBlock, ToolResultBlock, ToolResultState, UserMsg
from agent_core.model import ChatModelBase, ChatResponse, ToolChoice, ToolSchema
from agent_core.model._structured import (
    STRUCTURED_OUTPUT_TOOL_NAME,
    StructuredSchema,
    generate_structured_output,
)
from agent_core.testing import ScriptedChatModel, ScriptedResponse, ScriptedToolCall, ScriptStep

TOOL = STRUCTURED_OUTPUT_TOOL_NAME


class WeatherInfo(BaseModel):
    """The weather in a city."""

    city: str
    temperature: float
    unit: str = Field(default="celsius", alias="temperatureUnit")


WEATHER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "temperature": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["city", "temperature"],
    "additionalProperties": False,
}


class RecordingModel(ScriptedChatModel):
    """The scripted model, also recording the `tool_choice` of every call."""

    def __init__(self, script: Sequence[ScriptStep]) -> None:
        super().__init__(script)
        self.tool_choices: list[str | None] = []

    async def _call_api(
        self,
        model_name: str,
        messages: list[Msg],
        tools: list[dict[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> ChatResponse | AsyncIterator[ChatResponse]:
        self.tool_choices.append(tool_choice.mode if tool_choice else None)
        return await super()._call_api(model_name, messages, tools, tool_choice, **kwargs)


class RawArgsModel(ChatModelBase):
    """Calls the tool with raw argument strings (the scripted model always sends valid JSON)."""

    def __init__(self, *raw_args: str) -> None:
        super().__init__(credential=None, model="raw", stream=False)
        self._raw = list(raw_args)
        self.calls: list[list[Msg]] = []

    async def _call_api(
        self,
        model_name: str,
        messages: list[Msg],
        tools: list[dict[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> ChatResponse:
        self.calls.append(list(messages))
        call = ToolCallBlock(id=f"call_{len(self.calls)}", name=TOOL, input=self._raw.pop(0))
        return ChatResponse(content=[call])


def answer(**arguments: Any) -> ScriptedResponse:
    return ScriptedResponse(tool_calls=[ScriptedToolCall(TOOL, arguments)])


def question() -> list[Msg]:
    return [UserMsg("user", "What's the weather in Shanghai?")]


def repair_result(msg: Msg) -> ToolResultBlock:
    results = msg.get_content_blocks("tool_result")
    assert len(results) == 1
    return results[0]


async def test_pydantic_model_valid_first_time_forces_the_tool() -> None:
    model = RecordingModel([answer(city="Shanghai", temperature=21)])

    response = await generate_structured_output(model, question(), WeatherInfo)

    # A validated dict, by alias, defaults filled in and the int coerced to the declared float.
    assert response.content == {
        "city": "Shanghai",
        "temperature": 21.0,
        "temperatureUnit": "celsius",
    }
    assert isinstance(response.content["temperature"], float)
    assert response.repairs == 0
    assert model.tool_choices == [TOOL]
    assert model.tool_schemas == [
        [
            ToolSchema(
                name=TOOL,
                description=model.tool_schemas[0][0].description,
                parameters=WeatherInfo.model_json_schema(),
            )
        ]
    ]
    assert [m.get_text_content() for m in model.calls[0]] == ["What's the weather in Shanghai?"]
    assert response.usage.input_tokens > 0


async def test_dict_schema_valid_first_time_returns_the_answer_as_given() -> None:
    arguments = {"city": "Shanghai", "temperature": 21.5, "tags": ["humid"]}
    model = RecordingModel(
        [ScriptedResponse(tool_calls=[ScriptedToolCall("report_weather", arguments)])]
    )

    response = await generate_structured_output(
        model, question(), WEATHER_SCHEMA, tool_name="report_weather"
    )

    assert response.content == {"city": "Shanghai", "temperature": 21.5, "tags": ["humid"]}
    assert model.tool_choices == ["report_weather"]
    assert [t.name for t in model.tool_schemas[0]] == ["report_weather"]
    assert model.tool_schemas[0][0].parameters == WEATHER_SCHEMA


async def test_schema_violation_is_repaired_with_a_tool_result_saying_what_was_wrong() -> None:
    bad = ScriptedToolCall(TOOL, {"city": "Shanghai", "temperature": "warm"}, id="call_bad")
    model = RecordingModel(
        [ScriptedResponse(tool_calls=[bad]), answer(city="Shanghai", temperature=21.5)]
    )
    messages = question()

    response = await generate_structured_output(model, messages, WeatherInfo, name="weatherbot")

    assert response.content["temperature"] == 21.5
    assert response.repairs == 1
    assert model.tool_choices == [TOOL, TOOL]
    assert len(messages) == 1  # the caller's list is left alone
    failed = model.calls[1][-1]
    assert (failed.role, failed.name) == ("assistant", "weatherbot")
    [call] = failed.get_content_blocks("tool_call")
    assert (call.id, call.name) == ("call_bad", TOOL)
    result = repair_result(failed)
    assert (result.id, result.state) == ("call_bad", ToolResultState.ERROR)
    assert result.output_text() == (
        "The arguments do not match the schema:\n"
        "- $.temperature: Input should be a valid number, "
        'unable to parse string as a number (got "warm")\n'
        f"Call {TOOL} again with corrected arguments."
    )
    # Usage sums both calls (the scripted model counts 8 tokens per content block).
    assert response.usage.input_tokens == sum(
        sum(len(m.content) for m in call) * 8 for call in model.calls
    )


async def test_dict_schema_violations_are_all_listed() -> None:
    model = RecordingModel(
        [answer(temperature="warm", extra=1), answer(city="Shanghai", temperature=3)]
    )

    response = await generate_structured_output(model, question(), WEATHER_SCHEMA)

    assert response.content == {"city": "Shanghai", "temperature": 3}
    assert repair_result(model.calls[1][-1]).output_text() == (
        "The arguments do not match the schema:\n"
        "- $: 'city' is a required property\n"
        "- $: Additional properties are not allowed ('extra' was unexpected)\n"
        "- $.temperature: 'warm' is not of type 'number'\n"
        f"Call {TOOL} again with corrected arguments."
    )


async def test_bad_json_is_repaired() -> None:
    model = RawArgsModel('{"city": "Shang', '{"city": "Shanghai", "temperature": 20}')

    response = await generate_structured_output(model, question(), WEATHER_SCHEMA)

    assert response.content == {"city": "Shanghai", "temperature": 20}
    result = repair_result(model.calls[1][-1])
    assert result.output_text().startswith("The arguments are not valid JSON: Unterminated string")


async def test_answer_without_the_call_is_repaired_by_a_user_message() -> None:
    model = RecordingModel(["It is sunny, 21 degrees.", answer(city="Shanghai", temperature=21)])

    response = await generate_structured_output(model, question(), WeatherInfo)

    assert response.repairs == 1
    said, told = model.calls[1][-2:]
    assert (said.role, said.get_text_content()) == ("assistant", "It is sunny, 21 degrees.")
    assert (told.role, told.get_text_content()) == (
        "user",
        f"You did not call {TOOL}. Call it with your answer as its arguments.",
    )


async def test_other_tool_calls_are_answered_as_not_executed() -> None:
    model = RecordingModel(
        [
            ScriptedResponse(tool_calls=[ScriptedToolCall("bash", {"cmd": "curl wttr.in"})]),
            answer(city="Shanghai", temperature=21),
        ]
    )

    await generate_structured_output(model, question(), WeatherInfo)

    failed, told = model.calls[1][-2:]
    result = repair_result(failed)
    assert (result.name, result.state) == ("bash", ToolResultState.ERROR)
    assert result.output_text() == f"Not executed: only {TOOL} can be called now."
    assert told.role == "user"


async def test_gives_up_after_max_repairs_with_the_last_validation_message() -> None:
    model = RecordingModel([answer(city="Shanghai", temperature="warm")] * 3)

    with pytest.raises(StructuredOutputError) as caught:
        await generate_structured_output(model, question(), WEATHER_SCHEMA, max_repairs=2)

    error = caught.value
    assert len(model.calls) == 3
    assert model.tool_choices == [TOOL] * 3
    assert error.attempts == 3
    assert error.raw == '{"city": "Shanghai", "temperature": "warm"}'
    assert str(error) == (
        "no valid structured output after 3 attempt(s); the last one failed: "
        "The arguments do not match the schema:\n"
        "- $.temperature: 'warm' is not of type 'number'"
    )
    assert isinstance(error, ModelResponseError)
    # Every repair round shows the model all of its earlier failures.
    assert [len(call) for call in model.calls] == [1, 2, 3]
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.attempts, copy.raw) == (str(error), 3, error.raw)


async def test_no_repairs_fails_on_the_first_invalid_answer() -> None:
    model = RecordingModel(["no idea"])

    with pytest.raises(StructuredOutputError, match="after 1 attempt"):
        await generate_structured_output(model, question(), WeatherInfo, max_repairs=0)
    assert len(model.calls) == 1


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "array", "items": {"type": "string"}}, "must describe a JSON object"),
        ({"type": "object", "properties": {"a": {"type": "nope"}}}, "invalid JSON schema"),
    ],
)
async def test_unusable_schemas_are_rejected_before_calling_the_model(
    schema: dict[str, Any], message: str
) -> None:
    model = RecordingModel([])

    with pytest.raises(ValueError, match=message):
        await generate_structured_output(model, question(), schema)
    assert model.calls == []


def test_validate_rejects_non_objects_and_accepts_empty_input_for_optional_fields() -> None:
    schema = StructuredSchema({"type": "object", "properties": {"a": {"type": "string"}}})

    assert schema.validate("") == {}
    with pytest.raises(StructuredOutputError, match="must be a JSON object, not list"):
        schema.validate("[1, 2]")


def test_pydantic_schema_tool_carries_the_model_json_schema() -> None:
    tool = StructuredSchema(WeatherInfo).tool("report")

    assert tool.name == "report"
    assert tool.parameters == WeatherInfo.model_json_schema()
    assert tool.parameters["description"] == "The weather in a city."


async def test_the_model_method_follows_the_spec_call() -> None:
    from pydantic import BaseModel as _Base

    from agent_core.message import UserMsg
    from agent_core.testing import ScriptedChatModel, ScriptedResponse, ScriptedToolCall

    class City(_Base):
        name: str
        population: int

    call = ScriptedToolCall("generate_structured_output", {"name": "Paris", "population": 2100000})
    model = ScriptedChatModel([ScriptedResponse(tool_calls=[call])])
    response = await model.generate_structured_output(
        messages=[UserMsg("user", "Largest French city?")], structured_model=City
    )
    assert response.content == {"name": "Paris", "population": 2100000}
