"""Docker workspace fixtures: a private dockerd and the offline test image, once per run.

``docker_daemon`` (session)  a `DockerDaemon` of our own; the tests skip, saying why, only
                             when no dockerd can run here.
``docker_image`` (session)   the test image's tag (see `tests.support.docker`).
``docker_options`` (session) the `DockerWorkspace` keyword arguments that use them.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.docker import (
    MCP_SERVERS,
    DockerDaemon,
    build_test_image,
    dockerd_unavailable,
    image_mounts,
)


@pytest.fixture(scope="session")
def docker_daemon() -> Iterator[DockerDaemon]:
    why = dockerd_unavailable()
    if why is not None:
        pytest.skip(f"no Docker daemon can run here: {why}")
    try:
        with DockerDaemon.start() as daemon:
            yield daemon
    except RuntimeError as exc:
        pytest.skip(f"no Docker daemon can run here: {exc}")


@pytest.fixture(scope="session")
def docker_image(docker_daemon: DockerDaemon) -> str:
    return asyncio.run(build_test_image(docker_daemon.url))


@pytest.fixture(scope="session")
def docker_options(docker_daemon: DockerDaemon, docker_image: str) -> dict[str, Any]:
    return {
        "image": docker_image,
        "python": sys.executable,
        "mounts": image_mounts(MCP_SERVERS),
        "docker_url": docker_daemon.url,
    }
