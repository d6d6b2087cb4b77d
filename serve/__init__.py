"""serve: Troupe's HTTP API — the FastAPI app (`create_app`), its Serve deployment and the CLI."""

from actors.team import SubAgentTemplate
from serve.agui import AGUIProtocolMiddleware
from serve.app import build_app, cors_middleware, create_app
from serve.protocol import ProtocolMiddlewareBase

__all__ = [
    "AGUIProtocolMiddleware",
    "ProtocolMiddlewareBase",
    "SubAgentTemplate",
    "build_app",
    "cors_middleware",
    "create_app",
]
