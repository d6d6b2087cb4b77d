"""serve: Troupe's HTTP API — the FastAPI app (`create_app`), its Serve deployment and the CLI."""

from serve.app import build_app, cors_middleware, create_app

__all__ = ["build_app", "cors_middleware", "create_app"]
