"""`OpenAIChatModel`: OpenAI Chat Completions (and compatible servers) over httpx."""

from __future__ import annotations

import builtins
import json
import re
import time
import uuid
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from importlib.resources import files
from types import TracebackType
from typing import Any, Literal, NoReturn, Self

import httpx
from pydantic import BaseModel, ConfigDict, Field

from agent_core._ids import new_id
from agent_core.credential import DashScopeCredential, OpenAICredential
from agent_core.errors import ModelConnectionError, ModelHTTPError, ModelResponseError
from agent_core.formatter import FormatterBase, OpenAIChatFormatter
from agent_core.message import Msg, TextBlock, ThinkingBlock, ToolCallBlock
from agent_core.model._response import ChatResponse, ChatUsage, ResponseBlock
from agent_core.model._sse import aiter_sse_data
from agent_core.model.base import (
    TOOL_CHOICE_MODES,
    ChatModelBase,
    ToolChoice,
    ToolLike,
    select_tools,
    tool_dicts,
)

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_DURATION_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


@dataclass
class _PendingCall:
    call_id: str = ""
    name: str = ""
    args: list[str] = field(default_factory=list)
    started: bool = False


class _DeltaDecoder:
    """Turns Chat Completions deltas (or a whole message) into response blocks.

    Text and reasoning keep one block id while they continue; a new block starts when the other
    kind (or a tool call) came in between. Tool-call fragments are keyed by `index`. A call is
    announced once its id and name are known and its arguments begin (a name may arrive in
    pieces before that); arguments seen earlier are buffered and sent with the announcement.
    """

    def __init__(self) -> None:
        self._calls: dict[int, _PendingCall] = {}
        self._block_ids: dict[str, str] = {}
        self._last_kind = ""
        self.raw_usage: dict[str, Any] | None = None
        self.response_id: str | None = None
        self.finished = False

    def feed(self, payload: Any) -> list[ResponseBlock]:
        if not isinstance(payload, dict):
            raise ValueError("chunk is not a JSON object")
        if payload.get("error") is not None:
            raise ValueError(f"provider error: {json.dumps(payload['error'])[:500]}")
        if isinstance(payload.get("id"), str) and payload["id"]:
            self.response_id = payload["id"]
        if payload.get("usage") is not None:
            if not isinstance(payload["usage"], dict):
                raise ValueError("`usage` is not an object")
            self.raw_usage = payload["usage"]
        choices = payload.get("choices") or []
        if not isinstance(choices, list):
            raise ValueError("`choices` is not a list")
        out: list[ResponseBlock] = []
        for choice in choices[:1]:
            delta = choice.get("delta") or choice.get("message") or {}
            out.extend(self._delta(delta))
            if choice.get("finish_reason"):
                self.finished = True
                out.extend(self.flush())
        return out

    def flush(self) -> list[ResponseBlock]:
        """Announce every call still waiting for its arguments to begin."""
        out: list[ResponseBlock] = []
        for call in self._calls.values():
            if not call.started:
                if not call.name:
                    raise ValueError("a tool call ended without a name")
                out.append(self._start(call))
        return out

    def _block_id(self, kind: str) -> str:
        if self._last_kind != kind or kind not in self._block_ids:
            self._block_ids[kind] = new_id()
        self._last_kind = kind
        return self._block_ids[kind]

    def _delta(self, delta: dict[str, Any]) -> list[ResponseBlock]:
        out: list[ResponseBlock] = []
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning:
            out.append(ThinkingBlock(id=self._block_id("thinking"), thinking=str(reasoning)))
        text = "".join(str(delta[k]) for k in ("content", "refusal") if delta.get(k))
        if text:
            out.append(TextBlock(id=self._block_id("text"), text=text))
        for position, fragment in enumerate(delta.get("tool_calls") or []):
            out.extend(self._tool_fragment(position, fragment))
        return out

    def _tool_fragment(self, position: int, fragment: dict[str, Any]) -> list[ResponseBlock]:
        index = int(fragment.get("index", position))
        call_id = fragment.get("id") or ""
        function = fragment.get("function") or {}
        out: list[ResponseBlock] = []
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
                out.append(ToolCallBlock(id=call.call_id, name=call.name, input=args))
            return out
        if args:
            call.args.append(args)
        if call.args and call.name:
            out.append(self._start(call))
        return out

    def _start(self, call: _PendingCall) -> ToolCallBlock:
        call.call_id = call.call_id or f"call_{uuid.uuid4().hex[:24]}"
        call.started = True
        self._last_kind = "tool_call"
        block = ToolCallBlock(id=call.call_id, name=call.name, input="".join(call.args))
        call.args.clear()
        return block


def _usage(raw: dict[str, Any], started: float) -> ChatUsage:
    details = raw.get("prompt_tokens_details") or {}
    return ChatUsage(
        input_tokens=int(raw.get("prompt_tokens") or 0),
        output_tokens=int(raw.get("completion_tokens") or 0),
        cache_input_tokens=int(details.get("cached_tokens") or 0),
        time=time.monotonic() - started,
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
        parameters: Request parameters: a `Parameters`, or a dict validated into one.
        stream: Stream the answer over SSE (see `ChatModelBase.__call__`).
        max_retries: Retries of a request failing with 408/409/429/5xx or a network error.
        retry_delay: Seconds between those attempts.
        context_size: The model's context window in tokens.
        formatter: Turns messages into the request's `messages` (`OpenAIChatFormatter` by
            default; `OpenAIMultiAgentFormatter` for conversations among several agents).
        timeout: Seconds allowed for connecting and between received bytes.
        client: An httpx client to use (and not close); a private one is created otherwise.
    """

    class Parameters(ChatModelBase.Parameters):
        """Chat Completions request parameters; unknown ones pass through to compatible servers.

        `thinking_enable` is not sent: it gates `reasoning_effort`, which is sent only while
        thinking is enabled. `parallel_tool_calls` is sent only with tools.
        """

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
        thinking_enable: bool = Field(
            default=False,
            title="Thinking",
            description="Let a reasoning model reason at `reasoning_effort` (o3, o4-mini, ...).",
        )
        reasoning_effort: Literal["none", "minimal", "low", "medium", "high", "xhigh"] | None = (
            Field(
                default=None,
                description="How hard a reasoning model thinks; sent only with thinking enabled.",
            )
        )

    type = "openai_chat"
    cards_dir = files("agent_core.model") / "_cards" / "openai"

    def __init__(
        self,
        credential: OpenAICredential | DashScopeCredential,
        model: str,
        parameters: BaseModel | dict[str, Any] | None = None,
        stream: bool = True,
        max_retries: int = 3,
        retry_delay: float = 1.0,
        context_size: int = 128_000,
        formatter: FormatterBase | None = None,
        timeout: float = 120.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        super().__init__(
            credential=credential,
            model=model,
            parameters=parameters,
            stream=stream,
            max_retries=max_retries,
            retry_delay=retry_delay,
            context_size=context_size,
        )
        self.credential: OpenAICredential | DashScopeCredential = credential
        self.formatter = formatter or OpenAIChatFormatter()
        self.timeout = timeout
        self._owns_client = client is None
        self._client = client or httpx.AsyncClient()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: builtins.type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP client if this model created it."""
        if self._owns_client:
            await self._client.aclose()

    async def build_request_body(
        self,
        messages: list[Msg],
        tools: Sequence[ToolLike] | None = None,
        tool_choice: ToolChoice | str | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Return the JSON body a call with these arguments POSTs.

        Raises:
            ValueError: `tools` or `tool_choice` is malformed.
        """
        offered, choice = select_tools(tool_dicts(tools), tool_choice)
        return await self._body(self.model, messages, offered, choice, kwargs)

    async def _body(
        self,
        model_name: str,
        messages: list[Msg],
        tools: list[dict[str, Any]] | None,
        tool_choice: ToolChoice | None,
        extra: dict[str, Any],
    ) -> dict[str, Any]:
        fields = self.parameters.model_dump(exclude_none=True)
        parallel = fields.pop("parallel_tool_calls", None)
        body: dict[str, Any] = {
            **self._parameter_fields(fields),
            "model": model_name,
            "messages": await self.formatter.format(messages),
            "stream": self.stream,
        }
        body.update(extra)
        if self.stream:
            body["stream_options"] = {"include_usage": True}
        if tools:
            body["tools"] = tools
            if parallel is not None:
                body["parallel_tool_calls"] = parallel
            if tool_choice is not None:
                mode = tool_choice.mode
                body["tool_choice"] = (
                    mode
                    if mode in TOOL_CHOICE_MODES
                    else {"type": "function", "function": {"name": mode}}
                )
        return body

    def _parameter_fields(self, fields: dict[str, Any]) -> dict[str, Any]:
        """Map the set parameters (`parallel_tool_calls` aside) to request body fields."""
        thinking = fields.pop("thinking_enable")
        effort = fields.pop("reasoning_effort", None)
        if thinking and effort is not None:
            fields["reasoning_effort"] = effort
        return fields

    async def _call_api(
        self,
        model_name: str,
        messages: list[Msg],
        tools: list[dict[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> ChatResponse | AsyncGenerator[ChatResponse, None]:
        """POST one request; raise its error status here, before any delta."""
        body = await self._body(model_name, messages, tools, tool_choice, kwargs)
        request = self._client.build_request(
            "POST",
            f"{self.credential.base_url.rstrip('/')}/chat/completions",
            json=body,
            headers=self._headers(),
            timeout=httpx.Timeout(self.timeout),
        )
        started = time.monotonic()
        try:
            response = await self._client.send(request, stream=True)
        except httpx.TransportError as exc:
            self._connection_failed(exc)
        if not response.is_success:
            try:
                await response.aread()
            except httpx.TransportError as exc:
                self._connection_failed(exc)
            finally:
                await response.aclose()
            raise ModelHTTPError(
                response.status_code,
                model_name,
                response.text,
                retry_after=parse_retry_after(
                    response.headers, rate_limited=response.status_code == 429
                ),
            )
        if self.stream:
            return self._deltas(response, started)
        try:
            await response.aread()
        except httpx.DecodingError as exc:
            self._malformed(f"undecodable body: {exc}", exc)
        except httpx.TransportError as exc:
            self._connection_failed(exc)
        finally:
            await response.aclose()
        decoder = _DeltaDecoder()
        content = self._decode(decoder, self._json(response.text))
        content += self._flush(decoder)
        result = ChatResponse(content=content, is_last=True, usage=self._usage(decoder, started))
        if decoder.response_id:
            result.id = decoder.response_id
        return result

    async def _deltas(
        self, response: httpx.Response, started: float
    ) -> AsyncGenerator[ChatResponse, None]:
        decoder = _DeltaDecoder()
        done = False
        try:
            async with aclosing(aiter_sse_data(response.aiter_bytes())) as events:
                async for data in events:
                    if data.strip() == "[DONE]":
                        done = True
                        break
                    if data.strip():
                        blocks = self._decode(decoder, self._json(data))
                        if blocks:
                            yield self._delta(decoder, blocks)
        except httpx.DecodingError as exc:
            self._malformed(f"undecodable body: {exc}", exc)
        except httpx.TransportError as exc:
            self._connection_failed(exc)
        finally:
            await response.aclose()
        if not (done or decoder.finished):
            raise ModelConnectionError(f"{self.model}: the stream ended before [DONE]")
        # Calls still unannounced, and the usage (OpenAI sends it after the last choice).
        yield self._delta(decoder, self._flush(decoder), self._usage(decoder, started))

    def _delta(
        self, decoder: _DeltaDecoder, blocks: list[ResponseBlock], usage: ChatUsage | None = None
    ) -> ChatResponse:
        delta = ChatResponse(content=blocks, is_last=False, usage=usage)
        if decoder.response_id:
            delta.id = decoder.response_id
        return delta

    def _headers(self) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.credential.api_key}"}
        if isinstance(self.credential, OpenAICredential) and self.credential.organization:
            headers["OpenAI-Organization"] = self.credential.organization
        if self.stream:
            headers["Accept"] = "text/event-stream"
        return headers

    def _json(self, text: str) -> Any:
        try:
            return json.loads(text)
        except ValueError as exc:
            self._malformed(f"not JSON: {text[:200]!r}", exc)

    def _decode(self, decoder: _DeltaDecoder, payload: Any) -> list[ResponseBlock]:
        try:
            return decoder.feed(payload)
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            self._malformed(str(exc) or "unexpected chunk shape", exc)

    def _flush(self, decoder: _DeltaDecoder) -> list[ResponseBlock]:
        try:
            return decoder.flush()
        except ValueError as exc:
            self._malformed(str(exc), exc)

    def _usage(self, decoder: _DeltaDecoder, started: float) -> ChatUsage | None:
        if decoder.raw_usage is None:
            return None
        try:
            return _usage(decoder.raw_usage, started)
        except (ValueError, TypeError, AttributeError) as exc:
            self._malformed(f"bad usage: {exc}", exc)

    def _malformed(self, detail: str, exc: Exception) -> NoReturn:
        raise ModelResponseError(f"{self.model}: malformed response: {detail}") from exc

    def _connection_failed(self, exc: httpx.TransportError) -> NoReturn:
        raise ModelConnectionError(
            f"{self.model}: {type(exc).__name__}: {str(exc) or 'connection failed'}"
        ) from exc
