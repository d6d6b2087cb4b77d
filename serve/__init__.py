"""serve: Troupe's HTTP API — the FastAPI app (`create_app`), its Serve deployment and the CLI.

The names load on first use: `troupe serve` answers on its port before FastAPI and the runtime
are imported (see `serve.startup`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_core._lazy import lazy_names

if TYPE_CHECKING:
    from actors.teams.store import SubAgentTemplate
    from serve.agui import AGUIProtocolMiddleware
    from serve.app import build_app, cors_middleware, create_app
    from serve.protocol import ProtocolMiddlewareBase

_SOURCES = {
    "SubAgentTemplate": "actors.teams.store",
    "AGUIProtocolMiddleware": "serve.agui",
    "ProtocolMiddlewareBase": "serve.protocol",
    "build_app": "serve.app",
    "cors_middleware": "serve.app",
    "create_app": "serve.app",
}

__all__ = [
    "AGUIProtocolMiddleware",
    "ProtocolMiddlewareBase",
    "SubAgentTemplate",
    "build_app",
    "cors_middleware",
    "create_app",
]


__getattr__ = lazy_names(__name__, _SOURCES)
