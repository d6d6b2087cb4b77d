"""`OpenAIChatModel`: OpenAI Chat Completions (and compatible servers) over httpx."""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from importlib.resources import files
from types import TracebackType
from typing import Any, ClassVar, Literal, NoReturn, Self

import httpx
from pydantic import ConfigDict, Field

from agent_core.credential import OpenAICredential
from agent_core.errors import ModelConnectionError, ModelHTTPError, ModelResponseError
from agent_core.formatter import OpenAIChatFormatter, format_openai_tools
from agent_core.message import Msg, Usage
from agent_core.model._sse import aiter_sse_data
from agent_core.model.base import (
    ChatModelBase,
    ModelChunk,
    TextChunk,
    ThinkingChunk,
    ToolCallArgsChunk,
    ToolCallStartChunk,
    ToolSchema,
    UsageChunk,
)

_TOOL_CHOICE_MODES = frozenset({"auto", "none", "required"})
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_DURATION_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


@dataclass
class _PendingCall:
    call_id: str = ""
    name: str = ""
    args: list[str] = field(default_factory=list)
    started: bool = False


class _ChunkDecoder:
    """Turns Chat Completions deltas (or a whole message) into `ModelChunk`s.

    Tool-call fragments are keyed by `index`. A call is announced once its id and name are known
    and its arguments begin (a name may arrive in pieces before that); arguments seen earlier are
    buffered and replayed right after the announcement.
    """

    def __init__(self) -> None:
        self._calls: dict[int, _PendingCall] = {}
        self.usage: Usage | None = None
        self.finished = False

    def feed(self, payload: Any) -> list[ModelChunk]:
        if not isinstance(payload, dict):
            raise ValueError("chunk is not a JSON object")
        if payload.get("error") is not None:
            raise ValueError(f"provider error: {json.dumps(payload['error'])[:500]}")
        if payload.get("usage") is not None:
            self.usage = _usage(payload["usage"])
        choices = payload.get("choices") or []
        if not isinstance(choices, list):
            raise ValueError("`choices` is not a list")
        out: list[ModelChunk] = []
        for choice in choices[:1]:
            delta = choice.get("delta") or choice.get("message") or {}
            out.extend(self._delta(delta))
            if choice.get("finish_reason"):
                self.finished = True
                out.extend(self.flush())
        return out

    def flush(self) -> list[ModelChunk]:
        """Announce every call still waiting for its arguments to begin."""
        out: list[ModelChunk] = []
        for call in self._calls.values():
            if not call.started:
                if not call.name:
                    raise ValueError("a tool call ended without a name")
                out.extend(self._start(call))
        return out

    def _delta(self, delta: dict[str, Any]) -> list[ModelChunk]:
        out: list[ModelChunk] = []
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning:
            out.append(ThinkingChunk(text=str(reasoning)))
        out.extend(TextChunk(text=str(delta[k])) for k in ("content", "refusal") if delta.get(k))
        for position, fragment in enumerate(delta.get("tool_calls") or []):
            out.extend(self._tool_fragment(position, fragment))
        return out

    def _tool_fragment(self, position: int, fragment: dict[str, Any]) -> list[ModelChunk]:
        index = int(fragment.get("index", position))
        call_id = fragment.get("id") or ""
        function = fragment.get("function") or {}
        out: list[ModelChunk] = []
        call = self._calls.get(index)
        if call is None or (call_id and call.call_id and call_id != call.call_id):
            # Some servers reuse an index for a new call; the old one is complete by now.
            if call is not None:
                out.extend(self.flush())
            call = self._calls[index] = _PendingCall(call_id=call_id)
        elif call_id and not call.call_id:
            call.call_id = call_id
        piece = function.get("name") or ""
        # Some servers repeat the whole name in every fragment instead of splitting it.
        if piece and not call.started and piece != call.name:
            call.name += piece
        args = function.get("arguments") or ""
        if call.started:
            if args:
                out.append(ToolCallArgsChunk(call_id=call.call_id, delta=args))
            return out
        if args:
            call.args.append(args)
        if call.args and call.name:
            out.extend(self._start(call))
        return out

    @staticmethod
    def _start(call: _PendingCall) -> list[ModelChunk]:
        call.call_id = call.call_id or f"call_{uuid.uuid4().hex[:24]}"
        call.started = True
        out: list[ModelChunk] = [ToolCallStartChunk(call_id=call.call_id, name=call.name)]
        if call.args:
            out.append(ToolCallArgsChunk(call_id=call.call_id, delta="".join(call.args)))
            call.args.clear()
        return out


def _usage(raw: Any) -> Usage:
    details = raw.get("prompt_tokens_details") or {}
    return Usage(
        input_tokens=int(raw.get("prompt_tokens") or 0),
        output_tokens=int(raw.get("completion_tokens") or 0),
        cache_input_tokens=int(details.get("cached_tokens") or 0),
    )


def _duration(value: str) -> float | None:
    """Parse `1.5`, `20ms`, `6m0s` or `1h2m3.5s` as seconds."""
    try:
        return float(value)
    except ValueError:
        pass
    parts = _DURATION_PART.findall(value)
    if not parts or "".join(n + u for n, u in parts) != value.replace(" ", ""):
        return None
    return sum(float(n) * _DURATION_UNITS[u] for n, u in parts)


def parse_retry_after(headers: httpx.Headers, rate_limited: bool = False) -> float | None:
    """Return how many seconds the server asks to wait before retrying, if it says.

    `retry-after-ms` and `retry-after` (seconds or an HTTP date) always count. The
    `x-ratelimit-reset-*` headers only count when `rate_limited`: servers send them on every
    answer, where they describe the quota window rather than a requested wait.
    """
    try:
        if ms := headers.get("retry-after-ms"):
            return max(float(ms) / 1000, 0.0)
    except ValueError:
        pass
    if retry_after := headers.get("retry-after"):
        if (seconds := _duration(retry_after)) is not None:
            return max(seconds, 0.0)
        try:
            when = parsedate_to_datetime(retry_after)
        except (TypeError, ValueError):
            when = None
        if when is not None and when.tzinfo is not None:
            return max((when - datetime.now(UTC)).total_seconds(), 0.0)
    if not rate_limited:
        return None
    resets: dict[str, float] = {}
    for name in ("x-ratelimit-reset-requests", "x-ratelimit-reset-tokens", "x-ratelimit-reset"):
        if (raw := headers.get(name)) and (seconds := _duration(raw)) is not None:
            if seconds > 1e12:  # an epoch timestamp in milliseconds
                seconds = seconds / 1000 - time.time()
            elif seconds > 1e9:  # an epoch timestamp in seconds
                seconds -= time.time()
            resets[name] = max(seconds, 0.0)
    # The exhausted quota is the one to wait for; without that hint, wait for all of them.
    exhausted = [
        v for k, v in resets.items() if headers.get(k.replace("reset", "remaining")) == "0"
    ]
    return max(exhausted or resets.values(), default=None)


class OpenAIChatModel(ChatModelBase):
    """A model served over the OpenAI Chat Completions protocol.

    Args:
        credential: API key, base URL and organization.
        model: Model name sent as `model`.
        parameters: Request fields (temperature, max_tokens, ...) merged into each body: a
            `Parameters` (unset fields are not sent) or a plain dict sent as is.
        stream: Use SSE streaming; when False one plain request is made and its answer replayed
            as the same chunk sequence.
        timeout: Seconds allowed for connecting and between received bytes.
        context_length: The model's context window in tokens.
        client: An httpx client to use (and not close); a private one is created otherwise.
    """

    class Parameters(ChatModelBase.Parameters):
        """Chat Completions request parameters; others pass through for compatible servers."""

        model_config = ConfigDict(extra="allow")

        temperature: float | None = Field(
            default=None, ge=0, le=2, description="Sampling temperature; higher is more random."
        )
        top_p: float | None = Field(
            default=None, gt=0, le=1, description="Nucleus sampling: the probability mass kept."
        )
        max_tokens: int | None = Field(
            default=None, gt=0, description="Most tokens to generate (compatible servers)."
        )
        max_completion_tokens: int | None = Field(
            default=None, gt=0, description="Most tokens to generate, reasoning included."
        )
        frequency_penalty: float | None = Field(
            default=None, ge=-2, le=2, description="Penalty on tokens by their frequency so far."
        )
        presence_penalty: float | None = Field(
            default=None, ge=-2, le=2, description="Penalty on tokens that appeared at all."
        )
        seed: int | None = Field(default=None, description="Seed for best-effort determinism.")
        stop: list[str] | None = Field(
            default=None, max_length=4, description="Sequences that end the answer."
        )
        parallel_tool_calls: bool | None = Field(
            default=None, description="Whether the model may call several tools at once."
        )
        reasoning_effort: Literal["low", "medium", "high"] | None = Field(
            default=None, description="How hard a reasoning model thinks before answering."
        )

    model_class: ClassVar[str] = "openai_chat"
    cards_dir = files("agent_core.model") / "_cards" / "openai"

    def __init__(
        self,
        credential: OpenAICredential,
        model: str,
        parameters: Parameters | dict[str, Any] | None = None,
        stream: bool = True,
        timeout: float = 120.0,
        context_length: int = 128_000,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.credential = credential
        self.model_name = model
        self.parameters = (
            parameters.model_dump(exclude_none=True)
            if isinstance(parameters, OpenAIChatModel.Parameters)
            else dict(parameters or {})
        )
        self.streaming = stream
        self.timeout = timeout
        self.context_length = context_length
        self.formatter = OpenAIChatFormatter()
        self._owns_client = client is None
        self._client = client or httpx.AsyncClient()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP client if this model created it."""
        if self._owns_client:
            await self._client.aclose()

    def build_request_body(
        self,
        messages: list[Msg],
        tools: list[ToolSchema] | None = None,
        tool_choice: str | None = None,
    ) -> dict[str, Any]:
        """Return the JSON body `stream` would POST for these arguments."""
        body: dict[str, Any] = {
            **self.parameters,
            "model": self.model_name,
            "messages": self.formatter.format(messages),
            "stream": self.streaming,
        }
        if self.streaming:
            body["stream_options"] = {"include_usage": True}
        if tools:
            body["tools"] = format_openai_tools(tools)
            if tool_choice in _TOOL_CHOICE_MODES:
                body["tool_choice"] = tool_choice
            elif tool_choice:
                body["tool_choice"] = {"type": "function", "function": {"name": tool_choice}}
        return body

    async def stream(
        self,
        messages: list[Msg],
        tools: list[ToolSchema] | None = None,
        tool_choice: str | None = None,
    ) -> AsyncIterator[ModelChunk]:
        """Stream the answer; see `ChatModelBase.stream` (errors are raised as documented)."""
        body = self.build_request_body(messages, tools, tool_choice)
        request = self._client.build_request(
            "POST",
            f"{self.credential.base_url.rstrip('/')}/chat/completions",
            json=body,
            headers=self._headers(),
            timeout=httpx.Timeout(self.timeout),
        )
        decoder = _ChunkDecoder()
        try:
            response = await self._client.send(request, stream=True)
            try:
                if not response.is_success:
                    await response.aread()
                    raise ModelHTTPError(
                        response.status_code,
                        self.model_name,
                        response.text,
                        retry_after=parse_retry_after(
                            response.headers, rate_limited=response.status_code == 429
                        ),
                    )
                if self.streaming:
                    async for chunk in self._read_stream(response, decoder):
                        yield chunk
                else:
                    await response.aread()
                    for chunk in self._decode(decoder, self._json(response.text)):
                        yield chunk
                    for chunk in self._finish(decoder):
                        yield chunk
            finally:
                await response.aclose()
        except httpx.DecodingError as exc:
            raise ModelResponseError(f"{self.model_name}: undecodable body: {exc}") from exc
        except httpx.TransportError as exc:
            raise ModelConnectionError(
                f"{self.model_name}: {type(exc).__name__}: {str(exc) or 'connection failed'}"
            ) from exc

    async def _read_stream(
        self, response: httpx.Response, decoder: _ChunkDecoder
    ) -> AsyncIterator[ModelChunk]:
        done = False
        async with aclosing(aiter_sse_data(response.aiter_bytes())) as events:
            async for data in events:
                if data.strip() == "[DONE]":
                    done = True
                    break
                if data.strip():
                    for chunk in self._decode(decoder, self._json(data)):
                        yield chunk
        if not (done or decoder.finished):
            raise ModelConnectionError(f"{self.model_name}: the stream ended before [DONE]")
        for chunk in self._finish(decoder):
            yield chunk

    def _headers(self) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.credential.api_key}"}
        if self.credential.organization:
            headers["OpenAI-Organization"] = self.credential.organization
        if self.streaming:
            headers["Accept"] = "text/event-stream"
        return headers

    def _json(self, text: str) -> Any:
        try:
            return json.loads(text)
        except ValueError as exc:
            self._malformed(f"not JSON: {text[:200]!r}", exc)

    def _decode(self, decoder: _ChunkDecoder, payload: Any) -> list[ModelChunk]:
        try:
            return decoder.feed(payload)
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            self._malformed(str(exc) or "unexpected chunk shape", exc)

    def _finish(self, decoder: _ChunkDecoder) -> list[ModelChunk]:
        try:
            out = decoder.flush()
        except ValueError as exc:
            self._malformed(str(exc), exc)
        if decoder.usage is not None:
            out.append(UsageChunk(usage=decoder.usage))
        return out

    def _malformed(self, detail: str, exc: Exception) -> NoReturn:
        raise ModelResponseError(f"{self.model_name}: malformed response: {detail}") from exc
