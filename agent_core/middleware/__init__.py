"""Agent middleware (agent_core layer): hooks around the reply, reasoning, acting and model calls.

`MiddlewareBase` is what users subclass, `TracingMiddleware` the built-in OpenTelemetry
instrumentation, and `MiddlewareChain` (with `call_model`) what the agent loop composes them with.
"""

from agent_core.middleware._base import (
    CompressHandler,
    EventHandler,
    MiddlewareBase,
    ModelCallHandler,
    ModelCallResult,
)
from agent_core.middleware._chain import (
    MiddlewareChain,
    call_model,
    collect_tools,
)
from agent_core.middleware._tracing import TracingMiddleware

__all__ = [
    "CompressHandler",
    "EventHandler",
    "MiddlewareBase",
    "MiddlewareChain",
    "ModelCallHandler",
    "ModelCallResult",
    "TracingMiddleware",
    "call_model",
    "collect_tools",
]
