"""The agent of agent_core: the ReAct loop and its configuration.

The configuration loads eagerly; the loop (with the toolkit, the permission engine and the
event folding it reaches) loads on first use, so a process that only stores or validates agent
configurations, such as a session host before it hosts a session, does not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_core._lazy import lazy_names
from agent_core.agent._config import ContextConfig, ModelConfig, ReActConfig
from agent_core.agent._injection import RUNTIME_STATE_SOURCE, InjectionConfig
from agent_core.agent._tokens import ByteTokenCounter, CachedTokenCounter, TokenCounter

if TYPE_CHECKING:
    from agent_core.agent._agent import Agent, AgentInput
    from agent_core.agent._reply import ReplyBuilder
    from agent_core.agent._restart import Restarted, reads_only
    from agent_core.agent._resume import ResumeEvent

_LAZY = {
    "Agent": "agent_core.agent._agent",
    "AgentInput": "agent_core.agent._agent",
    "ReplyBuilder": "agent_core.agent._reply",
    "Restarted": "agent_core.agent._restart",
    "ResumeEvent": "agent_core.agent._resume",
    "reads_only": "agent_core.agent._restart",
}


__getattr__ = lazy_names(__name__, _LAZY)


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
