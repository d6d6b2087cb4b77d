"""The HTTP transport every provider shares: one POST, its typed errors, and its body's framing.

`HTTPTransport` is the provider side of a model (where: base URL; who: auth headers; how: the
httpx client and timeout). It sends a request and raises the provider's error status as a typed
`ModelHTTPError` before any answer is read; network failures become `ModelConnectionError`s.
`aiter_sse_json` / `aiter_ndjson` turn a streamed body into JSON payloads, and `read_json` reads
a whole one, mapping decoding and network failures the same way. Every network error names its
`Target`: the model, the provider and the URL.
"""

from __future__ import annotations

import codecs
import json
import re
import time
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, NoReturn, Protocol

import httpx

from agent_core.errors import (
    ModelAuthError,
    ModelBadRequestError,
    ModelConnectionError,
    ModelContextLengthError,
    ModelHTTPError,
    ModelRateLimitError,
    ModelResponseError,
    ModelServerError,
    ModelStreamInterruptedError,
    ModelTimeoutError,
)
from agent_core.model._sse import SSEDecoder

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_DURATION_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
_CONTEXT_TOO_LONG = re.compile(
    r"context[_ ]length[_ ]exceeded|maximum context length|context window|prompt is too long"
    r"|too many (input )?tokens|input (is )?too long|exceeds? the (model'?s? )?(maximum )?context",
    re.IGNORECASE,
)


class _Done:
    """The type of `DONE`."""

    def __repr__(self) -> str:
        return "DONE"


DONE = _Done()
"""What `aiter_sse_json` yields for the stream's end marker (`data: [DONE]`)."""


@dataclass(frozen=True)
class Target:
    """Where one call goes, as its errors name it.

    Attributes:
        model: The model asked.
        provider: The provider's name (e.g. `anthropic_chat`).
        url: The URL posted to (without query parameters, which may hold a key).
    """

    model: str
    provider: str = ""
    url: str = ""


def http_error(
    status: int,
    model: str,
    body: str,
    headers: httpx.Headers | None = None,
    *,
    provider: str = "",
    url: str = "",
) -> ModelHTTPError:
    """Return the typed error for an HTTP error answer (see `agent_core.errors`).

    Args:
        status: The HTTP status.
        model: The model asked.
        body: The answer's body (the provider's error JSON, usually).
        headers: The answer's headers, read for `Retry-After` and rate-limit resets.
        provider: Which provider answered, named in the message.
        url: The URL that was called, named in the message.
    """
    retry_after = (
        parse_retry_after(headers, rate_limited=status == 429) if headers is not None else None
    )
    cls: type[ModelHTTPError] = ModelHTTPError
    if status in (401, 403):
        cls = ModelAuthError
    elif status == 429:
        cls = ModelRateLimitError
    elif status in (400, 404, 413, 422):
        cls = ModelContextLengthError if _CONTEXT_TOO_LONG.search(body) else ModelBadRequestError
    elif status >= 500:
        cls = ModelServerError
    return cls(status, model, body, retry_after=retry_after, provider=provider, url=url)


def connection_error(target: Target, exc: httpx.TransportError) -> ModelConnectionError:
    """Return the typed error for a network failure while talking to the provider."""
    detail = f"{type(exc).__name__}: {str(exc) or 'connection failed'}"
    cls = ModelConnectionError
    if isinstance(exc, httpx.TimeoutException):
        cls = ModelTimeoutError
    elif isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
        cls = ModelStreamInterruptedError
    return cls(detail, target.model, target.provider, target.url)


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


def malformed(model: str, detail: str, exc: Exception | None = None) -> NoReturn:
    """Raise `ModelResponseError` for an answer that cannot be understood."""
    raise ModelResponseError(f"{model}: malformed response: {detail}") from exc


def parse_json(model: str, text: str | bytes) -> Any:
    """Parse one JSON payload of the answer.

    Raises:
        ModelResponseError: it is not JSON.
    """
    try:
        return json.loads(text)
    except ValueError as exc:
        shown = text[:200] if isinstance(text, str) else text[:200].decode("utf-8", "replace")
        malformed(model, f"not JSON: {shown!r}", exc)


class HTTPTransport:
    """One provider endpoint: base URL, auth headers and the httpx client requests go through.

    Args:
        base_url: API root; request paths are appended to it.
        headers: Headers sent with every request (authentication, API version, ...).
        timeout: Seconds allowed for connecting and between received bytes.
        client: An httpx client to use (and not close); a private one is created otherwise.
        provider: The provider's name, for error messages (e.g. `openai_chat`).
    """

    def __init__(
        self,
        base_url: str,
        headers: Mapping[str, str],
        timeout: float = 120.0,
        client: httpx.AsyncClient | None = None,
        provider: str = "",
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.provider = provider
        self.headers = dict(headers)
        self.timeout = timeout
        self._owns_client = client is None
        self.client = client or httpx.AsyncClient()

    async def aclose(self) -> None:
        """Close the httpx client if this transport created it."""
        if self._owns_client:
            await self.client.aclose()

    def target(self, path: str, model: str) -> Target:
        """The `Target` of a call of `model` at `path`."""
        return Target(model, self.provider, self.base_url + path)

    async def post(
        self,
        target: Target,
        body: Mapping[str, Any],
        *,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """POST `body` as JSON to `target.url` and return the open (unread) answer.

        The caller reads the answer (`aiter_sse_json`, `aiter_ndjson`, `read_json`), which
        closes it.

        Raises:
            ModelHTTPError: the provider answered with an error status (a typed subclass).
            ModelConnectionError: the provider could not be reached (a typed subclass).
        """
        request = self.client.build_request(
            "POST",
            target.url,
            json=body,
            params=params,
            headers={**self.headers, **(headers or {})},
            timeout=httpx.Timeout(self.timeout),
        )
        try:
            response = await self.client.send(request, stream=True)
        except httpx.TransportError as exc:
            raise connection_error(target, exc) from exc
        if response.is_success:
            return response
        try:
            await response.aread()
        except httpx.TransportError as exc:
            raise connection_error(target, exc) from exc
        finally:
            await response.aclose()
        raise http_error(
            response.status_code,
            target.model,
            response.text,
            response.headers,
            provider=target.provider,
            url=target.url,
        )


async def read_json(response: httpx.Response, target: Target) -> Any:
    """Read a whole (non-streamed) answer as JSON and close it.

    Raises:
        ModelResponseError: the body is not JSON.
        ModelConnectionError: the connection failed while reading.
    """
    try:
        await response.aread()
    except httpx.DecodingError as exc:
        malformed(target.model, f"undecodable body: {exc}", exc)
    except httpx.TransportError as exc:
        raise connection_error(target, exc) from exc
    finally:
        await response.aclose()
    return parse_json(target.model, response.text)


async def aiter_sse_json(
    response: httpx.Response, target: Target, done: str = "[DONE]"
) -> AsyncGenerator[Any, None]:
    """Yield each SSE event's data parsed as JSON, until the stream or a `done` event ends.

    The `done` event itself is yielded as `DONE`; events with blank data are skipped. The
    answer is closed when the generator finishes.

    Raises:
        ModelResponseError: an event's data is not JSON.
        ModelConnectionError: the connection failed mid-stream.
    """
    async with aclosing(_texts(response, target, SSEDecoder())) as events:
        async for data in events:
            if data.strip() == done:
                yield DONE
                return
            if data.strip():
                yield parse_json(target.model, data)


class NDJSONDecoder:
    """Turns network chunks (bytes, split anywhere) into complete JSON lines' text."""

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._partial = ""

    def feed(self, chunk: bytes) -> list[str]:
        """Consume one chunk and return every non-blank line it completes."""
        *lines, self._partial = (self._partial + self._utf8.decode(chunk)).split("\n")
        return [line for line in lines if line.strip()]

    def close(self) -> list[str]:
        """Return the last line when the stream did not end with a newline."""
        rest, self._partial = self._partial + self._utf8.decode(b"", final=True), ""
        return [rest] if rest.strip() else []


async def aiter_ndjson(response: httpx.Response, target: Target) -> AsyncGenerator[Any, None]:
    """Yield each line of a newline-delimited JSON stream, parsed. Closes the answer at the end.

    Raises:
        ModelResponseError: a line is not JSON.
        ModelConnectionError: the connection failed mid-stream.
    """
    async with aclosing(_texts(response, target, NDJSONDecoder())) as lines:
        async for line in lines:
            yield parse_json(target.model, line)


class _TextDecoder(Protocol):
    def feed(self, chunk: bytes) -> list[str]: ...

    def close(self) -> list[str]: ...


async def _texts(
    response: httpx.Response, target: Target, decoder: _TextDecoder
) -> AsyncGenerator[str, None]:
    """The texts `decoder` cuts the streamed body into; the answer is closed at the end."""
    try:
        async for chunk in response.aiter_bytes():
            for text in decoder.feed(chunk):
                yield text
        for text in decoder.close():
            yield text
    except httpx.DecodingError as exc:
        malformed(target.model, f"undecodable body: {exc}", exc)
    except httpx.TransportError as exc:
        raise connection_error(target, exc) from exc
    finally:
        await response.aclose()


def stream_interrupted(target: Target, detail: str) -> ModelStreamInterruptedError:
    """Return the error for a stream that ended before its end marker."""
    return ModelStreamInterruptedError(detail, target.model, target.provider, target.url)
