"""serve: Troupe's HTTP API (FastAPI app, Ray Serve deployment, CLI)."""
