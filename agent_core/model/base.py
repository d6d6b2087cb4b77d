"""The chat-model interface: a provider turns messages + tool schemas into a stream of chunks."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_core.message import Msg, TextBlock, ThinkingBlock, ToolCallBlock, Usage

if TYPE_CHECKING:
    from agent_core.model._structured import StructuredModel, StructuredResponse
from agent_core.model.card import ModelCard, load_model_cards


class _Chunk(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TextChunk(_Chunk):
    """A piece of assistant text."""

    type: Literal["text"] = "text"
    text: str


class ThinkingChunk(_Chunk):
    """A piece of model reasoning."""

    type: Literal["thinking"] = "thinking"
    text: str


class ToolCallStartChunk(_Chunk):
    """The model starts a tool call (always before its argument chunks)."""

    type: Literal["tool_call_start"] = "tool_call_start"
    call_id: str
    name: str


class ToolCallArgsChunk(_Chunk):
    """A JSON fragment of a started tool call's arguments."""

    type: Literal["tool_call_args"] = "tool_call_args"
    call_id: str
    delta: str


class UsageChunk(_Chunk):
    """Token usage of the call (usually last)."""

    type: Literal["usage"] = "usage"
    usage: Usage


ModelChunk = Annotated[
    TextChunk | ThinkingChunk | ToolCallStartChunk | ToolCallArgsChunk | UsageChunk,
    Field(discriminator="type"),
]


class ToolSchema(BaseModel):
    """A tool as the model sees it: name, description and JSON schema of its input."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    parameters: dict[str, Any]


class ChatResponse(BaseModel):
    """A whole model answer, accumulated from its chunks."""

    content: list[TextBlock | ThinkingBlock | ToolCallBlock] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)

    def add(self, chunk: ModelChunk) -> None:
        """Fold one streamed chunk into the response."""
        last = self.content[-1] if self.content else None
        match chunk:
            case TextChunk():
                if isinstance(last, TextBlock):
                    last.text += chunk.text
                else:
                    self.content.append(TextBlock(text=chunk.text))
            case ThinkingChunk():
                if isinstance(last, ThinkingBlock):
                    last.thinking += chunk.text
                else:
                    self.content.append(ThinkingBlock(thinking=chunk.text))
            case ToolCallStartChunk():
                self.content.append(ToolCallBlock(id=chunk.call_id, name=chunk.name, input=""))
            case ToolCallArgsChunk():
                for block in reversed(self.content):
                    if isinstance(block, ToolCallBlock) and block.id == chunk.call_id:
                        block.input += chunk.delta
                        break
            case UsageChunk():
                self.usage = chunk.usage


class ChatModelBase(ABC):
    """A chat model: streams the answer to a conversation as `ModelChunk`s.

    Implementations own their HTTP client and formatting; the agent loop only sees chunks.
    A provider narrows `Parameters` to the request parameters it accepts, names itself in
    `model_class` and points `cards_dir` at its shipped model cards.
    """

    class Parameters(BaseModel):
        """Provider request parameters (temperature, max_tokens, ...); none by default."""

        model_config = ConfigDict(extra="forbid")

    model_class: ClassVar[str] = ""
    cards_dir: ClassVar[Traversable | None] = None

    model_name: str
    context_length: int = 128_000

    @classmethod
    def list_models(cls, cards_dir: str | Path | None = None) -> list[ModelCard]:
        """Return the cards of the models this class serves (none if it ships no cards).

        Args:
            cards_dir: Read the cards from this directory instead of the shipped ones.

        Raises:
            ValueError: a card file is malformed.
        """
        directory = Path(cards_dir) if cards_dir is not None else cls.cards_dir
        if directory is None:
            return []
        return load_model_cards(directory, cls.Parameters, cls.model_class)

    @abstractmethod
    def stream(
        self,
        messages: list[Msg],
        tools: list[ToolSchema] | None = None,
        tool_choice: str | None = None,
    ) -> AsyncIterator[ModelChunk]:
        """Stream the model's answer to `messages`.

        Args:
            messages: The conversation, system prompt first.
            tools: Tools the model may call.
            tool_choice: "auto", "none", "required" or a tool name to force.

        Raises:
            ModelHTTPError: the provider answered with an error status.
            ModelConnectionError: the provider could not be reached or the stream broke.
            ModelResponseError: the provider's answer was malformed.
        """

    async def __call__(
        self,
        messages: list[Msg],
        tools: list[ToolSchema] | None = None,
        tool_choice: str | None = None,
    ) -> ChatResponse:
        """Return the whole answer to `messages` (accumulates `stream`)."""
        response = ChatResponse()
        async for chunk in self.stream(messages, tools, tool_choice):
            response.add(chunk)
        return response

    async def generate_structured_output(
        self,
        messages: list[Msg],
        structured_model: StructuredModel,
        *,
        max_repairs: int = 1,
    ) -> StructuredResponse:
        """Answer `messages` with output validated against `structured_model`.

        The model is forced to call a tool whose input schema is the pydantic model's (or the
        given JSON schema); invalid output gets a repair round telling the model what was wrong.

        Raises:
            StructuredOutputError: the output is still invalid after `max_repairs` repairs.
        """
        from agent_core.model._structured import generate_structured_output

        return await generate_structured_output(
            self, messages, structured_model, max_repairs=max_repairs
        )

    async def aclose(self) -> None:  # noqa: B027 - optional hook, most models hold nothing
        """Release network resources held by the model (no-op by default)."""
