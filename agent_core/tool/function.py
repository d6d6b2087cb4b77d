"""FunctionTool: turn a plain Python function into a tool.

The name comes from the function, the description from its Google-style docstring, and the
input schema from its signature and type hints (through a pydantic model, which also validates
each call's arguments).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import re
import typing
from collections.abc import AsyncGenerator, Callable
from typing import Any

import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from agent_core._trusted import trusted
from agent_core.errors import ToolError
from agent_core.message import DataBlock, DataOrText, TextBlock, ToolResultState
from agent_core.permission.types import PermissionBehavior, PermissionContext, PermissionDecision
from agent_core.tool.base import ToolBase, ToolChunk

_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters|"
    r"Returns?|Yields?|Raises?|Examples?|Notes?|Attributes|Warnings?|Todo|See Also|"
    r"References?|Methods)\s*:\s*$"
)
_ARG_SECTIONS = frozenset({"Args", "Arguments", "Parameters", "Params", "Keyword Args",
                           "Keyword Arguments", "Other Parameters"})  # fmt: skip
_ARG_LINE = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
# Keys whose values are data, not sub-schemas: never rewrite inside them.
_DATA_KEYS = frozenset({"default", "examples", "const", "enum"})
_DONE = object()
# The keyword argument the toolkit fills with the agent state for state-injected tools.
STATE_ARG = "_agent_state"
CALL_ID_ARG = "_tool_call_id"


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its description and its `Args:` descriptions.

    Args:
        doc: The docstring (raw or cleaned); None counts as empty.

    Returns:
        The summary and long description (every section removed), and a mapping from parameter
        name to its description.
    """
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    entry_indent: int | None = None
    current: str | None = None
    for line in lines:
        header = _SECTION.match(line)
        if header:
            section, entry_indent, current = header.group(1), None, None
            continue
        if section is None:
            description.append(line)
            continue
        if section not in _ARG_SECTIONS or not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if entry_indent is None:
            entry_indent = indent
        entry = _ARG_LINE.match(line.strip()) if indent <= entry_indent else None
        if entry:
            current = entry.group(1)
            args[current] = entry.group(2).strip()
        elif current is not None:
            args[current] = f"{args[current]} {line.strip()}".strip()
    return "\n".join(description).strip(), args


class _Recursive(Exception):
    """A `$ref` points back into itself, so the schema cannot be inlined."""


def _simplify(node: Any, defs: dict[str, Any] | None, stack: tuple[str, ...] = ()) -> Any:
    """Strip auto titles; with `defs`, also replace local `$ref`s by the definitions they name."""
    if isinstance(node, list):
        return [_simplify(item, defs, stack) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    ref = node.get("$ref")
    if defs is not None and isinstance(ref, str) and ref.startswith("#/$defs/"):
        key = ref.removeprefix("#/$defs/")
        if key in stack:
            raise _Recursive(key)
        out.update(_simplify(defs[key], defs, (*stack, key)))
        node = {k: v for k, v in node.items() if k != "$ref"}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue  # pydantic's auto titles only cost the model tokens
        out[key] = value if key in _DATA_KEYS else _simplify(value, defs, stack)
    return out


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's auto titles and inline `$defs` references (kept when recursive).

    Args:
        schema: A JSON schema as produced by pydantic.

    Returns:
        A new, self-contained schema; `$defs` remain only for recursive types.
    """
    body = {k: v for k, v in schema.items() if k != "$defs"}
    defs: dict[str, Any] = schema.get("$defs", {})
    try:
        result: dict[str, Any] = _simplify(body, defs)
    except _Recursive:
        result = _simplify(body, None)
        result["$defs"] = {k: _simplify(v, None) for k, v in defs.items()}
    return result


def _target(func: Callable[..., Any]) -> Any:
    """The function that carries the docstring, annotations and sync/async kind of `func`."""
    while isinstance(func, functools.partial):
        func = func.func
    if inspect.isroutine(func):
        return func
    return type(func).__call__  # a callable instance


def _default_name(func: Callable[..., Any]) -> str:
    while isinstance(func, functools.partial):
        func = func.func
    name = getattr(func, "__name__", None) if inspect.isroutine(func) else None
    return name or type(func).__name__


def _build_model(
    func: Callable[..., Any], tool_name: str, arg_docs: dict[str, str], *, skip: str | None = None
) -> tuple[type[BaseModel], list[tuple[str, str, bool]], bool]:
    """Build the argument model; return it, (field, param, positional_only) rows, and **kwargs.

    The parameter named `skip` (the injected agent state) is left out of the model.
    """
    try:
        signature = inspect.signature(func)
        hints = typing.get_type_hints(_target(func), include_extras=True)
    except (NameError, TypeError, ValueError) as exc:
        raise ToolError(f"cannot read the signature of tool {tool_name!r}: {exc}") from exc
    fields: dict[str, Any] = {}
    rows: list[tuple[str, str, bool]] = []
    var_keyword = False
    for index, param in enumerate(signature.parameters.values()):
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            continue
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            var_keyword = True
            continue
        if param.name == skip:
            continue
        # Internal field names avoid clashes with BaseModel attributes (`json`, `copy`, ...);
        # the alias is what the model sees and sends.
        field_name = f"arg{index}"
        extra: dict[str, Any] = {"alias": param.name}
        if param.name in arg_docs:
            extra["description"] = arg_docs[param.name]
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[field_name] = (hints.get(param.name, Any), Field(default, **extra))
        rows.append((field_name, param.name, param.kind is inspect.Parameter.POSITIONAL_ONLY))
    config = ConfigDict(extra="allow" if var_keyword else "forbid")
    try:
        model = create_model(f"{tool_name}_input", __config__=config, **fields)
        model.model_json_schema()
    except Exception as exc:
        raise ToolError(f"cannot build an input schema for tool {tool_name!r}: {exc}") from exc
    return model, rows, var_keyword


def to_content(value: Any) -> list[DataOrText]:
    """Turn a function's return value into tool output blocks.

    Args:
        value: A string (used as is), a text/data block or a list of them (passed through), or
            anything else (dumped as JSON).

    Returns:
        The output blocks.
    """
    if type(value) is str:  # a plain string needs no validation
        return [trusted(TextBlock, text=value)]
    if isinstance(value, str):
        return [TextBlock(text=value)]
    if isinstance(value, TextBlock | DataBlock):
        return [value]
    if (
        isinstance(value, list | tuple)
        and value
        and all(isinstance(item, TextBlock | DataBlock) for item in value)
    ):
        return list(value)
    text = pydantic_core.to_json(value, fallback=str).decode()
    return [TextBlock(text=text)]


def _error(text: str) -> ToolChunk:
    return ToolChunk(content=[TextBlock(text=text)], state=ToolResultState.ERROR, is_last=True)


def format_validation_error(tool_name: str, exc: ValidationError) -> str:
    """Describe invalid tool arguments to the model, one line per problem.

    Args:
        tool_name: The tool the arguments were for.
        exc: The validation failure.

    Returns:
        A short multi-line message naming each bad or missing argument.
    """
    lines = [f"Invalid arguments for tool '{tool_name}':"]
    for err in exc.errors(include_url=False):
        where = ".".join(str(part) for part in err["loc"]) or "(arguments)"
        if err["type"] == "missing":
            lines.append(f"- {where}: missing required argument")
        elif err["type"] == "extra_forbidden":
            lines.append(f"- {where}: unexpected argument")
        else:
            got = repr(err.get("input"))
            got = got if len(got) <= 80 else got[:77] + "..."
            lines.append(f"- {where}: {err['msg']} (got {got})")
    return "\n".join(lines)


class FunctionTool(ToolBase):
    """A tool backed by a plain function: sync or async, returning or generating its output.

    A returning function produces one final chunk from its return value; a generator function
    produces one chunk per yielded value, then a final SUCCESS chunk. Invalid arguments and
    exceptions raised by the function become a final ERROR chunk, never an exception.
    Sync functions (and each step of a sync generator) run in a worker thread.

    Every call asks for permission (`check_permissions` returns ASK) unless a rule or the mode
    decides otherwise; subclass `ToolBase` for custom permission logic.
    """

    def __init__(
        self,
        func: Callable[..., Any],
        name: str | None = None,
        description: str | None = None,
        *,
        is_concurrency_safe: bool = True,
        is_read_only: bool = False,
        is_state_injected: bool = False,
        timeout: float | None = None,
    ) -> None:
        """Wrap `func`.

        Args:
            func: The function to wrap.
            name: Tool name; defaults to the function's `__name__`.
            description: Tool description; defaults to the docstring without its sections.
            is_concurrency_safe: Whether parallel calls are safe.
            is_read_only: Whether the function has no side effects.
            is_state_injected: Whether `func` takes the agent state as its `_agent_state`
                keyword argument (hidden from the model, filled by the toolkit).
            timeout: Seconds a call may run; None means the runtime's default.

        Raises:
            ToolError: When `func` is not callable or its signature cannot become a schema.
        """
        if not callable(func):
            raise ToolError(f"FunctionTool needs a callable, got {type(func).__name__}")
        target = _target(func)
        doc = inspect.getdoc(target) or (None if inspect.isroutine(func) else inspect.getdoc(func))
        summary, arg_docs = parse_docstring(doc)
        self.func = func
        self.name = name or _default_name(func)
        self.description = summary if description is None else description
        self.is_concurrency_safe = is_concurrency_safe
        self.is_read_only = is_read_only
        self.is_state_injected = is_state_injected
        self.timeout = timeout
        self._model, self._rows, self._var_keyword = _build_model(
            func, self.name, arg_docs, skip=STATE_ARG if is_state_injected else None
        )
        self.input_schema = clean_schema(self._model.model_json_schema())
        self._is_async_gen = inspect.isasyncgenfunction(target)
        self._is_gen = inspect.isgeneratorfunction(target)
        self._is_async = inspect.iscoroutinefunction(target)

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        """Ask before every call: a plain function carries no permission logic of its own."""
        return PermissionDecision(
            behavior=PermissionBehavior.ASK,
            message=f"Function tool '{self.name}' needs confirmation before it runs.",
            reason="function_tool",
        )

    def _bind(self, kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        state = kwargs.pop(STATE_ARG, None)
        validated = self._model.model_validate(kwargs)
        args: list[Any] = []
        call_kwargs: dict[str, Any] = {}
        for field_name, param_name, positional_only in self._rows:
            value = getattr(validated, field_name)
            if positional_only:
                args.append(value)
            else:
                call_kwargs[param_name] = value
        if self._var_keyword and validated.model_extra:
            call_kwargs.update(validated.model_extra)
        if self.is_state_injected:
            call_kwargs[STATE_ARG] = state
        return args, call_kwargs

    async def __call__(self, *args: Any, **kwargs: Any) -> AsyncGenerator[ToolChunk, None]:
        """Validate the keyword arguments, run the function and stream its output.

        Args:
            *args: Unused; tools are always called with keyword arguments.
            **kwargs: The tool arguments, as sent by the model.

        Yields:
            Output chunks; the last one has `is_last=True` and state SUCCESS or ERROR.
        """
        try:
            call_args, call_kwargs = self._bind(kwargs)
        except ValidationError as exc:
            yield _error(format_validation_error(self.name, exc))
            return
        except Exception as exc:  # a custom validator failing in an unexpected way
            yield _error(f"{type(exc).__name__}: {exc}")
            return
        try:
            if self._is_async_gen:
                stream = self._iter_async(call_args, call_kwargs)
            elif self._is_gen:
                stream = self._iter_sync(call_args, call_kwargs)
            else:
                stream = self._iter_return(call_args, call_kwargs)
            async with contextlib.aclosing(stream):
                async for chunk in stream:
                    yield chunk
                    if chunk.is_final:
                        return
        except Exception as exc:
            yield _error(f"{type(exc).__name__}: {exc}")
            return
        yield ToolChunk(state=ToolResultState.SUCCESS, is_last=True)

    async def _iter_return(
        self, args: list[Any], kwargs: dict[str, Any]
    ) -> AsyncGenerator[ToolChunk, None]:
        if self._is_async:
            result = await self.func(*args, **kwargs)
        else:
            result = await asyncio.to_thread(self.func, *args, **kwargs)
            if inspect.isawaitable(result):  # e.g. a lambda returning a coroutine
                result = await result
        if isinstance(result, ToolChunk):
            if not result.is_final:
                result = result.model_copy(
                    update={"is_last": True, "state": ToolResultState.SUCCESS}
                )
            yield result
            return
        # Blocks `to_content` made or passed through, already valid.
        yield trusted(
            ToolChunk, content=to_content(result), state=ToolResultState.SUCCESS, is_last=True
        )

    async def _iter_async(
        self, args: list[Any], kwargs: dict[str, Any]
    ) -> AsyncGenerator[ToolChunk, None]:
        agen = self.func(*args, **kwargs)
        async with contextlib.aclosing(agen):
            async for item in agen:
                yield item if isinstance(item, ToolChunk) else ToolChunk(content=to_content(item))

    async def _iter_sync(
        self, args: list[Any], kwargs: dict[str, Any]
    ) -> AsyncGenerator[ToolChunk, None]:
        gen = self.func(*args, **kwargs)
        try:
            while (item := await asyncio.to_thread(next, gen, _DONE)) is not _DONE:
                yield item if isinstance(item, ToolChunk) else ToolChunk(content=to_content(item))
        finally:
            # After a cancellation the worker thread may still be inside the generator, in
            # which case it cannot be closed here; it is then finalized when collected.
            with contextlib.suppress(ValueError):
                gen.close()
