"""`HTTPChatModel`: a chat model reached over HTTP, its request building and decoding plugged in.

A provider subclasses it and supplies what differs between providers:

- `path` (the endpoint, or `_path` where it depends on the call), `_auth_headers` (how the key
  is sent; Bearer by default) and `_base_url` (the credential's) — the transport side;
- `_body` (a call's `BodyArgs` → the JSON body) and `decoder` (the `ResponseDecoder` class, a
  fresh one per call) — the model side;
- `framing`: "sse" (Server-Sent Events, `data: [DONE]` ends it) or "ndjson".

`_call_api` does the rest: POST through the `HTTPTransport`, typed errors, streaming deltas
then usage, or one whole response.
"""

from __future__ import annotations

import builtins
import json
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from types import TracebackType
from typing import Any, ClassVar, Literal, NoReturn, Self

import httpx
from pydantic import BaseModel

from agent_core._ids import new_id
from agent_core.credential import CredentialBase
from agent_core.formatter import FormatterBase
from agent_core.message import Msg
from agent_core.model._response import ChatResponse, ChatUsage, ResponseBlock
from agent_core.model._transport import (
    DONE,
    HTTPTransport,
    Target,
    aiter_ndjson,
    aiter_sse_json,
    malformed,
    read_json,
    stream_interrupted,
)
from agent_core.model.base import ChatModelBase, ToolChoice, ToolLike, select_tools, tool_dicts

_SHAPE_ERRORS = (ValueError, TypeError, AttributeError, KeyError, IndexError)


def present(**fields: Any) -> dict[str, Any]:
    """The given fields that are set (not None), e.g. a request's optional knobs."""
    return {name: value for name, value in fields.items() if value is not None}


class ResponseDecoder(ABC):
    """Turns one answer of a provider (streamed payloads, or its whole body) into blocks.

    A new decoder serves each call. Raise `ValueError` (or let a `KeyError`/`TypeError` escape)
    for a payload of the wrong shape: the model reports it as `ModelResponseError`.

    Attributes:
        response_id: The provider's id of the answer, once known.
        complete: Whether the answer's end was seen (a stream without it was cut off).
    """

    ending: ClassVar[str] = "its final event"
    """What ends a whole stream, as the error for a cut-off stream names it."""

    def __init__(self) -> None:
        self.response_id: str | None = None
        self.complete = False
        self._block_ids: dict[str, str] = {}
        self._last_kind = ""

    @abstractmethod
    def feed(self, payload: Any) -> list[ResponseBlock]:
        """Decode one streamed payload (an SSE event's JSON data, or one NDJSON line)."""

    def whole(self, payload: Any) -> list[ResponseBlock]:
        """Decode a whole (non-streamed) answer body; by default as one streamed payload."""
        blocks = self.feed(payload)
        self.complete = True
        return blocks

    def flush(self) -> list[ResponseBlock]:
        """Return what is still held back once the answer ended (none by default)."""
        return []

    @abstractmethod
    def usage(self, seconds: float) -> ChatUsage | None:
        """Return the answer's usage, if the provider told, timed at `seconds`."""

    def _block_id(self, kind: str) -> str:
        """The id of the block a fragment of `kind` belongs to: a new one once another kind came.

        Set `_last_kind` to something else (e.g. "tool_call") to end the current run.
        """
        if self._last_kind != kind or kind not in self._block_ids:
            self._block_ids[kind] = new_id()
        self._last_kind = kind
        return self._block_ids[kind]

    def _chunk(
        self, payload: Any, id_key: str, usage_key: str
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """Check one JSON chunk and note its answer id; return it and its usage object, if any.

        Raises:
            ValueError: the chunk is not an object, carries an `error`, or a usage of the wrong
                shape.
        """
        if not isinstance(payload, dict):
            raise ValueError("chunk is not a JSON object")
        if payload.get("error") is not None:
            raise ValueError(f"provider error: {json.dumps(payload['error'])[:500]}")
        if isinstance(payload.get(id_key), str) and payload[id_key]:
            self.response_id = payload[id_key]
        usage = payload.get(usage_key)
        if usage is not None and not isinstance(usage, dict):
            raise ValueError(f"`{usage_key}` is not an object")
        return payload, usage


@dataclass(frozen=True, slots=True)
class BodyArgs:
    """What one call's JSON body is built from.

    Attributes:
        model_name: The model name sent.
        messages: The conversation to format.
        tools: Function-tool dicts offered (None for none).
        tool_choice: The tool choice, if one was given.
        extra: The call's keyword arguments, sent as body fields.
    """

    model_name: str
    messages: list[Msg]
    tools: list[dict[str, Any]] | None
    tool_choice: ToolChoice | None
    extra: dict[str, Any]


class HTTPChatModel(ChatModelBase):
    """A chat model whose provider answers HTTP POSTs with JSON (whole, SSE or NDJSON).

    Args:
        credential: The provider credential (its `base_url` and key).
        model: Model name sent to the provider.
        parameters: Request parameters: a `Parameters`, or a dict validated into one.
        stream: Stream the answer (see `ChatModelBase.__call__`).
        max_retries: Retries of a request failing with 408/409/429/5xx or a network error.
        retry_delay: Seconds before the first retry (doubling after each; a `Retry-After`
            the provider sends wins).
        context_size: The model's context window in tokens (default: the class's
            `default_context_size`).
        formatter: Turns messages into the provider's message list.
        timeout: Seconds allowed for connecting and between received bytes.
        client: An httpx client to use (and not close); a private one is created otherwise.
    """

    framing: ClassVar[Literal["sse", "ndjson"]] = "sse"
    default_context_size: ClassVar[int] = 128_000
    path: ClassVar[str]
    """The endpoint path appended to the base URL (e.g. "/chat/completions")."""
    decoder: ClassVar[builtins.type[ResponseDecoder]]
    """The decoder class; a new one decodes each answer."""

    def __init__(
        self,
        credential: CredentialBase,
        model: str,
        parameters: BaseModel | dict[str, Any] | None = None,
        stream: bool = True,
        max_retries: int = 3,
        retry_delay: float = 1.0,
        context_size: int | None = None,
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
            context_size=self.default_context_size if context_size is None else context_size,
        )
        self.credential: CredentialBase = credential
        self.formatter = formatter or self._default_formatter()
        self.timeout = timeout
        self.transport = HTTPTransport(
            self._base_url(),
            self._auth_headers(),
            timeout=timeout,
            client=client,
            provider=self.type,
        )

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
        await self.transport.aclose()

    # --- What a provider supplies -------------------------------------------------------------

    @abstractmethod
    def _default_formatter(self) -> FormatterBase:
        """The formatter used when none is given."""

    def _base_url(self) -> str:
        """The API root (the credential's `base_url`)."""
        return str(getattr(self.credential, "base_url"))  # noqa: B009 - every HTTP credential has one

    def _auth_headers(self) -> dict[str, str]:
        """Headers sent with every request: `Authorization: Bearer <api_key>` by default."""
        return {"Authorization": f"Bearer {self.credential.secret('api_key') or ''}"}

    def _request_headers(self) -> dict[str, str]:
        """Per-call headers (an SSE `Accept` when streaming, by default)."""
        return {"Accept": "text/event-stream"} if self.stream and self.framing == "sse" else {}

    def _path(self, model_name: str) -> str:
        """The endpoint path of a call to `model_name` (`path` by default)."""
        return self.path

    @abstractmethod
    async def _body(self, call: BodyArgs) -> dict[str, Any]:
        """The JSON body of one call."""

    # --- The shared machinery -----------------------------------------------------------------

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
        return await self._body(BodyArgs(self.model, messages, offered or None, choice, kwargs))

    async def _call_api(
        self,
        model_name: str,
        messages: list[Msg],
        tools: list[dict[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> ChatResponse | AsyncGenerator[ChatResponse, None]:
        """POST one request; its error status is raised here, before any delta."""
        body = await self._body(BodyArgs(model_name, messages, tools, tool_choice, kwargs))
        started = time.monotonic()
        target = self.transport.target(self._path(model_name), model_name)
        response = await self.transport.post(target, body, headers=self._request_headers())
        decoder = self.decoder()
        if self.stream:
            return self._deltas(response, decoder, target, started)
        payload = await read_json(response, target)
        content = self._decoded(model_name, decoder.whole, payload)
        content += self._decoded(model_name, lambda _: decoder.flush(), None)
        result = ChatResponse(content=content, is_last=True, usage=self._usage(decoder, started))
        if decoder.response_id:
            result.id = decoder.response_id
        return result

    def _payloads(self, response: httpx.Response, target: Target) -> AsyncGenerator[Any, None]:
        if self.framing == "ndjson":
            return aiter_ndjson(response, target)
        return aiter_sse_json(response, target)

    async def _deltas(
        self, response: httpx.Response, decoder: ResponseDecoder, target: Target, started: float
    ) -> AsyncGenerator[ChatResponse, None]:
        model_name = target.model
        async with aclosing(self._payloads(response, target)) as payloads:
            async for payload in payloads:
                if payload is DONE:
                    decoder.complete = True
                    break
                blocks = self._decoded(model_name, decoder.feed, payload)
                if blocks:
                    yield self._delta(decoder, blocks)
                if decoder.complete and self.framing == "ndjson":
                    break
        if not decoder.complete:
            raise stream_interrupted(target, f"the stream ended before {decoder.ending}")
        blocks = self._decoded(model_name, lambda _: decoder.flush(), None)
        yield self._delta(decoder, blocks, self._usage(decoder, started))

    def _decoded(self, model_name: str, step: Any, payload: Any) -> list[ResponseBlock]:
        try:
            blocks: list[ResponseBlock] = step(payload)
        except _SHAPE_ERRORS as exc:
            self._malformed(model_name, str(exc) or "unexpected payload shape", exc)
        return blocks

    def _delta(
        self, decoder: ResponseDecoder, blocks: list[ResponseBlock], usage: ChatUsage | None = None
    ) -> ChatResponse:
        delta = ChatResponse(content=blocks, is_last=False, usage=usage)
        if decoder.response_id:
            delta.id = decoder.response_id
        return delta

    def _usage(self, decoder: ResponseDecoder, started: float) -> ChatUsage | None:
        try:
            return decoder.usage(time.monotonic() - started)
        except _SHAPE_ERRORS as exc:
            self._malformed(self.model, f"bad usage: {exc}", exc)

    def _malformed(self, model_name: str, detail: str, exc: Exception) -> NoReturn:
        malformed(model_name, detail, exc)
