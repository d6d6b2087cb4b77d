"""The Gemini API wire format: tool declarations, and answers decoded into response blocks.

Gemini's `FunctionDeclaration.parameters` takes an OpenAPI-style subset of JSON Schema (upper-case
`type`, no `$ref`, `const`, `additionalProperties` or `null` type), so tool schemas are inlined
and rewritten into it. Gemini 3 models sign their function calls (`thoughtSignature`) and need
the signature back with the call in later turns; the call's block id carries it, as
`gemini_ts:<signature>`, which is also how AgentScope stores it.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from agent_core._gemini_formatter import SIGNATURE_PREFIX
from agent_core.message import Base64Source, DataBlock, TextBlock, ThinkingBlock, ToolCallBlock
from agent_core.model._http import ResponseDecoder
from agent_core.model._response import ChatUsage, ResponseBlock

_SCHEMA_KEYS = frozenset(
    {
        "anyOf",
        "default",
        "description",
        "enum",
        "example",
        "format",
        "items",
        "maxItems",
        "maxLength",
        "maxProperties",
        "maximum",
        "minItems",
        "minLength",
        "minProperties",
        "minimum",
        "nullable",
        "pattern",
        "properties",
        "propertyOrdering",
        "required",
        "title",
        "type",
    }
)
_MAX_REF_DEPTH = 32


def call_id_of(signature: str | None, call_id: str | None) -> str:
    """The block id of a function call: its signature (prefixed) if signed, else its own id."""
    if signature:
        return SIGNATURE_PREFIX + signature
    return call_id or f"call_{uuid.uuid4().hex[:24]}"


def gemini_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Return a JSON schema as a Gemini `Schema`: refs inlined, unsupported keywords rewritten.

    `const` becomes a one-value `enum`; a `null` alternative (`anyOf` or a type list) is
    dropped; a lone `null` type becomes `object`; keywords Gemini does not know are removed.

    Raises:
        ValueError: a `$ref` points outside the schema's `$defs`/`definitions`, or refs nest
            deeper than 32 levels (a recursive schema Gemini cannot express).
    """
    defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    converted: dict[str, Any] = _convert(schema, defs, 0)
    return converted


def _convert(node: Any, defs: dict[str, Any], depth: int) -> Any:
    if isinstance(node, list):
        return [_convert(item, defs, depth) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        node = {
            **_resolve(node["$ref"], defs, depth),
            **{k: v for k, v in node.items() if k != "$ref"},
        }
        depth += 1
    node = dict(node)
    if "const" in node:
        node.setdefault("enum", [node.pop("const")])
    kind = node.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        if len(kinds) > 1:
            node["anyOf"] = [{"type": k} for k in kinds]
            node.pop("type")
        else:
            node["type"] = kinds[0] if kinds else "object"
    elif kind == "null":
        node["type"] = "object"
    if isinstance(node.get("anyOf"), list):
        options = [
            o for o in node["anyOf"] if not (isinstance(o, dict) and o.get("type") == "null")
        ]
        if len(options) == 1:
            rest = {k: v for k, v in node.items() if k != "anyOf"}
            return _convert({**options[0], **rest}, defs, depth)
        node["anyOf"] = options
        if not options:
            node.pop("anyOf")
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key not in _SCHEMA_KEYS or (key == "default" and value is None):
            continue
        if key == "type" and isinstance(value, str):
            out[key] = value.upper()
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: _convert(sub, defs, depth) for name, sub in value.items()}
        elif key in ("items", "anyOf"):
            out[key] = _convert(value, defs, depth)
        else:
            out[key] = value
    return out


def _resolve(ref: Any, defs: dict[str, Any], depth: int) -> dict[str, Any]:
    if depth >= _MAX_REF_DEPTH:
        raise ValueError(f"tool schema refs nest deeper than {_MAX_REF_DEPTH} levels at {ref!r}")
    for prefix in ("#/$defs/", "#/definitions/"):
        if isinstance(ref, str) and ref.startswith(prefix) and ref[len(prefix) :] in defs:
            target = defs[ref[len(prefix) :]]
            if isinstance(target, dict):
                return target
    raise ValueError(f"tool schema ref {ref!r} does not point into its $defs")


def function_declarations(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return function-tool dicts as Gemini `functionDeclarations`.

    Raises:
        ValueError: a tool's parameter schema cannot be expressed (see `gemini_schema`); the
            message names the tool.
    """
    declarations = []
    for tool in tools:
        function = tool["function"]
        declaration: dict[str, Any] = {"name": function["name"]}
        if function.get("description"):
            declaration["description"] = function["description"]
        if "parameters" in function:
            try:
                declaration["parameters"] = gemini_schema(function["parameters"])
            except ValueError as exc:
                raise ValueError(f"tool {function['name']!r}: {exc}") from exc
        declarations.append(declaration)
    return declarations


class GeminiDecoder(ResponseDecoder):
    """Turns `GenerateContentResponse`s (streamed chunks or a whole answer) into blocks.

    Text and thought summaries keep one block id while they continue; a new block starts when
    the other kind (or a call) came in between. Each function call arrives whole. The answer is
    complete once a candidate states its `finishReason` (or the prompt was blocked).
    """

    ending = "a finishReason"

    def __init__(self) -> None:
        super().__init__()
        self.raw_usage: dict[str, Any] | None = None
        self.finish_reason: str | None = None
        self.block_reason: str | None = None

    def usage(self, seconds: float) -> ChatUsage | None:
        """The answer's usage (Gemini repeats it, growing, on every chunk: the last one wins)."""
        return None if self.raw_usage is None else parse_usage(self.raw_usage, seconds)

    def feed(self, payload: Any) -> list[ResponseBlock]:
        """Decode one response object.

        Raises:
            ValueError: the object is not a response (or is an error); the message says why.
        """
        payload, usage = self._chunk(payload, "responseId", "usageMetadata")
        if usage is not None:
            self.raw_usage = usage
        feedback = payload.get("promptFeedback") or {}
        if isinstance(feedback, dict) and feedback.get("blockReason"):
            self.block_reason = str(feedback["blockReason"])
            self.complete = True
        candidates = payload.get("candidates") or []
        if not isinstance(candidates, list):
            raise ValueError("`candidates` is not a list")
        out: list[ResponseBlock] = []
        for candidate in candidates[:1]:
            if candidate.get("finishReason"):
                self.finish_reason = str(candidate["finishReason"])
                self.complete = True
            parts = (candidate.get("content") or {}).get("parts") or []
            if not isinstance(parts, list):
                raise ValueError("`content.parts` is not a list")
            for part in parts:
                out.extend(self._part(part))
        return out

    def _part(self, part: dict[str, Any]) -> list[ResponseBlock]:
        if not isinstance(part, dict):
            raise ValueError("a part is not a JSON object")
        call = part.get("functionCall")
        if call is not None:
            self._last_kind = "tool_call"
            args = call.get("args") or {}
            if not isinstance(args, dict) or not isinstance(call.get("name"), str):
                raise ValueError("`functionCall` needs a `name` string and `args` object")
            block_id = call_id_of(part.get("thoughtSignature"), call.get("id"))
            return [
                ToolCallBlock(
                    id=block_id, name=call["name"], input=json.dumps(args, ensure_ascii=False)
                )
            ]
        inline = part.get("inlineData")
        if isinstance(inline, dict) and inline.get("data"):
            self._last_kind = "data"
            source = Base64Source(
                data=str(inline["data"]),
                media_type=str(inline.get("mimeType") or "application/octet-stream"),
            )
            return [DataBlock(source=source)]
        text = part.get("text")
        if not text:
            return []
        if part.get("thought"):
            return [ThinkingBlock(id=self._block_id("thinking"), thinking=str(text))]
        return [TextBlock(id=self._block_id("text"), text=str(text))]


def parse_usage(raw: dict[str, Any], seconds: float) -> ChatUsage:
    """Return Gemini's `usageMetadata` as `ChatUsage` of a call that took `seconds`.

    Tool-use prompt tokens count as input; thought tokens as output (both are billed so).
    """

    def count(name: str) -> int:
        return int(raw.get(name) or 0)

    return ChatUsage(
        input_tokens=count("promptTokenCount") + count("toolUsePromptTokenCount"),
        output_tokens=count("candidatesTokenCount") + count("thoughtsTokenCount"),
        cache_input_tokens=count("cachedContentTokenCount"),
        time=seconds,
        metadata=raw,
    )


_DELAY = re.compile(r"^(\d+(?:\.\d+)?)s$")


def retry_delay(body: str) -> float | None:
    """The wait a Google error body asks for (`RetryInfo.retryDelay`, e.g. "7s"), if any."""
    try:
        details = json.loads(body)["error"]["details"]
    except (ValueError, KeyError, TypeError):
        return None
    for detail in details if isinstance(details, list) else []:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
            match = _DELAY.match(str(detail.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None
