"""Scripted answers (status, headers, body bytes) from the shared scripted HTTP server.

Provider protocols (Anthropic Messages, OpenAI Responses) are built as SSE event lists by the
helpers below and sent in byte chunks of a chosen size, so events split at awkward places::

    with WireServer() as srv:
        srv.push(Answer(body=sse(anthropic_events(text="hi")), piece=7))
        ...  # point a credential at srv.base_url
        assert srv.requests[0].body["model"] == "claude-test"
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tests.support.openai_server import ScriptedReply
from tests.support.scripted_http import Answer as Writer
from tests.support.scripted_http import RecordedRequest
from tests.support.scripted_server import ScriptedServer


@dataclass
class Answer:
    """One scripted answer.

    Attributes:
        body: Bytes of the body (`sse(...)` for a stream, `json.dumps(...)` for a whole one).
        status: HTTP status.
        headers: Extra headers (e.g. `retry-after`).
        piece: Bytes per written chunk (small values split events, lines, UTF-8 sequences).
        cut: Drop the connection after this fraction of the body (None: send it all).
    """

    body: bytes
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    piece: int = 1 << 16
    cut: float | None = None


def sse(events: list[dict[str, Any]], done: bool = False) -> bytes:
    """Encode events as SSE frames (`event:` named by their `type`), `data: [DONE]` if asked."""
    frames = [
        f"event: {e.get('type', 'message')}\ndata: {json.dumps(e, ensure_ascii=False)}\n\n"
        for e in events
    ]
    if done:
        frames.append("data: [DONE]\n\n")
    return "".join(frames).encode()


class WireServer(ScriptedServer[Answer]):
    """Scripted answers, served in order from 127.0.0.1 in a background thread."""

    def __init__(self) -> None:
        super().__init__("wire-server")

    @property
    def base_url(self) -> str:
        """The server's root URL."""
        return self._http.url

    def _default_reply(self, body: dict[str, Any]) -> Answer:
        raise IndexError("no scripted answer is left")

    def _route(self, request: RecordedRequest, writer: Writer) -> None:
        answer = self._next_reply(request.body)
        body = answer.body
        if answer.cut is not None:
            body = body[: int(len(body) * answer.cut)]
        stream = answer.body.startswith((b"event:", b"data:"))
        writer.stream(
            "text/event-stream" if stream else "application/json",
            [body[i : i + answer.piece] for i in range(0, len(body), answer.piece)],
            cut=answer.cut is not None,
            headers=answer.headers,
            status=answer.status,
        )


def _split(text: str, size: int = 3) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def anthropic_events(
    text: str = "",
    thinking: str = "",
    signature: str = "sig-abc",
    redacted: str | None = None,
    tool_calls: list[tuple[str, str, dict[str, Any]]] | None = None,
    usage: dict[str, int] | None = None,
    stop: bool = True,
) -> list[dict[str, Any]]:
    """The Messages API stream events for an answer: thinking, text, then tool uses."""
    usage = usage or {"input_tokens": 12, "output_tokens": 1}
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_01",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "claude-test",
                "stop_reason": None,
                "usage": {k: v for k, v in usage.items() if k != "output_tokens"}
                | {"output_tokens": 1},
            },
        },
        {"type": "ping"},
    ]
    index = 0

    def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        events.extend({"type": "content_block_delta", "index": index, "delta": d} for d in deltas)
        events.append({"type": "content_block_stop", "index": index})
        index += 1

    if thinking:
        deltas = [{"type": "thinking_delta", "thinking": p} for p in _split(thinking)]
        block(
            {"type": "thinking", "thinking": "", "signature": ""},
            [*deltas, {"type": "signature_delta", "signature": signature}],
        )
    if redacted is not None:
        block({"type": "redacted_thinking", "data": redacted}, [])
    if text:
        block(
            {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in _split(text)]
        )
    for call_id, name, arguments in tool_calls or []:
        raw = json.dumps(arguments)
        block(
            {"type": "tool_use", "id": call_id, "name": name, "input": {}},
            [{"type": "input_json_delta", "partial_json": p} for p in ["", *_split(raw, 5)]],
        )
    reason = "tool_use" if tool_calls else "end_turn"
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": None},
            "usage": {"output_tokens": usage.get("output_tokens", 1)},
        }
    )
    if stop:
        events.append({"type": "message_stop"})
    return events


def anthropic_error(status: int) -> bytes:
    """Anthropic's error JSON for a status."""
    kinds = {
        400: "invalid_request_error",
        401: "authentication_error",
        429: "rate_limit_error",
        500: "api_error",
        529: "overloaded_error",
    }
    error = {"type": kinds.get(status, "api_error"), "message": f"Scripted {status}"}
    return json.dumps({"type": "error", "error": error}).encode()


def responses_events(
    text: str = "",
    summary: str = "",
    encrypted: str | None = None,
    tool_calls: list[tuple[str, str, dict[str, Any]]] | None = None,
    usage: dict[str, Any] | None = None,
    complete: bool = True,
) -> list[dict[str, Any]]:
    """The Responses API stream events for an answer: reasoning, message, function calls."""
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}
    ]
    if summary:
        item = {"type": "reasoning", "id": "rs_1", "summary": []}
        events.append({"type": "response.output_item.added", "output_index": 0, "item": item})
        events += [
            {
                "type": "response.reasoning_summary_text.delta",
                "item_id": "rs_1",
                "summary_index": 0,
                "delta": p,
            }
            for p in _split(summary)
        ]
        done = {**item, "summary": [{"type": "summary_text", "text": summary}]}
        if encrypted is not None:
            done["encrypted_content"] = encrypted
        events.append({"type": "response.output_item.done", "output_index": 0, "item": done})
    if text:
        item = {"type": "message", "id": "msg_1", "role": "assistant", "content": []}
        events.append({"type": "response.output_item.added", "output_index": 1, "item": item})
        events += [
            {
                "type": "response.output_text.delta",
                "item_id": "msg_1",
                "output_index": 1,
                "content_index": 0,
                "delta": p,
            }
            for p in _split(text)
        ]
        part = {"type": "output_text", "text": text, "annotations": []}
        done = {**item, "status": "completed", "content": [part]}
        events.append({"type": "response.output_item.done", "output_index": 1, "item": done})
    for n, (call_id, name, arguments) in enumerate(tool_calls or []):
        item_id = f"fc_{n}"
        item = {"type": "function_call", "id": item_id, "call_id": call_id, "name": name}
        raw = json.dumps(arguments)
        events.append(
            {
                "type": "response.output_item.added",
                "output_index": 2 + n,
                "item": item | {"arguments": ""},
            }
        )
        events += [
            {"type": "response.function_call_arguments.delta", "item_id": item_id, "delta": p}
            for p in _split(raw, 4)
        ]
        events.append(
            {"type": "response.function_call_arguments.done", "item_id": item_id, "arguments": raw}
        )
        events.append(
            {
                "type": "response.output_item.done",
                "output_index": 2 + n,
                "item": item | {"arguments": raw, "status": "completed"},
            }
        )
    if complete:
        usage = usage or {
            "input_tokens": 20,
            "input_tokens_details": {"cached_tokens": 4},
            "output_tokens": 9,
            "output_tokens_details": {"reasoning_tokens": 3},
        }
        # The completed event carries the whole response, as the API's does.
        output = [e["item"] for e in events if e["type"] == "response.output_item.done"]
        response = {
            "id": "resp_1",
            "object": "response",
            "status": "completed",
            "output": output,
            "usage": usage,
        }
        events.append({"type": "response.completed", "response": response})
    return events


def anthropic_message(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The whole `message` (a non-streamed answer) that Messages API `events` stream."""
    message = dict(events[0]["message"])
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    for event in events[1:]:
        kind = event["type"]
        if kind == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"])
        elif kind == "content_block_delta":
            block, delta = blocks[event["index"]], event["delta"]
            match delta["type"]:
                case "text_delta":
                    block["text"] += delta["text"]
                case "thinking_delta":
                    block["thinking"] += delta["thinking"]
                case "signature_delta":
                    block["signature"] = delta["signature"]
                case "input_json_delta":
                    partial[event["index"]] = (
                        partial.get(event["index"], "") + delta["partial_json"]
                    )
        elif kind == "message_delta":
            message.update(event["delta"])
            message["usage"] = {**message["usage"], **event["usage"]}
    for index, raw in partial.items():
        blocks[index]["input"] = json.loads(raw)
    return {**message, "content": [blocks[i] for i in sorted(blocks)]}


def responses_body(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The whole `response` (a non-streamed answer) that Responses API `events` stream."""
    response: dict[str, Any] = next(
        e["response"] for e in events if e["type"] == "response.completed"
    )
    return response


def _calls(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(c[0], c[1], c[2]) for c in spec.get("tool_calls", [])]


def scripted_answer(provider: str, spec: dict[str, Any], stream: bool) -> Answer | ScriptedReply:
    """The answer a reference case scripts, for `provider`'s server.

    Args:
        provider: "anthropic" or "openai_response" (a `WireServer` `Answer`), else a Chat
            Completions provider (an `OpenAIWireServer` `ScriptedReply`).
        spec: Keyword arguments of `anthropic_events`, `responses_events` or `ScriptedReply`,
            tool calls as `[id, name, arguments]` lists.
        stream: Whether the answer is streamed or whole.
    """
    if provider == "anthropic":
        events = anthropic_events(**{**spec, "tool_calls": _calls(spec)})
        body = sse(events) if stream else json.dumps(anthropic_message(events)).encode()
        return Answer(body, piece=7)
    if provider == "openai_response":
        events = responses_events(**{**spec, "tool_calls": _calls(spec)})
        body = sse(events) if stream else json.dumps(responses_body(events)).encode()
        return Answer(body, piece=7)
    return ScriptedReply(**{**spec, "tool_calls": _calls(spec)})
