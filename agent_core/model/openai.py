"""`OpenAIChatModel`: OpenAI Chat Completions (and compatible servers) over httpx."""

from __future__ import annotations

import builtins
import json
import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from importlib.resources import files
from types import TracebackType
from typing import Any, Literal, NoReturn, Self

import httpx
from pydantic import BaseModel, ConfigDict, Field

from agent_core.credential import DashScopeCredential, OpenAICredential
from agent_core.errors import ModelConnectionError, ModelHTTPError, ModelResponseError
from agent_core.formatter import FormatterBase, OpenAIChatFormatter
from agent_core.message import Msg
from agent_core.model._chat_completions import DeltaDecoder, parse_retry_after, parse_usage
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
            self._url(),
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
                provider=self.type,
                url=self._url(),
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
        decoder = DeltaDecoder()
        content = self._decode(decoder, self._json(response.text))
        content += self._flush(decoder)
        result = ChatResponse(content=content, is_last=True, usage=self._usage(decoder, started))
        if decoder.response_id:
            result.id = decoder.response_id
        return result

    async def _deltas(
        self, response: httpx.Response, started: float
    ) -> AsyncGenerator[ChatResponse, None]:
        decoder = DeltaDecoder()
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
            raise ModelConnectionError(
                f"{self.model} ({self.type} POST {self._url()}): the stream ended before [DONE]"
            )
        # Calls still unannounced, and the usage (OpenAI sends it after the last choice).
        yield self._delta(decoder, self._flush(decoder), self._usage(decoder, started))

    def _delta(
        self, decoder: DeltaDecoder, blocks: list[ResponseBlock], usage: ChatUsage | None = None
    ) -> ChatResponse:
        delta = ChatResponse(content=blocks, is_last=False, usage=usage)
        if decoder.response_id:
            delta.id = decoder.response_id
        return delta

    def _url(self) -> str:
        return f"{self.credential.base_url.rstrip('/')}/chat/completions"

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

    def _decode(self, decoder: DeltaDecoder, payload: Any) -> list[ResponseBlock]:
        try:
            return decoder.feed(payload)
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            self._malformed(str(exc) or "unexpected chunk shape", exc)

    def _flush(self, decoder: DeltaDecoder) -> list[ResponseBlock]:
        try:
            return decoder.flush()
        except ValueError as exc:
            self._malformed(str(exc), exc)

    def _usage(self, decoder: DeltaDecoder, started: float) -> ChatUsage | None:
        if decoder.raw_usage is None:
            return None
        try:
            return parse_usage(decoder.raw_usage, started)
        except (ValueError, TypeError, AttributeError) as exc:
            self._malformed(f"bad usage: {exc}", exc)

    def _malformed(self, detail: str, exc: Exception) -> NoReturn:
        raise ModelResponseError(f"{self.model}: malformed response: {detail}") from exc

    def _connection_failed(self, exc: httpx.TransportError) -> NoReturn:
        raise ModelConnectionError(
            f"{self.model} ({self.type} POST {self._url()}): {type(exc).__name__}: "
            f"{str(exc) or 'connection failed'}"
        ) from exc
