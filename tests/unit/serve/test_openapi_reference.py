"""Troupe's API schema against AgentScope 2.0.11's recorded OpenAPI (tests/data/compat).

Every route both have must take the same request body fields (names; Troupe requires none that
AgentScope does not), the same query parameters, answer the same success status and return at
least AgentScope's response fields. AgentScope routes Troupe does not implement must be listed
below with the reason.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from serve.app import build_app
from tests.support import COMPAT_DIR

THEIRS: dict[str, Any] = json.loads((COMPAT_DIR / "agentscope-openapi.json").read_text())
OURS: dict[str, Any] = build_app(lambda: None).openapi()  # type: ignore[arg-type,return-value]

# AgentScope features Troupe leaves out on purpose (path prefix -> why).
NON_GOALS = {
    "/knowledge_bases": "knowledge bases / RAG are a non-goal",
    "/embedding-model/": "embedding models only serve knowledge bases",
    "/sop": "SOP workflows are a non-goal",
    "/channels": "chat-platform channels are a non-goal",
    "/realtime": "realtime voice is a non-goal",
    "/hub": "MCP and skill hubs are a non-goal",
}
# Routes and fields being added in parallel work (the web UI's needs, workspace files).
IN_PROGRESS = {}
IN_PROGRESS_FIELDS: dict[str, str] = {}

SHARED = sorted(
    (path, method)
    for path, methods in THEIRS["paths"].items()
    if path in OURS["paths"]
    for method in methods
    if method in OURS["paths"][path]
)


def resolve(doc: dict[str, Any], schema: dict[str, Any] | None) -> dict[str, Any]:
    """Follow `$ref`s and unwrap `anyOf [X, null]`."""
    schema = schema or {}
    while True:
        if "$ref" in schema:
            schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
        elif "anyOf" in schema:
            options = [s for s in schema["anyOf"] if s.get("type") != "null"]
            if len(options) != 1:
                return schema
            schema = options[0]
        else:
            return schema


def fields(doc: dict[str, Any], schema: dict[str, Any] | None) -> tuple[set[str], set[str]]:
    """(property names, required names) of an object schema (of the items of an array)."""
    schema = resolve(doc, schema)
    if schema.get("type") == "array":
        schema = resolve(doc, schema.get("items"))
    return set(schema.get("properties", {})), set(schema.get("required", []))


def body_schema(doc: dict[str, Any], operation: dict[str, Any]) -> dict[str, Any] | None:
    content = operation.get("requestBody", {}).get("content", {})
    return next((c.get("schema") for c in content.values()), None)


def success(operation: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    code, response = next((c, r) for c, r in operation["responses"].items() if c.startswith("2"))
    content = response.get("content", {})
    return code, next((c.get("schema") for c in content.values()), None)


def listed(path: str, table: dict[str, str]) -> bool:
    return any(path == prefix or path.startswith(prefix.rstrip("/") + "/") for prefix in table)


def test_every_agentscope_route_is_implemented_or_listed() -> None:
    missing = [
        f"{method.upper()} {path}"
        for path, methods in THEIRS["paths"].items()
        for method in methods
        if (path not in OURS["paths"] or method not in OURS["paths"][path])
        and not listed(path, NON_GOALS)
        and not listed(path, IN_PROGRESS)
    ]
    assert not missing, f"AgentScope routes neither implemented nor listed: {missing}"
    total = sum(len(m) for m in THEIRS["paths"].values())
    print(f"{len(SHARED)}/{total} AgentScope operations implemented")


def test_listed_non_goals_are_agentscope_routes() -> None:
    for prefix in [*NON_GOALS, *IN_PROGRESS]:
        assert any(listed(path, {prefix: ""}) for path in THEIRS["paths"]), prefix


@pytest.mark.parametrize(("path", "method"), SHARED, ids=lambda v: str(v))
def test_request_and_response_fields_match(path: str, method: str) -> None:
    theirs, ours = THEIRS["paths"][path][method], OURS["paths"][path][method]

    their_body, our_body = body_schema(THEIRS, theirs), body_schema(OURS, ours)
    assert (their_body is None) == (our_body is None), "one takes a body, the other not"
    if their_body is not None:
        their_props, their_required = fields(THEIRS, their_body)
        our_props, our_required = fields(OURS, our_body)
        assert their_props - set(IN_PROGRESS_FIELDS) <= our_props, "body fields missing"
        assert our_required <= their_required, "Troupe requires more body fields"

    their_query = {p["name"] for p in theirs.get("parameters", []) if p["in"] == "query"}
    our_query = {p["name"] for p in ours.get("parameters", []) if p["in"] == "query"}
    assert their_query <= our_query, "query parameters missing"

    their_code, their_response = success(theirs)
    our_code, our_response = success(ours)
    assert our_code == their_code
    their_props, _ = fields(THEIRS, their_response)
    our_props, _ = fields(OURS, our_response)
    assert their_props <= our_props, "response fields missing"
