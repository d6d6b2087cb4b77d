"""The model layer of agent_core: the chat-model interface, its responses and providers."""

from agent_core.model._response import ChatResponse, ChatUsage, FinishedReason
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
from agent_core.model.base import ChatModelBase, ToolChoice, ToolSchema, collect_response
from agent_core.model.card import ModelCard
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
