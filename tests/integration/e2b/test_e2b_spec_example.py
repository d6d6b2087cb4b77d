"""The spec's `E2BWorkspace` example (building-blocks.md, "Workspace"), against the local E2B.

    workspace = E2BWorkspace(
        template="base",
        api_key="your-e2b-api-key",   # or set E2B_API_KEY
        timeout_seconds=300,
        default_mcps=[],
        skill_paths=["./skills/web-search"],
    )
    await workspace.initialize()

`# Port:` marks what reaching the local server needs: its key and URLs, the interpreter and
Troupe's code in the sandbox, and a skill directory of the test's own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.e2b_server import LocalE2B
from tests.unit.workspaces._helpers import write_skill
from workspaces.e2b import E2BWorkspace

pytestmark = [pytest.mark.e2b, pytest.mark.integration, pytest.mark.asyncio(loop_scope="module")]


async def test_the_spec_example_opens_a_sandbox_workspace(
    local_e2b: LocalE2B, e2b_options: dict[str, Any], tmp_path: Path
) -> None:
    skill = write_skill(tmp_path / "skills" / "web-search", "web-search", "Search the web.")
    api_params = {k: v for k, v in e2b_options["api_params"].items() if k != "api_key"}

    workspace = E2BWorkspace(
        template="base",
        api_key=local_e2b.api_key,  # Port: the local server's key
        timeout_seconds=300,
        default_mcps=[],
        skill_paths=[str(skill)],  # Port: "./skills/web-search"
        python=e2b_options["python"],  # Port: the sandbox runs this checkout's interpreter
        sandbox_env=e2b_options["sandbox_env"],
        api_params=api_params,
    )
    await workspace.initialize()
    try:
        skills = await workspace.list_skills()
        mcps = await workspace.list_mcps()
        sandbox_id = workspace.sandbox_id
    finally:
        await workspace.close()

    assert [s.name for s in skills] == ["web-search"]
    assert mcps == []
    assert sandbox_id is not None
    assert local_e2b.sandboxes[sandbox_id].template == "base"
