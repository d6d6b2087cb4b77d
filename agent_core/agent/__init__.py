"""The agent of agent_core: the ReAct loop and its configuration."""

from agent_core.agent._agent import Agent, AgentInput
from agent_core.agent._config import ContextConfig, ModelConfig, ReActConfig
from agent_core.agent._reply import ReplyBuilder
from agent_core.agent._resume import ResumeEvent

__all__ = [
    "Agent",
    "AgentInput",
    "ContextConfig",
    "ModelConfig",
    "ReActConfig",
    "ReplyBuilder",
    "ResumeEvent",
]
