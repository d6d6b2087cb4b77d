"""The model layer of agent_core: the chat-model interface, its responses and providers.

The interface loads eagerly; each provider (and structured output, which needs a JSON Schema
validator) loads on first use, so a process pays only for the providers it talks to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_core._lazy import lazy_names
from agent_core.model._response import ChatResponse, ChatUsage, FinishedReason
from agent_core.model.base import ChatModelBase, ToolChoice, ToolSchema, collect_response
from agent_core.model.card import ModelCard

if TYPE_CHECKING:
    from agent_core.model._structured import (
        STRUCTURED_OUTPUT_TOOL_NAME,
        StructuredModel,
        StructuredResponse,
        StructuredSchema,
        generate_structured_output,
    )
    from agent_core.model.anthropic import (
        AnthropicChatFormatter,
        AnthropicChatModel,
        AnthropicMultiAgentFormatter,
    )
    from agent_core.model.dashscope import DashScopeChatModel
    from agent_core.model.deepseek import DeepSeekChatModel
    from agent_core.model.gemini import GeminiChatModel
    from agent_core.model.moonshot import MoonshotChatModel
    from agent_core.model.ollama import OllamaChatModel
    from agent_core.model.openai import OpenAIChatModel
    from agent_core.model.openai_response import (
        OpenAIResponseFormatter,
        OpenAIResponseModel,
        OpenAIResponseMultiAgentFormatter,
    )
    from agent_core.model.xai import XAIChatModel

_LAZY = {
    "STRUCTURED_OUTPUT_TOOL_NAME": "agent_core.model._structured",
    "StructuredModel": "agent_core.model._structured",
    "StructuredResponse": "agent_core.model._structured",
    "StructuredSchema": "agent_core.model._structured",
    "generate_structured_output": "agent_core.model._structured",
    "AnthropicChatFormatter": "agent_core.model.anthropic",
    "AnthropicChatModel": "agent_core.model.anthropic",
    "AnthropicMultiAgentFormatter": "agent_core.model.anthropic",
    "DashScopeChatModel": "agent_core.model.dashscope",
    "DeepSeekChatModel": "agent_core.model.deepseek",
    "GeminiChatModel": "agent_core.model.gemini",
    "MoonshotChatModel": "agent_core.model.moonshot",
    "OllamaChatModel": "agent_core.model.ollama",
    "OpenAIChatModel": "agent_core.model.openai",
    "OpenAIResponseFormatter": "agent_core.model.openai_response",
    "OpenAIResponseModel": "agent_core.model.openai_response",
    "OpenAIResponseMultiAgentFormatter": "agent_core.model.openai_response",
    "XAIChatModel": "agent_core.model.xai",
}


__getattr__ = lazy_names(__name__, _LAZY)


__all__ = [
    "STRUCTURED_OUTPUT_TOOL_NAME",
    "AnthropicChatFormatter",
    "AnthropicChatModel",
    "AnthropicMultiAgentFormatter",
    "ChatModelBase",
    "ChatResponse",
    "ChatUsage",
    "DashScopeChatModel",
    "DeepSeekChatModel",
    "FinishedReason",
    "GeminiChatModel",
    "ModelCard",
    "MoonshotChatModel",
    "OllamaChatModel",
    "OpenAIChatModel",
    "OpenAIResponseFormatter",
    "OpenAIResponseModel",
    "OpenAIResponseMultiAgentFormatter",
    "StructuredModel",
    "StructuredResponse",
    "StructuredSchema",
    "ToolChoice",
    "ToolSchema",
    "XAIChatModel",
    "collect_response",
    "generate_structured_output",
]
