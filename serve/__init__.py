"""serve: Troupe's HTTP API — the FastAPI app (`build_app`), its Serve deployment and the CLI."""

from serve.app import build_app

__all__ = ["build_app"]
