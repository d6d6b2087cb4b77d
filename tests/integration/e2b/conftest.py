"""E2B workspace fixtures: the local E2B stand-in (`tests.support.e2b_server`), once per module.

No E2B key is needed: the SDK is pointed at the local server, whose sandboxes are bubblewrap
process trees. The tests skip, saying why, only where that cannot run (not root, no bwrap).

``local_e2b`` (module)     the running `LocalE2B`.
``e2b_options`` (module)   the `E2BWorkspace` keyword arguments that reach it.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from tests.support.e2b_server import REPO, LocalE2B, unavailable


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def local_e2b(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LocalE2B]:
    why = unavailable()
    if why is not None:
        pytest.skip(f"the local E2B cannot run here: {why}")
    async with LocalE2B(tmp_path_factory.mktemp("e2b")).running() as server:
        yield server


@pytest.fixture(scope="module")
def e2b_options(local_e2b: LocalE2B) -> dict[str, Any]:
    return {
        "python": sys.executable,
        # Troupe's code, read-only in every sandbox, for the tool host and the gateway.
        "sandbox_env": {"PYTHONPATH": str(REPO)},
        "api_params": local_e2b.api_params,
    }
