"""A real local HTTP server speaking Ollama's native `/api/chat` protocol, from a script.

Streaming answers are newline-delimited JSON (`application/x-ndjson`): one object per line, each
with a `message` fragment and `done: false`, then a `done: true` line carrying the counts
(`prompt_eval_count`, `eval_count`, durations in nanoseconds). Thinking arrives in
`message.thinking`, tool calls whole in `message.tool_calls` with arguments as a JSON object.
Errors are `{"error": "..."}`, as a status answer or as a line mid-stream::

    with OllamaWireServer() as srv:
        srv.push(OllamaReply(thinking="hmm", content="hi", tool_calls=[("bash", {"c": 1})]))
        ...  # point an OllamaCredential's host at srv.base_url
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tests.support.scripted_http import Answer, RecordedRequest, split_body
from tests.support.scripted_server import ScriptedServer

_CREATED_AT = "2026-01-01T00:00:00.000000Z"


@dataclass
class OllamaReply:
    """One scripted answer.

    Attributes:
        content: Answer text (streamed in pieces of `piece` characters).
        thinking: Thinking text, streamed before the answer.
        tool_calls: `(name, arguments)` pairs, sent together in one line.
        call_ids: Give tool calls ids (`call_<n>`), as recent Ollama versions do.
        status: HTTP status; anything but 200 answers `{"error": ...}`.
        error: The error message of a status answer or of `stream_error`.
        headers: Extra response headers.
        done_reason: The last line's `done_reason`.
        prompt_eval_count: Input tokens reported.
        eval_count: Output tokens reported.
        piece: Characters per streamed fragment.
        split: Bytes per HTTP chunk of a stream (None: one chunk per line).
        cut_after: Bytes of the stream sent before the connection is dropped.
        stream_error: Send `{"error": error}` as the stream's last line instead of finishing.
    """

    content: str = ""
    thinking: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    call_ids: bool = False
    status: int = 200
    error: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    done_reason: str = "stop"
    prompt_eval_count: int = 10
    eval_count: int = 5
    piece: int = 4
    split: int | None = None
    cut_after: int | None = None
    stream_error: bool = False


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _tool_calls(reply: OllamaReply) -> list[dict[str, Any]]:
    calls = []
    for index, (name, arguments) in enumerate(reply.tool_calls):
        call: dict[str, Any] = {"function": {"index": index, "name": name, "arguments": arguments}}
        if reply.call_ids:
            call = {"id": f"call_{index}", **call}
        calls.append(call)
    return calls


def _done_fields(reply: OllamaReply) -> dict[str, Any]:
    return {
        "done": True,
        "done_reason": reply.done_reason,
        "total_duration": 1_500_000_000,
        "load_duration": 20_000_000,
        "prompt_eval_count": reply.prompt_eval_count,
        "prompt_eval_duration": 100_000_000,
        "eval_count": reply.eval_count,
        "eval_duration": 1_000_000_000,
    }


def stream_lines(reply: OllamaReply, model: str) -> list[dict[str, Any]]:
    """Return the objects Ollama would stream, one per line, for `reply`."""

    def line(message: dict[str, Any]) -> dict[str, Any]:
        return {
            "model": model,
            "created_at": _CREATED_AT,
            "message": {"role": "assistant", "content": "", **message},
            "done": False,
        }

    lines = [line({"thinking": p}) for p in _pieces(reply.thinking, reply.piece)]
    lines += [line({"content": p}) for p in _pieces(reply.content, reply.piece)]
    if reply.tool_calls:
        lines.append(line({"tool_calls": _tool_calls(reply)}))
    if reply.stream_error:
        return [*lines, {"error": reply.error or "scripted stream error"}]
    done = line({})
    done.update(_done_fields(reply))
    return [*lines, done]


def whole_body(reply: OllamaReply, model: str) -> dict[str, Any]:
    """Return the object Ollama would answer for `reply` without streaming."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.thinking:
        message["thinking"] = reply.thinking
    if reply.tool_calls:
        message["tool_calls"] = _tool_calls(reply)
    return {"model": model, "created_at": _CREATED_AT, "message": message, **_done_fields(reply)}


class OllamaWireServer(ScriptedServer[OllamaReply]):
    """A scripted Ollama server on 127.0.0.1 (a free port), in a background thread.

    Replies come from the queue filled by `push`, else a plain `default_text` answer. With
    `api_key` set, requests need `Authorization: Bearer <api_key>` (as ollama.com does) and get
    401 `{"error": "unauthorized"}` otherwise.
    """

    def __init__(self, api_key: str | None = None, default_text: str = "ok") -> None:
        super().__init__("ollama-wire-server")
        self.api_key = api_key
        self.default_text = default_text

    @property
    def base_url(self) -> str:
        """The server's root, as an Ollama host."""
        return self._http.url

    def _default_reply(self, body: dict[str, Any]) -> OllamaReply:
        return OllamaReply(content=self.default_text)

    def _route(self, request: RecordedRequest, answer: Answer) -> None:
        if request.method != "POST" or request.path != "/api/chat":
            answer.json(404, {"error": "404 page not found"})
            return
        authorization = request.headers.get("authorization")
        if self.api_key is not None and authorization != f"Bearer {self.api_key}":
            answer.json(401, {"error": "unauthorized"})
            return
        model = str(request.body.get("model", ""))
        reply = self._next_reply(request.body)
        if reply.status != 200:
            message = reply.error or f"scripted HTTP {reply.status} from the test server"
            answer.json(reply.status, {"error": message}, reply.headers)
        # Ollama streams unless told not to.
        elif request.body.get("stream", True) is False:
            answer.json(200, whole_body(reply, model), reply.headers)
        else:
            events = [
                (json.dumps(obj, separators=(",", ":")) + "\n").encode()
                for obj in stream_lines(reply, model)
            ]
            pieces = split_body(events, reply.split, reply.cut_after)
            answer.stream(
                "application/x-ndjson",
                pieces,
                cut=reply.cut_after is not None,
                headers=reply.headers,
            )


def ollama_reply(spec: dict[str, Any]) -> OllamaReply:
    """Build an `OllamaReply` from its JSON form (what reference fixtures store)."""
    calls = [(name, arguments) for name, arguments in spec.get("tool_calls", [])]
    return OllamaReply(**{**spec, "tool_calls": calls})
