"""agent_core: the framework-free building blocks (messages, events, agent loop, models, tools).

Module paths mirror AgentScope's (`agentscope.X` → `agent_core.X`); this layer imports no Ray,
Redis or web framework.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
