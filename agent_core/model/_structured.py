"""Structured output: have the model hand over a JSON object that matches a schema.

The schema (a pydantic model class or a JSON schema dict) becomes the input schema of a tool
the model is forced to call, and the call's input is validated against it. An invalid answer
gets a repair round: the model sees its failed call answered by a tool result that says exactly
what was wrong, and is forced to call again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from jsonschema import SchemaError
from jsonschema.protocols import Validator
from jsonschema.validators import Draft202012Validator, validator_for
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from agent_core.deferred_model import DeferredModel
from agent_core.errors import StructuredOutputError
from agent_core.message import (
    AssistantMsg,
    Msg,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
    Usage,
    UserMsg,
)
from agent_core.model._response import ChatResponse
from agent_core.model.base import ChatModelBase, ToolSchema, collect_response

STRUCTURED_OUTPUT_TOOL_NAME = "generate_structured_output"
"""The tool the model is forced to call to hand over its structured output."""

StructuredModel = type[BaseModel] | Mapping[str, Any]
"""What a structured output must match: a pydantic model class or a JSON schema dict."""

_TOOL_DESCRIPTION = (
    "Hand over your answer: pass it as the arguments of this call, exactly as the parameters "
    "schema describes."
)
_MAX_SHOWN_INPUT = 120


class StructuredResponse(DeferredModel):
    """A validated structured output and what it took to get it."""

    model_config = ConfigDict(extra="forbid")

    content: dict[str, Any] = Field(description="The validated JSON object, matching the schema.")
    usage: Usage = Field(
        default_factory=Usage, description="Token usage summed over every model call it took."
    )
    repairs: int = Field(default=0, description="Repair rounds needed before it validated.")


class StructuredSchema:
    """A structured-output schema, ready to be offered as a tool and to validate answers.

    A pydantic model validates with pydantic (so defaults are filled in and values coerced,
    and the output is the model's JSON dump, by alias); a JSON schema dict validates with
    `jsonschema` (the draft its `$schema` names, 2020-12 by default) and the output is the
    answer as given.

    Args:
        structured_model: A pydantic model class or a JSON schema dict describing an object.

    Raises:
        ValueError: the JSON schema is invalid, or does not describe an object.
    """

    def __init__(self, structured_model: StructuredModel) -> None:
        self._model: type[BaseModel] | None = None
        self._validator: Validator | None = None
        if isinstance(structured_model, type):
            self._model = structured_model
            self.json_schema: dict[str, Any] = structured_model.model_json_schema()
            return
        schema = dict(structured_model)
        # Tool arguments are always a JSON object; any other schema could never validate.
        if schema.get("type", "object") != "object":
            raise ValueError("a structured-output schema must describe a JSON object")
        validator_class = validator_for(schema, default=Draft202012Validator)
        try:
            validator_class.check_schema(schema)
        except SchemaError as exc:
            raise ValueError(f"invalid JSON schema: {exc.message}") from exc
        self._validator = validator_class(schema)
        self.json_schema = schema

    def tool(self, name: str = STRUCTURED_OUTPUT_TOOL_NAME) -> ToolSchema:
        """Return the tool whose input is the structured output."""
        return ToolSchema(name=name, description=_TOOL_DESCRIPTION, parameters=self.json_schema)

    def validate(self, raw: str) -> dict[str, Any]:
        """Return the validated object encoded by `raw`, a tool call's JSON input.

        Raises:
            StructuredOutputError: `raw` is not a JSON object matching the schema; the message
                says what is wrong, in words meant for the model.
        """
        try:
            data = json.loads(raw or "{}")
        except json.JSONDecodeError as exc:
            raise StructuredOutputError(
                f"The arguments are not valid JSON: {exc}.", raw=raw
            ) from exc
        if not isinstance(data, dict):
            raise StructuredOutputError(
                f"The arguments must be a JSON object, not {type(data).__name__}.", raw=raw
            )
        if self._model is not None:
            try:
                return self._model.model_validate(data).model_dump(mode="json", by_alias=True)
            except ValidationError as exc:
                problems = [_pydantic_problem(error) for error in exc.errors()]
        else:
            assert self._validator is not None  # set whenever _model is not
            errors = sorted(self._validator.iter_errors(data), key=lambda e: e.json_path)
            problems = [f"{error.json_path}: {error.message}" for error in errors]
            if not problems:
                return data
        details = "\n".join(f"- {problem}" for problem in problems)
        raise StructuredOutputError(f"The arguments do not match the schema:\n{details}", raw=raw)


async def generate_structured_output(
    model: ChatModelBase,
    messages: Sequence[Msg],
    structured_model: StructuredModel,
    *,
    max_repairs: int = 1,
    tool_name: str = STRUCTURED_OUTPUT_TOOL_NAME,
    name: str = "assistant",
    forced: bool = True,
) -> StructuredResponse:
    """Have `model` answer `messages` with a JSON object matching `structured_model`.

    The model is offered only the structured-output tool and forced to call it (with
    `forced=False`, for providers that refuse a forced call while thinking, it is told to call it
    and the choice is left to it). When the
    answer is invalid (bad JSON, a schema violation, or no call of the tool), the failed answer
    and a tool result explaining what was wrong are appended and the call is forced again, up
    to `max_repairs` times. `messages` is not modified.

    Args:
        model: The model to ask.
        messages: The conversation, system prompt first.
        structured_model: A pydantic model class or a JSON schema dict describing an object.
        max_repairs: Repair rounds allowed after the first answer.
        tool_name: Name of the forced tool.
        name: Sender name of the assistant messages that record failed answers.
        forced: Force the tool call through the tool choice.

    Returns:
        The validated object (a dict, also for a pydantic model), with the summed usage.

    Raises:
        ValueError: `max_repairs` is negative, or the JSON schema is invalid.
        StructuredOutputError: no answer validated; the message says why the last one failed.
        ModelError: a model call failed.
    """
    if max_repairs < 0:
        raise ValueError("max_repairs must not be negative")
    schema = StructuredSchema(structured_model)
    tool = schema.tool(tool_name)
    prompt = list(messages)
    if not forced:
        prompt.append(UserMsg("user", f"Answer by calling {tool_name}."))
    usage = Usage()
    for attempt in range(max_repairs + 1):
        response = await collect_response(
            await model(prompt, [tool], tool_name if forced else "auto")
        )
        usage = _add_usage(usage, response.usage or Usage())
        call = next(
            (b for b in response.content if isinstance(b, ToolCallBlock) and b.name == tool_name),
            None,
        )
        try:
            if call is None:
                raise StructuredOutputError(
                    f"You did not call {tool_name}. Call it with your answer as its arguments."
                )
            content = schema.validate(call.input)
        except StructuredOutputError as exc:
            failure = exc
            prompt += _repair_messages(response, call, str(exc), tool_name, name)
            continue
        return StructuredResponse(content=content, usage=usage, repairs=attempt)
    attempts = max_repairs + 1
    raise StructuredOutputError(
        f"no valid structured output after {attempts} attempt(s); the last one failed: {failure}",
        attempts=attempts,
        raw=failure.raw,
    ) from failure


async def json_structured_output(
    model: ChatModelBase,
    messages: Sequence[Msg],
    structured_model: StructuredModel,
    request_fields: Callable[[dict[str, Any]], dict[str, Any]],
    *,
    max_repairs: int = 1,
    name: str = "assistant",
) -> StructuredResponse:
    """Have `model` answer `messages` with a JSON object as its text, in its native JSON mode.

    For providers that constrain output to a JSON schema but cannot force a tool call.
    `request_fields(schema)` gives the request fields that switch the mode on (e.g. Ollama's
    `{"format": schema}`). An invalid answer is appended with a user message saying what was
    wrong, and the model asked again, up to `max_repairs` times. `messages` is not modified.

    Raises:
        ValueError: `max_repairs` is negative, or the JSON schema is invalid.
        StructuredOutputError: no answer validated; the message says why the last one failed.
        ModelError: a model call failed.
    """
    if max_repairs < 0:
        raise ValueError("max_repairs must not be negative")
    schema = StructuredSchema(structured_model)
    fields = request_fields(schema.json_schema)
    prompt = list(messages)
    usage = Usage()
    for attempt in range(max_repairs + 1):
        response = await collect_response(await model(prompt, **fields))
        usage = _add_usage(usage, response.usage or Usage())
        text = "".join(b.text for b in response.content if isinstance(b, TextBlock)).strip()
        try:
            content = schema.validate(text)
        except StructuredOutputError as exc:
            failure = exc
            answer = [AssistantMsg(name, text)] if text else []
            problem = f"{exc}\nAnswer again with only the corrected JSON object."
            prompt += [*answer, UserMsg("user", problem)]
            continue
        return StructuredResponse(content=content, usage=usage, repairs=attempt)
    attempts = max_repairs + 1
    raise StructuredOutputError(
        f"no valid structured output after {attempts} attempt(s); the last one failed: {failure}",
        attempts=attempts,
        raw=failure.raw,
    ) from failure


def _repair_messages(
    response: ChatResponse,
    call: ToolCallBlock | None,
    problem: str,
    tool_name: str,
    name: str,
) -> list[Msg]:
    """The failed answer, with every call answered, plus what the model must fix."""
    results = [
        ToolResultBlock(
            id=block.id,
            name=block.name,
            output=(
                f"{problem}\nCall {tool_name} again with corrected arguments."
                if block is call
                else f"Not executed: only {tool_name} can be called now."
            ),
            state=ToolResultState.ERROR,
        )
        for block in response.content
        if isinstance(block, ToolCallBlock)
    ]
    answer = [AssistantMsg(name, [*response.content, *results])] if response.content else []
    # Without a call of the tool there is no tool result to carry the problem: say it as the user.
    return answer if call is not None else [*answer, UserMsg("user", problem)]


def _pydantic_problem(error: ErrorDetails) -> str:
    path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
    if error["type"] == "missing":
        return f"{path}: {error['msg']}"
    shown = json.dumps(error["input"], default=str)
    if len(shown) > _MAX_SHOWN_INPUT:
        shown = shown[:_MAX_SHOWN_INPUT] + "..."
    return f"{path}: {error['msg']} (got {shown})"


def _add_usage(total: Usage, more: Usage) -> Usage:
    return Usage(
        input_tokens=total.input_tokens + more.input_tokens,
        output_tokens=total.output_tokens + more.output_tokens,
        cache_input_tokens=total.cache_input_tokens + more.cache_input_tokens,
        cache_creation_input_tokens=(
            total.cache_creation_input_tokens + more.cache_creation_input_tokens
        ),
    )
