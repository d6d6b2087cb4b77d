"""Turning exceptions that end a reply into the UI-facing `ErrorInfo`."""

from __future__ import annotations

from agent_core.errors import ModelConnectionError, ModelHTTPError, ModelResponseError
from agent_core.message import ErrorInfo, ErrorType


def _http_error_type(status: int) -> ErrorType:
    if status in (401, 403):
        return ErrorType.AUTHENTICATION
    if status == 429:
        return ErrorType.RATE_LIMIT
    if 400 <= status < 500:
        return ErrorType.INVALID_REQUEST
    return ErrorType.UPSTREAM


def error_info(exc: BaseException) -> ErrorInfo:
    """Describe `exc` for the user who sees the failed reply."""
    match exc:
        case ModelHTTPError():
            return ErrorInfo(type=_http_error_type(exc.status), message=str(exc))
        case ModelConnectionError():
            return ErrorInfo(type=ErrorType.CONNECTION, message=str(exc) or repr(exc))
        case ModelResponseError():
            return ErrorInfo(type=ErrorType.UPSTREAM, message=str(exc) or repr(exc))
        case _:
            return ErrorInfo(type=ErrorType.INTERNAL, message=f"{type(exc).__name__}: {exc}")
