"""Every error of every route has one body: `detail` (AgentScope's) and `error: {type, message}`.

The routes are read from the app itself, so a route added later is covered by the identity and
malformed-input cases without touching this file.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from actors.client import InProcessDispatcher, RuntimeClient
from actors.settings import RuntimeSettings
from serve.app import build_app
from tests.unit.serve._service import Service

pytestmark = [pytest.mark.redis]

USER = {"X-User-ID": "alice"}


@dataclass(frozen=True)
class Operation:
    """One route and method, as the app's OpenAPI document describes it."""

    method: str
    path: str
    spec: dict[str, Any]

    def params(self, where: str, required: bool = False) -> list[str]:
        return [
            p["name"]
            for p in self.spec.get("parameters", [])
            if p["in"] == where and (p.get("required", False) or not required)
        ]

    @property
    def needs_user(self) -> bool:
        return bool(self.spec.get("security"))

    @property
    def has_body(self) -> bool:
        return "requestBody" in self.spec

    @property
    def url(self) -> str:
        return re.sub(r"\{[^}]+\}", "no-such-id", self.path)

    def __str__(self) -> str:
        return f"{self.method} {self.path}"


OPERATIONS = [
    Operation(method.upper(), path, spec)
    for path, methods in build_app(lambda: None).openapi()["paths"].items()  # type: ignore[arg-type,return-value]
    for method, spec in methods.items()
]
# A body each route accepts, so that the unknown id in its path is what fails.
VALID_BODIES: dict[str, Any] = {
    "PATCH /credential/{credential_id}": {"data": {"type": "openai_credential", "api_key": "k"}},
}


def assert_error_shape(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"detail", "error"}, body
    # A 500 also names the request, so a report can be matched with the logged traceback.
    assert set(body["error"]) == {"type", "message"} | ({"request_id"} if status == 500 else set())
    assert isinstance(body["error"]["type"], str)
    assert body["error"]["type"]
    assert isinstance(body["error"]["message"], str)
    assert body["error"]["message"]
    if status == 422:
        assert isinstance(body["detail"], list)
        assert all({"loc", "msg", "type"} <= set(item) for item in body["detail"])
    else:
        assert isinstance(body["detail"], str)
    return dict(body)


async def send(
    api: httpx.AsyncClient,
    op: Operation,
    headers: dict[str, str],
    params: dict[str, str] | None = None,
    body: Any = None,
) -> httpx.Response:
    json_body = body if body is not None else ({} if op.has_body else None)
    return await api.request(op.method, op.url, headers=headers, params=params, json=json_body)


@pytest.mark.parametrize("op", [op for op in OPERATIONS if op.needs_user], ids=str)
async def test_missing_and_empty_identity(service: Service, op: Operation) -> None:
    refused = {
        "detail": "X-User-ID is missing or empty",
        "error": {"type": "Unauthorized", "message": "X-User-ID is missing or empty"},
    }
    assert assert_error_shape(await send(service.api, op, {}), 401) == refused
    assert assert_error_shape(await send(service.api, op, {"X-User-ID": " "}), 401) == refused


@pytest.mark.parametrize(
    "op", [op for op in OPERATIONS if op.has_body or op.params("query", required=True)], ids=str
)
async def test_malformed_input(service: Service, op: Operation) -> None:
    # A JSON array where an object is expected, and no query parameters at all.
    body = [] if op.has_body else None
    response = await service.api.request(op.method, op.url, headers=USER, json=body)
    error = assert_error_shape(response, 422)
    assert error["error"]["type"] == "ValidationError"
    assert {item["loc"][0] for item in error["detail"]} <= {"body", "query"}
    # The message names each offending field, for clients that only read `error`.
    for item in error["detail"]:
        assert ".".join(map(str, item["loc"])) in error["error"]["message"]


@pytest.mark.parametrize(
    "op", [op for op in OPERATIONS if op.params("path") and op.needs_user], ids=str
)
async def test_unknown_ids_are_404(service: Service, op: Operation) -> None:
    params = dict.fromkeys(op.params("query", required=True), "no-such-id")
    response = await send(service.api, op, USER, params, VALID_BODIES.get(str(op)))
    error = assert_error_shape(response, 404)
    assert error["error"]["type"].endswith("NotFound")


async def test_unknown_path_and_method(service: Service) -> None:
    unknown = assert_error_shape(await service.api.get("/nowhere", headers=USER), 404)
    assert unknown["error"] == {"type": "NotFound", "message": "Not Found"}
    wrong = assert_error_shape(await service.api.put("/agent/", headers=USER), 405)
    assert wrong["error"]["type"] == "MethodNotAllowed"


async def test_typed_runtime_error_409(service: Service) -> None:
    agent = await service.api.post("/agent/", json={"name": "A"}, headers=USER)
    session = await service.api.post(
        "/sessions/", json={"agent_id": agent.json()["agent_id"]}, headers=USER
    )
    confirm = {"type": "USER_CONFIRM_RESULT", "reply_id": "r1", "confirm_results": []}
    body = {
        "agent_id": agent.json()["agent_id"],
        "session_id": session.json()["session_id"],
        "input": confirm,
    }
    error = assert_error_shape(await service.api.post("/chat/", json=body, headers=USER), 409)
    assert error["error"]["type"] == "NotAwaiting"
    assert error["detail"] == error["error"]["message"]


@pytest.fixture
async def failing_api(redis_url: str) -> AsyncIterator[httpx.AsyncClient]:
    settings = RuntimeSettings(redis_url=redis_url)
    app = build_app(lambda: RuntimeClient(settings, InProcessDispatcher(settings)))

    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError("secret internals")

    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            yield client


async def test_unhandled_error_is_a_500_without_internals(failing_api: httpx.AsyncClient) -> None:
    response = await failing_api.get("/boom")
    error = assert_error_shape(response, 500)
    request_id = error["error"]["request_id"]
    assert error["error"] == {
        "type": "InternalError",
        "message": f"internal error (request {request_id})",
        "request_id": request_id,
    }
    assert len(request_id) == 32
    assert response.headers["x-request-id"] == request_id
    assert "secret" not in response.text
