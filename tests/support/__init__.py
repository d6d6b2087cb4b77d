"""Test helpers shared by unit and integration tests."""

from pathlib import Path

COMPAT_DIR = Path(__file__).parents[1] / "data" / "compat"
"""AgentScope's recorded API schema and SSE frames, copied into the test data."""
