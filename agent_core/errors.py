"""Errors raised by agent_core.

Model-facing failures (a tool that failed, a denied permission) become tool results and never
escape a reply; what does escape is one of these::

    AgentCoreError
    ├── ModelError                   a model call failed
    │   ├── ModelHTTPError           the provider answered with an HTTP error status
    │   │   ├── ModelAuthError           401/403: the key is wrong or lacks access
    │   │   ├── ModelBadRequestError     400/404/413/422: the request itself is wrong
    │   │   │   └── ModelContextLengthError  the conversation exceeds the context window
    │   │   ├── ModelRateLimitError      429: slow down (`retry_after` says how long)
    │   │   └── ModelServerError         5xx, 529 (overloaded): the provider failed
    │   ├── ModelConnectionError     the provider could not be reached / the stream broke
    │   │   ├── ModelTimeoutError        no byte arrived within the timeout
    │   │   └── ModelStreamInterruptedError  the stream ended before the answer did
    │   └── ModelResponseError       the provider's answer could not be understood
    │       └── StructuredOutputError  no valid structured output, even after repairs
    ├── ToolError                    a tool is misconfigured or misused by the caller
    ├── MCPError                     an MCP client is misconfigured or its server is unreachable
    ├── CredentialError              a credential is unknown or invalid
    └── FoldError                    an event cannot be applied to a message (also a ValueError)

Every exception pickles (Ray re-raises them across processes).
"""

from __future__ import annotations


class AgentCoreError(Exception):
    """Root of every agent_core error."""


class ModelError(AgentCoreError):
    """A model call failed."""


class ModelHTTPError(ModelError):
    """The provider answered with an HTTP error status.

    Attributes:
        status: The HTTP status.
        model: The model name.
        body: The provider's answer.
        retry_after: Seconds the provider asked to wait, if it said.
        provider: Which provider answered (the chat model's `type`), when known.
        url: The URL that was called, when known.
    """

    def __init__(
        self,
        status: int,
        model: str,
        body: str,
        retry_after: float | None = None,
        provider: str = "",
        url: str = "",
    ) -> None:
        super().__init__(status, model, body, retry_after, provider, url)
        self.status = status
        self.model = model
        self.body = body
        self.retry_after = retry_after
        self.provider = provider
        self.url = url

    def __str__(self) -> str:
        where = _where(self.provider, self.url)
        return f"model {self.model!r}{where} returned HTTP {self.status}: {self.body[:500]}"


class ModelAuthError(ModelHTTPError):
    """401/403: the API key is missing, wrong, or not allowed to use the model."""


class ModelBadRequestError(ModelHTTPError):
    """400/404/413/422: the provider rejected the request itself; retrying will not help."""


class ModelContextLengthError(ModelBadRequestError):
    """The conversation does not fit the model's context window."""


class ModelRateLimitError(ModelHTTPError):
    """429: too many requests or tokens; `retry_after` tells how long to wait, when known."""


class ModelServerError(ModelHTTPError):
    """5xx (529: overloaded): the provider failed; a retry may succeed."""


class ModelConnectionError(ModelError):
    """The provider could not be reached, or the connection broke mid-stream.

    Attributes:
        detail: What went wrong (e.g. `ConnectError: All connection attempts failed`).
        model: The model name, when known.
        provider: Which provider was called (the chat model's `type`), when known.
        url: The URL that was called, when known.
    """

    def __init__(self, detail: str, model: str = "", provider: str = "", url: str = "") -> None:
        super().__init__(detail, model, provider, url)
        self.detail = detail
        self.model = model
        self.provider = provider
        self.url = url

    def __str__(self) -> str:
        if not self.model:
            return f"{self.detail}{_where(self.provider, self.url)}"
        return f"model {self.model!r}{_where(self.provider, self.url)}: {self.detail}"


class ModelTimeoutError(ModelConnectionError):
    """Connecting, or waiting for the next bytes of the answer, took longer than the timeout."""


class ModelStreamInterruptedError(ModelConnectionError):
    """The stream ended (connection dropped or closed) before the answer was complete."""


class ModelResponseError(ModelError):
    """The provider's answer was malformed (bad JSON, unknown chunk shape, ...)."""


class StructuredOutputError(ModelResponseError):
    """The model's structured output did not validate against the schema.

    Attributes:
        attempts: Model answers that failed (1 when a single answer was validated).
        raw: The last tool input the model produced, when it produced one.
    """

    def __init__(self, message: str, attempts: int = 1, raw: str | None = None) -> None:
        super().__init__(message, attempts, raw)
        self.message = message
        self.attempts = attempts
        self.raw = raw

    def __str__(self) -> str:
        return self.message


class ToolError(AgentCoreError):
    """A tool is misconfigured or was registered/called incorrectly."""


class MCPError(AgentCoreError):
    """An MCP client is misconfigured, or could not connect to / list the tools of its server.

    Failed tool *calls* never raise this: they end in an ERROR tool result the model sees.
    """


class CredentialError(AgentCoreError):
    """A credential is unknown or invalid."""


class FoldError(AgentCoreError, ValueError):
    """An event cannot be applied to a message: `Msg.append_event` got malformed data.

    Raised for a base64 chunk that does not decode, a base64 chunk for a data block that holds
    a URL, or a URL that is not one.
    """


def _where(provider: str, url: str) -> str:
    """` (provider POST url)`, naming what is known of the call; empty when nothing is."""
    where = " ".join(part for part in (provider, f"POST {url}" if url else "") if part)
    return f" ({where})" if where else ""
