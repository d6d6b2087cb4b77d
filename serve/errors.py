"""One error body for every HTTP error: `{"detail": ..., "error": {"type", "message"}}`.

`detail` is what AgentScope's clients read: a string, or FastAPI's list of field errors for a
422. `error` is Troupe's typed form: `type` names the runtime error (`SessionNotFound`,
`SessionBusy`, ...), the validation failure (`ValidationError`) or, for plain HTTP errors, the
status (`NotFound`, `Unauthorized`, `MethodNotAllowed`, ...); `message` is readable text. A 500
also carries `request_id` (and the `X-Request-ID` header), logged with its traceback.

Runtime errors map to statuses here (a closed set); anything else is a logged 500.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from actors.client import (
    InvalidSkill,
    MCPExists,
    MCPUnavailable,
    PathForbidden,
    TooLarge,
    WorkspaceClosed,
    WorkspaceError,
    WorkspaceItemNotFound,
    WrongFileType,
)
from actors.errors import (
    InboxFull,
    InvalidDownloadToken,
    InvalidId,
    InvalidRequest,
    NotFound,
    RuntimeErrorBase,
    SessionUnavailable,
    StaleGeneration,
    StorageUnavailable,
)

log = logging.getLogger(__name__)

_STATUS: list[tuple[type[Exception], int]] = [
    (NotFound, 404),
    (InvalidId, 422),
    (InvalidRequest, 409),
    (InboxFull, 429),
    (StorageUnavailable, 503),
    (SessionUnavailable, 503),
    (StaleGeneration, 503),  # this process belongs to a server that a newer one replaced
    (InvalidDownloadToken, 401),
    (WorkspaceItemNotFound, 404),
    (PathForbidden, 403),
    (WrongFileType, 400),
    (TooLarge, 413),
    (MCPExists, 409),
    (MCPUnavailable, 400),
    (InvalidSkill, 400),
    (WorkspaceClosed, 503),  # evicted or shut down under the request; retrying opens it again
]


def error_response(
    status: int,
    kind: str,
    message: str,
    detail: Any = None,
    headers: Mapping[str, str] | None = None,
    request_id: str | None = None,
) -> JSONResponse:
    """The API's error body; `detail` defaults to `message`; `request_id` joins `error`."""
    retry = {"Retry-After": "1"} if status in (429, 503) else {}
    error = {"type": kind, "message": message}
    if request_id is not None:
        error["request_id"] = request_id
    return JSONResponse(
        status_code=status,
        content={"detail": message if detail is None else detail, "error": error},
        headers={**retry, **(headers or {})} or None,
    )


def status_kind(status: int) -> str:
    """The error type of a plain HTTP error: its reason phrase in CamelCase (`NotFound`)."""
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        return "HTTPError"
    return "".join(word.capitalize() for word in phrase.replace("-", " ").split())


async def _runtime_error(_: Request, exc: Exception) -> JSONResponse:
    for kind, status in _STATUS:
        if isinstance(exc, kind):
            return error_response(status, type(exc).__name__, str(exc))
    return await _internal_error(_, exc)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    if not isinstance(exc, StarletteHTTPException):
        return await _internal_error(request, exc)
    message = exc.detail if isinstance(exc.detail, str) else HTTPStatus(exc.status_code).phrase
    return error_response(
        exc.status_code, status_kind(exc.status_code), message, exc.detail, exc.headers
    )


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    # FastAPI's list form, minus the offending `input`: it may hold a secret (an API key).
    errors = exc.errors() if isinstance(exc, RequestValidationError) else []
    detail = [{k: v for k, v in e.items() if k != "input"} for e in errors]
    message = "; ".join(_describe(e) for e in detail) or "invalid request"
    return error_response(422, "ValidationError", message, jsonable_encoder(detail))


def _describe(error: Mapping[str, Any]) -> str:
    location = ".".join(str(part) for part in error.get("loc", ()))
    return f"{location}: {error.get('msg', 'invalid')}" if location else str(error.get("msg"))


async def _internal_error(request: Request, exc: Exception) -> JSONResponse:
    # The id ties the client's report to the logged traceback; the body shows nothing else.
    request_id = uuid.uuid4().hex
    log.error(
        "unhandled error in %s %s (request %s)",
        request.method,
        request.url.path,
        request_id,
        exc_info=exc,
    )
    return error_response(
        500,
        "InternalError",
        f"internal error (request {request_id})",
        headers={"X-Request-ID": request_id},
        request_id=request_id,
    )


def install_error_handlers(app: FastAPI) -> None:
    """Give every error of `app` the one error body (runtime, HTTP, validation, unhandled)."""
    app.add_exception_handler(RuntimeErrorBase, _runtime_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(WorkspaceError, _runtime_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(Exception, _internal_error)
