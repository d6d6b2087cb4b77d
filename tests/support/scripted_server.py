"""`ScriptedServer`: what the provider protocol servers of the tests have in common.

A subclass speaks one protocol: `_route` answers a request (taking the next reply from
`_next_reply`) and `_default_reply` says what to answer once the queue `push` fills is empty.
The server listens on 127.0.0.1 (a free port) in a background thread.
"""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections import deque
from typing import Any, Generic, Self, TypeVar

from tests.support.scripted_http import (
    Answer,
    BackgroundServer,
    RecordedRequest,
    ScriptedHTTPServer,
)

R = TypeVar("R")


class ScriptedServer(BackgroundServer, Generic[R]):
    """Replies of type `R`, queued by `push` and served in order.

    Args:
        name: The server thread's name.
    """

    def __init__(self, name: str) -> None:
        self._lock = threading.Lock()
        self._script: deque[R] = deque()
        self._http = ScriptedHTTPServer(self._route, name=name)

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, oldest first."""
        return self._http.requests

    def push(self, *replies: R) -> None:
        """Queue replies, answered in order."""
        with self._lock:
            self._script.extend(replies)

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Block until at least `count` requests arrived; raise TimeoutError otherwise."""
        return self._http.wait_for_requests(count, timeout)

    def start(self) -> Self:
        """Start listening (idempotent)."""
        self._http.start()
        return self

    def stop(self) -> None:
        """Stop listening and close the socket."""
        self._http.stop()

    def _next_reply(self, body: dict[str, Any]) -> R:
        """The next queued reply, else `_default_reply(body)`."""
        with self._lock:
            if self._script:
                return self._script.popleft()
        return self._default_reply(body)

    @abstractmethod
    def _default_reply(self, body: dict[str, Any]) -> R:
        """The reply to a request (its JSON `body`) once the queue is empty."""

    @abstractmethod
    def _route(self, request: RecordedRequest, answer: Answer) -> None:
        """Answer one request."""
