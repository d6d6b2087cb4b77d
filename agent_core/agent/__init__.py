"""The agent of agent_core: the ReAct loop and its configuration."""

from agent_core.agent._agent import Agent, AgentInput
from agent_core.agent._config import ContextConfig, ModelConfig, ReActConfig
from agent_core.agent._injection import RUNTIME_STATE_SOURCE, InjectionConfig
from agent_core.agent._reply import ReplyBuilder
from agent_core.agent._restart import Restarted, reads_only
from agent_core.agent._resume import ResumeEvent
from agent_core.agent._tokens import ByteTokenCounter, CachedTokenCounter, TokenCounter

__all__ = [
    "RUNTIME_STATE_SOURCE",
    "Agent",
    "AgentInput",
    "ByteTokenCounter",
    "CachedTokenCounter",
    "ContextConfig",
    "InjectionConfig",
    "ModelConfig",
    "ReActConfig",
    "ReplyBuilder",
    "Restarted",
    "ResumeEvent",
    "TokenCounter",
    "reads_only",
]
