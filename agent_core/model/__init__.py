"""The model layer of agent_core: the chat-model interface, its chunk types and providers."""

from agent_core.model._structured import (
    STRUCTURED_OUTPUT_TOOL_NAME,
    StructuredModel,
    StructuredResponse,
    StructuredSchema,
    generate_structured_output,
)
from agent_core.model.base import (
    ChatModelBase,
    ChatResponse,
    ModelChunk,
    TextChunk,
    ThinkingChunk,
    ToolCallArgsChunk,
    ToolCallStartChunk,
    ToolSchema,
    UsageChunk,
)
from agent_core.model.card import ModelCard
from agent_core.model.openai import OpenAIChatModel

__all__ = [
    "STRUCTURED_OUTPUT_TOOL_NAME",
    "ChatModelBase",
    "ChatResponse",
    "ModelCard",
    "ModelChunk",
    "OpenAIChatModel",
    "StructuredModel",
    "StructuredResponse",
    "StructuredSchema",
    "TextChunk",
    "ThinkingChunk",
    "ToolCallArgsChunk",
    "ToolCallStartChunk",
    "ToolSchema",
    "UsageChunk",
    "generate_structured_output",
]
