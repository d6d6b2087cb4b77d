"""Mapping runtime and workspace errors to HTTP: `{"detail": ..., "error": {"type", "message"}}`."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

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
    InvalidRequest,
    NotFound,
    RuntimeErrorBase,
    SessionUnavailable,
    StorageUnavailable,
)

log = logging.getLogger(__name__)

_STATUS: list[tuple[type[Exception], int]] = [
    (NotFound, 404),
    (InvalidRequest, 409),
    (InboxFull, 429),
    (StorageUnavailable, 503),
    (SessionUnavailable, 503),
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


def error_response(status: int, kind: str, message: str) -> JSONResponse:
    """The API's error body."""
    return JSONResponse(
        status_code=status,
        content={"detail": message, "error": {"type": kind, "message": message}},
        headers={"Retry-After": "1"} if status in (429, 503) else None,
    )


async def _mapped_error(_: Request, exc: Exception) -> JSONResponse:
    for kind, status in _STATUS:
        if isinstance(exc, kind):
            return error_response(status, type(exc).__name__, str(exc))
    log.error("unmapped %s", type(exc).__name__, exc_info=exc)
    return error_response(500, "InternalError", "internal error")


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    # FastAPI's list form, minus the offending `input`: it may hold a secret (an API key).
    errors = exc.errors() if isinstance(exc, RequestValidationError) else []
    detail = [{k: v for k, v in e.items() if k != "input"} for e in errors]
    return JSONResponse(status_code=422, content={"detail": jsonable_encoder(detail)})


def install_error_handlers(app: FastAPI) -> None:
    """Register the runtime and workspace error mapping and the secret-safe validation errors."""
    app.add_exception_handler(RuntimeErrorBase, _mapped_error)
    app.add_exception_handler(WorkspaceError, _mapped_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
