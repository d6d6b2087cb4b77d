"""Messages: the unit of conversation, persistence and inter-agent communication.

A `Msg` carries an ordered list of typed content blocks. One assistant `Msg` holds one whole
reply; it can be rebuilt exactly from the reply's event stream with `Msg.append_event`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar, overload

from pydantic import (
    AnyUrl,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from agent_core._ids import new_id, now_iso
from agent_core._trusted import trusted_maker
from agent_core.deferred_model import DeferredModel
from agent_core.permission.types import PermissionRule

if TYPE_CHECKING:
    from agent_core.event import AgentEvent

Role = Literal["user", "assistant", "system"]


class _Model(DeferredModel):
    model_config = ConfigDict(extra="forbid")


class Base64Source(_Model):
    """Inline binary content, base64 encoded."""

    type: Literal["base64"] = "base64"
    data: str = Field(description="Base64-encoded bytes.")
    media_type: str = Field(description="MIME type, e.g. image/png.")


class URLSource(_Model):
    """Binary content referenced by URL."""

    type: Literal["url"] = "url"
    url: str = Field(min_length=1, description="Where the content lives (an RFC 3986 URI).")
    media_type: str = Field(description="MIME type, e.g. image/png.")

    @field_validator("url")
    @classmethod
    def _normalise_url(cls, url: str) -> str:
        # Stored in AgentScope's normal form (`https://x.test` becomes `https://x.test/`), so a
        # message built from the same events serialises identically in both.
        try:
            return str(AnyUrl(url))
        except ValidationError as exc:
            raise ValueError(f"not a valid URL: {url!r}") from exc


class _Block(_Model):
    id: str = Field(default_factory=new_id, description="Block identifier.")
    created_at: str = Field(default_factory=now_iso, description="ISO 8601 creation time.")
    finished_at: str | None = Field(default=None, description="ISO 8601 completion time.")


class TextBlock(_Block):
    """Plain text."""

    type: Literal["text"] = "text"
    text: str = Field(description="The text.")


class ThinkingBlock(_Block):
    """Model reasoning (chain of thought)."""

    type: Literal["thinking"] = "thinking"
    thinking: str = Field(description="The reasoning text.")
    signature: str | None = Field(
        default=None,
        description="The provider's proof of the reasoning (Anthropic's signature, OpenAI's "
        "encrypted reasoning), sent back with it so the model may continue from it.",
    )
    redacted_thinking_data: str | None = Field(
        default=None, description="Reasoning the provider encrypted (Anthropic redacted thinking)."
    )

    @model_serializer(mode="wrap")
    def _omit_absent_proofs(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Most providers send no proof: keep the block's wire shape AgentScope's then.
        data: dict[str, Any] = handler(self)
        for key in ("signature", "redacted_thinking_data"):
            if data.get(key, "") is None:
                del data[key]
        return data


class DataBlock(_Block):
    """Binary data such as an image or audio clip."""

    type: Literal["data"] = "data"
    source: Annotated[Base64Source | URLSource, Field(discriminator="type")]
    name: str | None = Field(default=None, description="Optional file name.")


class ToolCallState(StrEnum):
    """Where a tool call stands."""

    PENDING = "pending"
    ASKING = "asking"
    ALLOWED = "allowed"
    SUBMITTED = "submitted"
    FINISHED = "finished"


class ToolResultState(StrEnum):
    """How a tool execution ended (or that it still runs)."""

    SUCCESS = "success"
    ERROR = "error"
    INTERRUPTED = "interrupted"
    DENIED = "denied"
    RUNNING = "running"


class ToolCallBlock(_Block):
    """A tool invocation requested by the model; `input` is a JSON string."""

    type: Literal["tool_call"] = "tool_call"
    id: str = Field(description="Tool call identifier (the provider's call id).")
    name: str = Field(description="Tool name.")
    input: str = Field(description="JSON-encoded arguments.")
    state: ToolCallState = ToolCallState.PENDING
    suggested_rules: list[PermissionRule] = Field(default_factory=list)


DataOrText = Annotated[TextBlock | DataBlock, Field(discriminator="type")]


class ToolResultBlock(_Block):
    """The output of one tool call, matched to it by `id`."""

    type: Literal["tool_result"] = "tool_result"
    id: str = Field(description="Id of the tool call this result answers.")
    name: str = Field(description="Tool name.")
    output: str | list[DataOrText] = Field(description="Text or text/data blocks.")
    state: ToolResultState = ToolResultState.RUNNING
    metadata: dict[str, Any] = Field(default_factory=dict)

    def output_text(self) -> str:
        """Return the concatenated text of the output."""
        if isinstance(self.output, str):
            return self.output
        return "".join(b.text for b in self.output if isinstance(b, TextBlock))


class HintBlock(_Block):
    """An out-of-band hint injected into the conversation (team message, scheduled task, ...)."""

    type: Literal["hint"] = "hint"
    hint: str | list[DataOrText] = Field(description="Plain text or multimodal blocks.")
    source: str | None = Field(default=None, description="Small JSON tag labelling the origin.")


ContentBlock = Annotated[
    TextBlock | ThinkingBlock | DataBlock | ToolCallBlock | ToolResultBlock | HintBlock,
    Field(discriminator="type"),
]

_ALLOWED_BLOCKS: dict[str, frozenset[str]] = {
    "user": frozenset({"text", "data"}),
    "system": frozenset({"text"}),
    "assistant": frozenset({"text", "thinking", "data", "tool_call", "tool_result", "hint"}),
}


class Usage(_Model):
    """Token usage of one reply or model call."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


class ReplyFinishedReason(StrEnum):
    """Why a reply ended."""

    COMPLETED = "completed"
    INTERRUPTED = "interrupted"
    EXCEED_MAX_ITERS = "exceed_max_iters"
    ERROR = "error"


class ErrorType(StrEnum):
    """UI-facing classification of a fatal reply error."""

    AUTHENTICATION = "authentication"
    PERMISSION = "permission"
    RATE_LIMIT = "rate_limit"
    INVALID_REQUEST = "invalid_request"
    UPSTREAM = "upstream"
    CONNECTION = "connection"
    INTERNAL = "internal"
    SETUP = "setup"
    UNKNOWN = "unknown"


class ErrorInfo(_Model):
    """A readable description of why a reply failed."""

    type: ErrorType = ErrorType.UNKNOWN
    message: str


B = TypeVar("B", bound=BaseModel)


class Msg(_Model):
    """One conversation turn: a user input, a whole assistant reply, or a system instruction."""

    name: str = Field(description="Sender name.")
    content: list[ContentBlock] = Field(description="Ordered content blocks.")
    role: Role = Field(description="Sender role.")
    id: str = Field(default_factory=new_id)
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: str = Field(default_factory=now_iso)
    usage: Usage | None = None
    finished_at: str | None = None
    finished_reason: ReplyFinishedReason | None = None
    structured_output: dict[str, Any] | None = None
    error: ErrorInfo | None = None

    @model_validator(mode="before")
    @classmethod
    def _wrap_text(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("content"), str):
            data = {**data, "content": [TextBlock(text=data["content"])]}
        return data

    @model_validator(mode="after")
    def _check_roles(self) -> Msg:
        allowed = _ALLOWED_BLOCKS[self.role]
        for block in self.content:
            if block.type not in allowed:
                raise ValueError(f"a {self.role} message cannot contain {block.type} blocks")
        return self

    def get_text_content(self, separator: str = "\n") -> str | None:
        """Return the text of all text blocks joined by `separator`, or None if there is none."""
        texts = [b.text for b in self.content if isinstance(b, TextBlock)]
        return separator.join(texts) if texts else None

    def get_text(self, separator: str = "\n") -> str | None:
        """The same as `get_text_content` (the name the spec's Chinese edition uses).

        AgentScope 2.0.11 has only `get_text_content`; this alias returns exactly what it does.
        """
        return self.get_text_content(separator)

    @overload
    def get_content_blocks(self, block_type: Literal["text"]) -> list[TextBlock]: ...
    @overload
    def get_content_blocks(self, block_type: Literal["tool_call"]) -> list[ToolCallBlock]: ...
    @overload
    def get_content_blocks(self, block_type: Literal["tool_result"]) -> list[ToolResultBlock]: ...
    @overload
    def get_content_blocks(
        self, block_type: str | list[str] | None = None
    ) -> list[ContentBlock]: ...
    def get_content_blocks(self, block_type: str | list[str] | None = None) -> list[Any]:
        """Return the blocks of `block_type` (a type or a list; all blocks when None), in order."""
        if block_type is None:
            return list(self.content)
        types = [block_type] if isinstance(block_type, str) else block_type
        return [b for b in self.content if b.type in types]

    def has_content_blocks(self, block_type: str | list[str] | None = None) -> bool:
        """Return whether the message holds a block of `block_type` (a type or a list of them)."""
        return bool(self.get_content_blocks(block_type))

    def find_block(self, block_id: str, kind: type[B]) -> B | None:
        """Return the first block of class `kind` whose id is `block_id`."""
        for block in self.content:
            if isinstance(block, kind) and getattr(block, "id", None) == block_id:
                return block
        return None

    def append_event(self, event: AgentEvent) -> Msg:
        """Apply one event of this reply to the message, in place, and return the message.

        Events of another reply, and events for a block the message does not hold, are skipped.

        Raises:
            FoldError: the event's data cannot be applied (undecodable base64, a base64 chunk
                for a URL data block, an invalid URL).
        """
        from agent_core._fold import apply_event

        apply_event(self, event)
        return self


_text_block = trusted_maker(TextBlock, "text")
_text_msg = trusted_maker(Msg, "name", "role", "content", checked=True)


def _msg(role: Role, name: str, content: str | list[Any], **fields: Any) -> Msg:
    if not fields and type(name) is str and type(content) is str:
        # The common text message (a prompt, a user turn): one text block, nothing to check.
        return _text_msg(name=name, role=role, content=[_text_block(text=content)])
    return Msg.model_validate({"name": name, "role": role, "content": content, **fields})


def UserMsg(name: str, content: str | list[Any], **fields: Any) -> Msg:
    """Build a user message (text and data blocks; a str becomes one text block)."""
    return _msg("user", name, content, **fields)


def AssistantMsg(name: str, content: str | list[Any], **fields: Any) -> Msg:
    """Build an assistant message (every block type)."""
    return _msg("assistant", name, content, **fields)


def SystemMsg(name: str, content: str | list[Any], **fields: Any) -> Msg:
    """Build a system message (text blocks only)."""
    return _msg("system", name, content, **fields)
