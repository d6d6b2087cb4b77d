"""`ProtocolMiddlewareBase`: ASGI middleware that rewrites the session stream into another protocol.

It watches every `text/event-stream` response (the session stream), reassembles its SSE
frames across body chunks, parses each `data:` payload back into an `AgentEvent` and replaces
it with what `_convert_to_protocol` returns. Comments (keep-alives) and payloads that are not
events pass through unchanged. Other responses are not touched.

One event may become several frames (a list) or none (None / an empty list). The frame's `id:`
goes on the last frame it became, and is dropped with a frame that became nothing, so a client
that reconnects with `Last-Event-ID` resumes where its protocol stream left off.

A pure ASGI middleware (not `BaseHTTPMiddleware`): the stream is rewritten as it flows, never
buffered whole, and every response gets its own converter (`_open_stream`), so a stateful
protocol never mixes two clients' streams.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent_core.event import AgentEvent, parse_event

Frames = dict[str, Any] | list[dict[str, Any]] | None
"""What one event converts to: a frame's payload, several, or nothing."""
Converter = Callable[[AgentEvent], Frames]

_SEPARATOR = b"\n\n"


class ProtocolMiddlewareBase(ABC):
    """Rewrites SSE frames of `AgentEvent`s into another protocol's frames.

    Subclasses implement `_convert_to_protocol`; one keeping state across a stream's events
    overrides `_open_stream` to return a fresh converter per response.

    Args:
        app: The ASGI application to wrap.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    @abstractmethod
    def _convert_to_protocol(self, event: AgentEvent) -> Frames:
        """Convert one event to the protocol's frame payload(s) (JSON-ready dicts).

        Args:
            event: The event read from the stream.

        Returns:
            A payload, a list of payloads, or None to drop the event.
        """

    def _open_stream(self) -> Converter:
        """The converter of one response's stream (default: `_convert_to_protocol`)."""
        return self._convert_to_protocol

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Run the app, rewriting its response if it is an event stream."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        stream: _FrameRewriter | None = None

        async def rewrite(message: Message) -> None:
            nonlocal stream
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                if headers.get("content-type", "").startswith("text/event-stream"):
                    stream = _FrameRewriter(self._open_stream())
                    del headers["content-length"]
            elif message["type"] == "http.response.body" and stream is not None:
                more = bool(message.get("more_body", False))
                body = stream.feed(message.get("body", b""), final=not more)
                message = {"type": "http.response.body", "body": body, "more_body": more}
            await send(message)

        await self.app(scope, receive, rewrite)


class _FrameRewriter:
    """Splits one response's bytes into SSE frames and converts each."""

    def __init__(self, convert: Converter) -> None:
        self._convert = convert
        self._pending = b""

    def feed(self, chunk: bytes, final: bool) -> bytes:
        """Return the rewritten frames completed by `chunk` (all that is left when `final`)."""
        self._pending += chunk
        *frames, self._pending = self._pending.split(_SEPARATOR)
        if final and self._pending:
            frames, self._pending = [*frames, self._pending], b""
        return b"".join(self._rewrite(frame) for frame in frames)

    def _rewrite(self, frame: bytes) -> bytes:
        lines = frame.decode().split("\n")
        data = [line.removeprefix("data:").removeprefix(" ") for line in lines if _is(line, "data")]
        if not data:
            return frame + _SEPARATOR
        try:
            event = parse_event("\n".join(data))
        except (ValidationError, ValueError):
            return frame + _SEPARATOR
        converted = self._convert(event)
        payloads = [converted] if isinstance(converted, dict) else list(converted or [])
        if not payloads:
            return b""
        others = [line for line in lines if not _is(line, "data") and not _is(line, "id")]
        ids = [line for line in lines if _is(line, "id")]
        out = []
        for index, payload in enumerate(payloads):
            last = index == len(payloads) - 1
            head = [*others, *ids] if last else others
            body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
            out.append("\n".join([*head, f"data: {body}"]))
        return "".join(f"{text}\n\n" for text in out).encode()


def _is(line: str, field: str) -> bool:
    return line == field or line.startswith(f"{field}:")
