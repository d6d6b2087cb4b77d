"""A real local HTTP server speaking the Gemini API's `generateContent` protocol, from a script.

It answers `POST /v1beta/models/{model}:generateContent` with one JSON body and
`POST /v1beta/models/{model}:streamGenerateContent?alt=sse` with Server-Sent Events, each a
`GenerateContentResponse` chunk, as Google's endpoint does (`\\r\\n\\r\\n`-separated events, usage
metadata on every chunk, the finish reason and final counts on the last one)::

    with GeminiWireServer(api_key="k") as srv:
        srv.push(GeminiReply([Thought("hmm"), Text("hi"), Call("bash", {"c": 1})]))
        ...  # point a GeminiCredential at srv.base_url
        assert srv.requests[0].body["contents"][0]["role"] == "user"
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from tests.support.scripted_http import Answer, RecordedRequest, split_body
from tests.support.scripted_server import ScriptedServer

_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


@dataclass
class Text:
    """An answer part of plain text (streamed in pieces)."""

    text: str
    signature: str | None = None


@dataclass
class Thought:
    """A thought-summary part (`thought: true`), streamed in pieces."""

    text: str
    signature: str | None = None


@dataclass
class Call:
    """A `functionCall` part; Gemini sends each call whole, in one chunk."""

    name: str
    args: dict[str, Any]
    id: str | None = None
    signature: str | None = None


Part = Text | Thought | Call


@dataclass
class GeminiReply:
    """One scripted answer.

    Attributes:
        parts: The answer's parts, in order.
        status: HTTP status; anything but 200 answers Google's error JSON.
        error_body: Error JSON to send instead of the default one for `status`.
        headers: Extra response headers.
        finish_reason: The candidate's `finishReason`.
        prompt_tokens: `usageMetadata.promptTokenCount`.
        output_tokens: `usageMetadata.candidatesTokenCount`.
        thoughts_tokens: `usageMetadata.thoughtsTokenCount` (omitted when 0).
        cached_tokens: `usageMetadata.cachedContentTokenCount` (omitted when 0).
        tool_use_prompt_tokens: `usageMetadata.toolUsePromptTokenCount` (omitted when 0).
        piece: Characters per streamed text or thought fragment.
        split: Bytes per HTTP chunk of a stream (None: one chunk per event).
        cut_after: Bytes of the stream sent before the connection is dropped.
        stream_error: An error object sent as a stream's last event instead of finishing.
        retry_delay: A 429's `RetryInfo.retryDelay`, e.g. "7s".
    """

    parts: list[Part] = field(default_factory=list)
    status: int = 200
    error_body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    finish_reason: str = "STOP"
    prompt_tokens: int = 10
    output_tokens: int = 5
    thoughts_tokens: int = 0
    cached_tokens: int = 0
    tool_use_prompt_tokens: int = 0
    piece: int = 4
    split: int | None = None
    cut_after: int | None = None
    stream_error: dict[str, Any] | None = None
    retry_delay: str | None = None


def part_json(part: Part, text: str | None = None) -> dict[str, Any]:
    """Return `part` (with `text` instead of its own, for a fragment) as Gemini's JSON part."""
    out: dict[str, Any]
    if isinstance(part, Call):
        call: dict[str, Any] = {"name": part.name, "args": part.args}
        if part.id is not None:
            call["id"] = part.id
        out = {"functionCall": call}
    else:
        out = {"text": part.text if text is None else text}
        if isinstance(part, Thought):
            out["thought"] = True
    if part.signature is not None:
        out["thoughtSignature"] = part.signature
    return out


def usage_json(reply: GeminiReply, final: bool = True) -> dict[str, Any]:
    """Return the `usageMetadata` of `reply` (before the last chunk: the prompt count only)."""
    usage: dict[str, Any] = {
        "promptTokenCount": reply.prompt_tokens,
        "totalTokenCount": reply.prompt_tokens,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": reply.prompt_tokens}],
    }
    if not final:
        return usage
    usage["candidatesTokenCount"] = reply.output_tokens
    usage["totalTokenCount"] += reply.output_tokens + reply.thoughts_tokens
    if reply.thoughts_tokens:
        usage["thoughtsTokenCount"] = reply.thoughts_tokens
    if reply.cached_tokens:
        usage["cachedContentTokenCount"] = reply.cached_tokens
    if reply.tool_use_prompt_tokens:
        usage["toolUsePromptTokenCount"] = reply.tool_use_prompt_tokens
        usage["totalTokenCount"] += reply.tool_use_prompt_tokens
    return usage


def _response(
    parts: list[dict[str, Any]], usage: dict[str, Any], model: str, response_id: str
) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"parts": parts, "role": "model"}, "index": 0}],
        "usageMetadata": usage,
        "modelVersion": model,
        "responseId": response_id,
    }


def stream_chunks(reply: GeminiReply, model: str) -> list[dict[str, Any]]:
    """Return the `GenerateContentResponse` chunks Gemini would stream for `reply`."""
    response_id = uuid.uuid4().hex[:22]
    fragments: list[dict[str, Any]] = []
    for part in reply.parts:
        if isinstance(part, Call):
            fragments.append(part_json(part))
            continue
        pieces = [part.text[i : i + reply.piece] for i in range(0, len(part.text), reply.piece)]
        for index, piece in enumerate(pieces or [""]):
            fragment = part_json(part, piece)
            # The signature comes with the part's last fragment.
            if index < len(pieces) - 1:
                fragment.pop("thoughtSignature", None)
            fragments.append(fragment)
    chunks = [_response([f], usage_json(reply, False), model, response_id) for f in fragments]
    if not chunks:
        chunks = [_response([{"text": ""}], usage_json(reply, False), model, response_id)]
    last = chunks[-1]
    last["candidates"][0]["finishReason"] = reply.finish_reason
    last["usageMetadata"] = usage_json(reply)
    return chunks


def whole_body(reply: GeminiReply, model: str) -> dict[str, Any]:
    """Return the `GenerateContentResponse` Gemini would answer for `reply` without streaming."""
    parts = [part_json(p) for p in reply.parts]
    body = _response(parts, usage_json(reply), model, uuid.uuid4().hex[:22])
    body["candidates"][0]["finishReason"] = reply.finish_reason
    return body


def error_body(status: int, message: str = "", retry_delay: str | None = None) -> dict[str, Any]:
    """Return the error JSON Google's API sends with `status`."""
    error: dict[str, Any] = {
        "code": status,
        "message": message or f"Scripted HTTP {status} from the test server.",
        "status": _STATUS_NAMES.get(status, "UNKNOWN"),
    }
    if retry_delay is not None:
        error["details"] = [
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay}
        ]
    return {"error": error}


def sse_events(reply: GeminiReply, model: str) -> list[bytes]:
    """Return the SSE events of a streamed `reply`, one `bytes` each."""
    events = [json.dumps(chunk, separators=(",", ":")) for chunk in stream_chunks(reply, model)]
    if reply.stream_error is not None:
        events = [*events[:-1], json.dumps(reply.stream_error)]
    return [f"data: {event}\r\n\r\n".encode() for event in events]


class GeminiWireServer(ScriptedServer[GeminiReply]):
    """A scripted Gemini API server on 127.0.0.1 (a free port), in a background thread.

    Replies come from the queue filled by `push`, else a plain `default_text` answer. With
    `api_key` set, a request without that `x-goog-api-key` header (or `key` query parameter) is
    answered as Google answers an invalid key: 400 `INVALID_ARGUMENT`, reason `API_KEY_INVALID`.
    """

    def __init__(self, api_key: str | None = None, default_text: str = "ok") -> None:
        super().__init__("gemini-wire-server")
        self.api_key = api_key
        self.default_text = default_text

    @property
    def root(self) -> str:
        """`http://127.0.0.1:<port>`, without the API version."""
        return self._http.url

    @property
    def base_url(self) -> str:
        """The API root to use as a Gemini `base_url` (`<root>/v1beta`)."""
        return f"{self._http.url}/v1beta"

    def _default_reply(self, body: dict[str, Any]) -> GeminiReply:
        return GeminiReply([Text(self.default_text)])

    def _route(self, request: RecordedRequest, answer: Answer) -> None:
        prefix = "/v1beta/models/"
        model, _, method = request.path.removeprefix(prefix).partition(":")
        if (
            request.method != "POST"
            or not request.path.startswith(prefix)
            or method not in ("generateContent", "streamGenerateContent")
        ):
            answer.json(404, error_body(404, f"{request.path} is not found."))
            return
        key = request.headers.get("x-goog-api-key") or request.query.get("key")
        if self.api_key is not None and key != self.api_key:
            body = error_body(400, "API key not valid. Please pass a valid API key.")
            body["error"]["details"] = [
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}
            ]
            answer.json(400, body)
            return
        if method == "streamGenerateContent" and request.query.get("alt") != "sse":
            answer.json(400, error_body(400, "Only alt=sse streams are scripted."))
            return
        reply = self._next_reply(request.body)
        if reply.status != 200:
            body = reply.error_body or error_body(reply.status, retry_delay=reply.retry_delay)
            answer.json(reply.status, body, reply.headers)
        elif method == "generateContent":
            answer.json(200, whole_body(reply, model), reply.headers)
        else:
            pieces = split_body(sse_events(reply, model), reply.split, reply.cut_after)
            cut = reply.cut_after is not None
            answer.stream("text/event-stream", pieces, cut=cut, headers=reply.headers)


def gemini_reply(spec: dict[str, Any]) -> GeminiReply:
    """Build a `GeminiReply` from its JSON form (what reference fixtures store).

    `parts` holds `["text", text, signature?]`, `["thought", text, signature?]` and
    `["call", name, args, id?, signature?]` lists; every other key is a `GeminiReply` field.
    """
    parts: list[Part] = []
    for kind, *fields in spec.get("parts", []):
        if kind == "text":
            parts.append(Text(*fields))
        elif kind == "thought":
            parts.append(Thought(*fields))
        elif kind == "call":
            parts.append(Call(*fields))
        else:
            raise ValueError(f"unknown part kind {kind!r}")
    return GeminiReply(parts=parts, **{k: v for k, v in spec.items() if k != "parts"})
