"""A local HTTP server speaking the OpenAI Chat Completions wire protocol, driven by a script.

`GET /v1/models` lists one model (what a credential check calls). It listens on 127.0.0.1 in a
background thread, so anything that can open a socket (this test, a Ray actor in another
process) can call it::

    with OpenAIWireServer() as srv:
        srv.push(ScriptedReply(text="hi"), ScriptedReply(tool_calls=[("c1", "bash", {"c": 1})]))
        ...  # point an OpenAICredential at srv.base_url
        assert srv.requests[0].body["model"] == "gpt-test"
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.support.scripted_http import Answer, RecordedRequest
from tests.support.scripted_server import ScriptedServer

_ERROR_KINDS = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}
_PIECE = 4  # characters per streamed text/argument fragment


@dataclass
class ScriptedReply:
    """One scripted answer.

    Attributes:
        text: Assistant text (streamed in several pieces).
        tool_calls: `(call_id, name, arguments)` triples, streamed as parallel tool calls.
        status: HTTP status; anything but 200 answers OpenAI's error JSON.
        error_body: Error JSON to send instead of the default one.
        garbage: Answer 200 with an SSE frame that is not JSON.
        headers: Extra response headers (e.g. `retry-after`).
        delay: Seconds to wait before answering.
        chunk_delay: Seconds to wait between streamed frames.
        truncate: Drop the connection halfway through the stream.
        reasoning: Reasoning text, sent as `reasoning_content` before the answer.
        prompt_tokens: Reported usage.
        completion_tokens: Reported usage.
        cached_tokens: Reported usage (`prompt_tokens_details.cached_tokens`).
    """

    text: str = ""
    tool_calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    status: int = 200
    error_body: dict[str, Any] | None = None
    garbage: bool = False
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    chunk_delay: float = 0.0
    truncate: bool = False
    reasoning: str = ""
    prompt_tokens: int = 10
    completion_tokens: int = 5
    cached_tokens: int = 0


def _pieces(text: str) -> list[str]:
    return [text[i : i + _PIECE] for i in range(0, len(text), _PIECE)]


def _compact(payload: dict[str, Any]) -> str:
    return json.dumps(payload, separators=(",", ":"))


def _usage(reply: ScriptedReply) -> dict[str, Any]:
    return {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        "prompt_tokens_details": {"cached_tokens": reply.cached_tokens, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }


def stream_frames(reply: ScriptedReply, model: str, include_usage: bool) -> list[dict[str, Any]]:
    """Return the `chat.completion.chunk` objects OpenAI would stream for `reply`."""
    base = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_troupe",
    }

    def frame(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        extra = {"usage": None} if include_usage else {}
        return {**base, "choices": [choice], **extra}

    content: str | None = "" if reply.text or not reply.tool_calls else None
    frames = [frame({"role": "assistant", "content": content, "refusal": None})]
    frames += [frame({"reasoning_content": p}) for p in _pieces(reply.reasoning)]
    frames += [frame({"content": p}) for p in _pieces(reply.text)]
    for index, (call_id, name, arguments) in enumerate(reply.tool_calls):
        head = {"id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        frames.append(frame({"tool_calls": [{"index": index, **head}]}))
        frames += [
            frame({"tool_calls": [{"index": index, "function": {"arguments": p}}]})
            for p in _pieces(json.dumps(arguments))
        ]
    frames.append(frame({}, "tool_calls" if reply.tool_calls else "stop"))
    if include_usage:
        frames.append({**base, "choices": [], "usage": _usage(reply)})
    return frames


def completion_body(reply: ScriptedReply, model: str) -> dict[str, Any]:
    """Return the `chat.completion` object OpenAI would answer for `reply` without streaming."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None, "refusal": None}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for call_id, name, arguments in reply.tool_calls
        ]
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": _usage(reply),
    }


def error_body(status: int) -> dict[str, Any]:
    """Return the error JSON OpenAI sends with `status`."""
    kind, code = _ERROR_KINDS.get(status, ("server_error", None))
    message = f"Scripted HTTP {status} from the test server."
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _frames(reply: ScriptedReply, model: str, include_usage: bool) -> list[bytes]:
    if reply.garbage:
        events = ["this is not json {"]
    else:
        events = [_compact(f) for f in stream_frames(reply, model, include_usage)]
        events.append("[DONE]")
    if reply.truncate:
        events = events[: max(len(events) // 2, 1)]
    return [f"data: {event}\n\n".encode() for event in events]


def _paced(frames: list[bytes], delay: float) -> Iterator[bytes]:
    for i, frame in enumerate(frames):
        if i and delay:
            time.sleep(delay)
        yield frame


class OpenAIWireServer(ScriptedServer[ScriptedReply]):
    """A scripted OpenAI-compatible server on 127.0.0.1 (a free port), in a background thread.

    Replies come from the queue filled by `push`; when it is empty, from `reply_func` if given
    (called with the request body), else a plain `default_text` answer.
    """

    def __init__(
        self,
        default_text: str = "ok",
        reply_func: Callable[[dict[str, Any]], ScriptedReply] | None = None,
    ) -> None:
        super().__init__("openai-wire-server")
        self.default_text = default_text
        self.reply_func = reply_func

    @property
    def port(self) -> int:
        """The port listened on (the server must be started)."""
        return int(self._http.url.rsplit(":", 1)[1])

    @property
    def base_url(self) -> str:
        """The API root to use as an OpenAI `base_url`."""
        return f"{self._http.url}/v1"

    def _route(self, request: RecordedRequest, answer: Answer) -> None:
        path = request.path.rstrip("/")
        if request.method == "GET" and path == "/v1/models":
            model = {"id": "gpt-test", "object": "model", "created": 0, "owned_by": "troupe"}
            answer.json(200, {"object": "list", "data": [model]})
            return
        if request.method != "POST" or path != "/v1/chat/completions":
            answer.json(404, {"error": {"message": "Not found", "type": "invalid_request_error"}})
            return
        body = request.body
        reply = self._next_reply(body)
        if reply.delay:
            time.sleep(reply.delay)
        model = str(body.get("model", "unknown"))
        if reply.status != 200:
            answer.json(reply.status, reply.error_body or error_body(reply.status), reply.headers)
        elif not body.get("stream"):
            answer.json(200, completion_body(reply, model), reply.headers)
        else:
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            answer.stream(
                "text/event-stream; charset=utf-8",
                _paced(_frames(reply, model, include_usage), reply.chunk_delay),
                cut=reply.truncate,
                headers={"Cache-Control": "no-cache", **reply.headers},
            )

    def _default_reply(self, body: dict[str, Any]) -> ScriptedReply:
        if self.reply_func is not None:
            return self.reply_func(body)
        return ScriptedReply(text=self.default_text)
