"""Errors raised by `TroupeClient`; each names what failed so a program can branch on its type."""

from __future__ import annotations


class TroupeClientError(Exception):
    """Root of every error the client raises."""


class ServerUnreachableError(TroupeClientError):
    """The server could not be reached (refused, timed out, or the connection broke)."""


class APIError(TroupeClientError):
    """The server answered with an HTTP error status.

    Attributes:
        status: The HTTP status.
        error_type: The server's `error.type` (`SessionNotFound`, `ValidationError`, ...).
        message: The server's readable message.
    """

    def __init__(self, status: int, error_type: str, message: str) -> None:
        super().__init__(status, error_type, message)
        self.status = status
        self.error_type = error_type
        self.message = message

    def __str__(self) -> str:
        return f"{self.message} (HTTP {self.status} {self.error_type})"


class NotFoundError(APIError):
    """The agent, session or credential does not exist (or belongs to another user): a 404."""
