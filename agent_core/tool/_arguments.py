"""Checking a tool call's arguments against the tool's `input_schema` before the call.

Every tool the toolkit dispatches is checked here once, so a model that forgets an argument or
sends the wrong type reads which field is wrong and what was expected, instead of a Python
traceback from deep inside the tool.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # jsonschema (and its referencing and rpds dependencies) loads on the first tool call,
    # not with every process that merely imports the toolkit.
    from jsonschema import ValidationError as SchemaViolation
    from jsonschema.protocols import Validator

logger = logging.getLogger(__name__)

_MAX_SHOWN = 80
_JSON_TYPES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "boolean"),
    ((int, float), "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
    (type(None), "null"),
)


def argument_errors(
    tool_name: str, schema: Mapping[str, Any], arguments: Mapping[str, Any]
) -> str | None:
    """Check `arguments` against `schema`; describe what is wrong, or return None.

    A schema that is not valid JSON Schema (a broken MCP server's, say) checks nothing: the
    tool itself gets to judge the arguments.

    Args:
        tool_name: The tool, named in the message.
        schema: The tool's `input_schema`.
        arguments: The call's arguments, as the model sent them.

    Returns:
        None when the arguments fit; otherwise a message with one line per problem, naming the
        field and its expected shape, followed by the tool's whole signature.
    """
    if _plainly_valid(schema, arguments):
        return None
    validator = _validator(json.dumps(schema, default=str))
    if isinstance(validator, str):
        logger.warning("tool %r has an invalid input schema: %s", tool_name, validator)
        return None
    errors = sorted(validator.iter_errors(dict(arguments)), key=_order)
    if not errors:
        return None
    lines = [f"Invalid arguments for tool '{tool_name}':"]
    lines += [f"- {line}" for line in _lines(errors, schema)]
    lines.append(f"Expected arguments: {signature(schema)}")
    return "\n".join(lines)


_OBJECT_KEYS = frozenset(
    {"type", "properties", "required", "additionalProperties", "title", "description"}
)
_ANNOTATIONS = frozenset({"type", "description", "title", "default", "examples"})
_SCALARS: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def _plainly_valid(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> bool:
    """Whether `arguments` certainly fit `schema`, checked without a validator.

    Most tools take a few scalar arguments; for an object schema of scalar-typed properties
    (annotations aside) the check is a type test per argument, where a JSON Schema validator
    costs tens of microseconds. False when they do not fit, and whenever the schema says more
    than this reads: the validator then decides, and words the problems.
    """
    if schema.keys() - _OBJECT_KEYS or schema.get("type") != "object":
        return False
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(properties, dict) or not isinstance(required, list) or extra is not False:
        return False
    if any(name not in arguments for name in required):
        return False
    for name, value in arguments.items():
        prop = properties.get(name)
        if not isinstance(prop, dict) or prop.keys() - _ANNOTATIONS:
            return False
        kind = prop.get("type")
        kinds = _SCALARS.get(kind) if isinstance(kind, str) else None
        # Exact types: a bool is no JSON integer, and a validator may judge 1.0 either way.
        if kinds is None or type(value) not in kinds:
            return False
    return True


@functools.lru_cache(maxsize=512)
def _validator(schema_json: str) -> Validator | str:
    """The validator of a schema (given as JSON), or why the schema is invalid.

    Checking a schema costs far more than checking arguments against it, and a tool's schema is
    the same on every call, so each distinct schema is checked once.
    """
    from jsonschema import SchemaError
    from jsonschema.validators import validator_for

    schema = json.loads(schema_json)
    cls = validator_for(schema)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        return exc.message
    return cls(schema)


def drop_null_optionals(schema: Mapping[str, Any], arguments: dict[str, Any]) -> None:
    """Remove optional arguments sent as null where the schema does not allow null.

    Models often spell "not given" as an explicit null; for an optional argument that is what
    it means, so the tool sees its default rather than an error.
    """
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    for name in [n for n, v in arguments.items() if v is None and n not in required]:
        prop = properties.get(name)
        if not isinstance(prop, Mapping):
            continue
        probe = {"properties": {name: prop}, "$defs": schema.get("$defs", {})}
        from jsonschema import SchemaError
        from jsonschema.validators import validator_for

        try:
            allows_null = validator_for(schema)(probe).is_valid({name: None})
        except SchemaError:
            continue
        if not allows_null:
            del arguments[name]


def signature(schema: Mapping[str, Any]) -> str:
    """A one-line summary of an object schema: each property with its shape, required first."""
    properties: Mapping[str, Any] = schema.get("properties") or {}
    if not properties:
        return "none"
    required = set(schema.get("required") or ())
    ordered = sorted(properties, key=lambda name: name not in required)
    parts = []
    for name in ordered:
        flag = "required" if name in required else "optional"
        parts.append(f"{name} ({shape(properties[name], schema)}, {flag})")
    return ", ".join(parts)


def shape(prop: Any, root: Mapping[str, Any]) -> str:
    """How a property's schema reads to the model: `string`, `integer >= 1`, `one of [...]`."""
    if not isinstance(prop, Mapping):
        return "any value"
    ref = prop.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = (root.get("$defs") or {}).get(ref.removeprefix("#/$defs/"))
        if target is not None and target is not prop:
            return shape(target, root)
    if "enum" in prop:
        return "one of " + json.dumps(prop["enum"], ensure_ascii=False)
    if "const" in prop:
        return "exactly " + json.dumps(prop["const"], ensure_ascii=False)
    variants = prop.get("anyOf") or prop.get("oneOf")
    if isinstance(variants, list) and variants:
        return " or ".join(dict.fromkeys(shape(v, root) for v in variants))
    kind = prop.get("type")
    if isinstance(kind, list):
        text = " or ".join(str(k) for k in kind)
    elif isinstance(kind, str):
        text = kind
    else:
        return "any value"
    if kind == "array" and isinstance(prop.get("items"), Mapping):
        text = f"array of {shape(prop['items'], root)}"
    bounds = [
        f"{symbol} {prop[key]}"
        for key, symbol in (
            ("minimum", ">="),
            ("exclusiveMinimum", ">"),
            ("maximum", "<="),
            ("exclusiveMaximum", "<"),
        )
        if key in prop
    ]
    return f"{text} {' and '.join(bounds)}" if bounds else text


def _order(error: SchemaViolation) -> tuple[str, ...]:
    return tuple(str(part) for part in error.absolute_path)


def _lines(errors: Iterable[SchemaViolation], root: Mapping[str, Any]) -> list[str]:
    """One line per problem; a missing argument is reported once, whatever reported it."""
    lines: list[str] = []
    for error in errors:
        if error.validator == "required":
            instance: dict[str, Any] = error.instance if isinstance(error.instance, dict) else {}
            schema: Any = error.schema
            props = (schema.get("properties") if isinstance(schema, Mapping) else None) or {}
            required: Any = error.validator_value
            missing = [n for n in required if n not in instance]
            for name in missing:
                line = _missing(error, name, props.get(name), root)
                if line not in lines:
                    lines.append(line)
            continue
        line = _describe(error, root)
        if line not in lines:
            lines.append(line)
    return lines


def _missing(error: SchemaViolation, name: str, prop: Any, root: Mapping[str, Any]) -> str:
    prefix = ".".join(str(part) for part in error.absolute_path)
    where = f"{prefix}.{name}" if prefix else name
    return f"{where}: missing required argument (expected {shape(prop, root)})"


def _field(error: SchemaViolation) -> str:
    return ".".join(str(part) for part in error.absolute_path) or "(arguments)"


def _json_type(value: Any) -> str:
    for python_type, name in _JSON_TYPES:
        if isinstance(value, python_type):
            return "integer" if name == "number" and isinstance(value, int) else name
    return type(value).__name__


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def _describe(error: SchemaViolation, root: Mapping[str, Any]) -> str:
    """One line for one problem: the field, what was expected, what came."""
    if error.validator == "additionalProperties":
        return f"{_field(error)}: {error.message}"
    expected = shape(error.schema, root)
    got = f"{_json_type(error.instance)} {_shown(error.instance)}"
    if error.validator in {"type", "enum", "const", "anyOf", "oneOf"}:
        return f"{_field(error)}: expected {expected}, got {got}"
    return f"{_field(error)}: {error.message} (expected {expected})"
