"""agent_core: the framework-free building blocks (messages, events, agent loop, models, tools).

Module paths mirror AgentScope's (`agentscope.X` → `agent_core.X`); this layer imports no Ray,
Redis or web framework. `Agent` is also importable from here (`from agent_core import Agent`),
loaded on first use so that importing a small module does not load the whole loop.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

# httpx imports its command-line client (click, rich, pygments: ~200 ms and several MiB) when
# those happen to be installed; no process of ours runs it, so it is marked absent, which
# httpx handles by leaving `httpx.main` a stub. The `httpx` console script is unaffected.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

if TYPE_CHECKING:
    from agent_core.agent import Agent

__version__ = "0.1.0"
__all__ = ["Agent", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "Agent":
        from agent_core.agent import Agent

        return Agent
    raise AttributeError(f"module 'agent_core' has no attribute {name!r}")
