"""The model layer of agent_core: the chat-model interface, its chunk types and providers."""

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
from agent_core.model.openai import OpenAIChatModel

__all__ = [
    "ChatModelBase",
    "ChatResponse",
    "ModelChunk",
    "OpenAIChatModel",
    "TextChunk",
    "ThinkingChunk",
    "ToolCallArgsChunk",
    "ToolCallStartChunk",
    "ToolSchema",
    "UsageChunk",
]
