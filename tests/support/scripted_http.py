"""A real HTTP/1.1 server on 127.0.0.1 answering from a script, for provider protocol servers.

It runs in a background thread, records every request and hands each one to a `route`
callback that answers through an `Answer`: a whole JSON body, or a chunked stream written in
exactly the byte pieces given (so tests choose where chunk boundaries fall), optionally cut off
without the closing chunk::

    def route(request: RecordedRequest, answer: Answer) -> None:
        answer.json(200, {"ok": True})

    with ScriptedHTTPServer(route) as srv:
        ...  # call f"{srv.url}/path"
"""

from __future__ import annotations

import json
import sys
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class RecordedRequest:
    """A request the server received (header names lower-cased)."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: dict[str, Any]


class Answer:
    """Writes one response of a `route` callback."""

    def __init__(self, handler: BaseHTTPRequestHandler) -> None:
        self._handler = handler

    def json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        """Answer `payload` as a whole JSON body."""
        data = json.dumps(payload, separators=(",", ":")).encode()
        self._head(status, "application/json; charset=UTF-8", {"Content-Length": str(len(data))})
        for name, value in (headers or {}).items():
            self._handler.send_header(name, value)
        self._handler.end_headers()
        self._handler.wfile.write(data)

    def stream(
        self,
        content_type: str,
        pieces: Iterable[bytes],
        cut: bool = False,
        headers: dict[str, str] | None = None,
        status: int = 200,
    ) -> None:
        """Answer with a chunked body, one HTTP chunk per piece.

        Args:
            content_type: The response's content type.
            pieces: The body, split where the test wants chunk boundaries.
            cut: Drop the connection after the pieces, without the closing chunk.
            headers: Extra response headers.
            status: The HTTP status.
        """
        self._head(status, content_type, {"Transfer-Encoding": "chunked", **(headers or {})})
        self._handler.end_headers()
        for piece in pieces:
            if piece:
                self._handler.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                self._handler.wfile.flush()
        if cut:
            self._handler.close_connection = True
            return
        self._handler.wfile.write(b"0\r\n\r\n")
        self._handler.wfile.flush()

    def _head(self, status: int, content_type: str, headers: dict[str, str]) -> None:
        self._handler.send_response(status)
        self._handler.send_header("Content-Type", content_type)
        for name, value in headers.items():
            self._handler.send_header(name, value)


Route = Callable[[RecordedRequest, Answer], None]


def split_body(events: list[bytes], split: int | None, cut_after: int | None) -> list[bytes]:
    """Return the HTTP chunks carrying `events`: one per event, or `split` bytes each.

    With `cut_after`, only that many bytes of the body are kept.
    """
    if split is None and cut_after is None:
        return events
    data = b"".join(events)[:cut_after]
    size = split or len(data) or 1
    return [data[i : i + size] for i in range(0, len(data), size)]


class _Server(ThreadingHTTPServer):
    # Idle keep-alive connections must not make stop() wait for their handler threads.
    block_on_close = False
    owner: ScriptedHTTPServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up mid-answer is part of what tests exercise, not a server fault.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = 30

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def _handle(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_raw": raw.decode(errors="replace")}
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        headers = {k.lower(): v for k, v in self.headers.items()}
        request = RecordedRequest(self.command, parts.path, query, headers, body)
        self.server.owner._record(request)
        self.server.owner.route(request, Answer(self))


class BackgroundServer(ABC):
    """A server running in a background thread while started, and around a `with` block."""

    @abstractmethod
    def start(self) -> Self:
        """Start listening (idempotent)."""

    @abstractmethod
    def stop(self) -> None:
        """Stop listening and close the socket."""

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class ScriptedHTTPServer(BackgroundServer):
    """An HTTP server on 127.0.0.1 (a free port) in a background thread, answering via `route`."""

    def __init__(self, route: Route, name: str = "scripted-http") -> None:
        self.route = route
        self.name = name
        self._lock = threading.Lock()
        self._received = threading.Condition(self._lock)
        self._requests: list[RecordedRequest] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """`http://127.0.0.1:<port>` (the server must be started)."""
        if self._server is None:
            raise RuntimeError("the server is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Block until at least `count` requests arrived; raise TimeoutError otherwise."""
        with self._received:
            if not self._received.wait_for(lambda: len(self._requests) >= count, timeout):
                raise TimeoutError(f"{len(self._requests)} of {count} requests arrived")
            return list(self._requests)

    def start(self) -> Self:
        """Start listening (idempotent)."""
        if self._server is None:
            server = _Server(("127.0.0.1", 0), _Handler)
            server.owner = self
            self._server = server
            self._thread = threading.Thread(
                target=server.serve_forever,
                # A short poll keeps stop() fast; shutdown waits for the loop's next poll.
                kwargs={"poll_interval": 0.05},
                name=self.name,
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and close the socket."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _record(self, request: RecordedRequest) -> None:
        with self._received:
            self._requests.append(request)
            self._received.notify_all()
