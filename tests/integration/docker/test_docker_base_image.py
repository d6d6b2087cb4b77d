"""`DockerWorkspace(base_image=...)` builds its image once, then runs from it.

Offline, only the test image can be a base (nothing is pulled), and it holds no interpreter at
build time (the host's is bind-mounted when a container runs), so no `RUN` step can execute:
these tests use `install_troupe=False`, no `node_version` and no `extra_pip`. Not exercised
here, for that reason: installing Troupe, Node.js (NodeSource) and pip packages into a real
base such as `python:3.11-slim`; `tests/unit/workspaces/test_docker_image.py` checks the
Dockerfile those builds run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiodocker
import pytest

from tests.integration.docker._helpers import inspect
from tests.support.tool_calls import Agent
from workspaces.docker import DockerWorkspace
from workspaces.errors import DockerUnavailable

pytestmark = [pytest.mark.docker, pytest.mark.integration]


def based_on_the_test_image(docker_options: dict[str, Any]) -> dict[str, Any]:
    options = {key: value for key, value in docker_options.items() if key != "image"}
    return {**options, "base_image": docker_options["image"], "install_troupe": False}


async def image_ids(docker_url: str, repository: str) -> list[str]:
    docker = aiodocker.Docker(url=docker_url)
    try:
        images = await docker.images.list(filters={"reference": [repository]})
        return sorted(image["Id"] for image in images)
    finally:
        await docker.close()


async def test_the_image_is_built_once_and_the_tools_run_in_it(
    tmp_path: Path, docker_options: dict[str, Any]
) -> None:
    options = based_on_the_test_image(docker_options)
    first = DockerWorkspace(tmp_path / "one", "derived-1", default_mcps=[], **options)
    assert first.recipe is not None
    tag = first.recipe.tag()

    async with first:
        ok, out = await Agent(first.builtin_tools())("Bash", command="echo derived > made.txt")
        assert ok, out
        assert first.container_id is not None
        container = await inspect(docker_options["docker_url"], first.container_id)
    async with DockerWorkspace(tmp_path / "two", "derived-2", **options) as second:
        assert second.image == tag

    assert first.image == tag
    assert container["Config"]["Image"] == tag
    assert (tmp_path / "one" / "made.txt").read_text() == "derived\n"
    repository = tag.partition(":")[0]
    assert len(await image_ids(docker_options["docker_url"], f"{repository}:*")) == 1


async def test_a_base_image_the_daemon_lacks_is_a_clear_error(
    tmp_path: Path, docker_options: dict[str, Any]
) -> None:
    options = {**based_on_the_test_image(docker_options), "base_image": "troupe-absent:1"}

    with pytest.raises(DockerUnavailable, match="troupe-absent:1"):
        async with DockerWorkspace(tmp_path / "ws", **options):
            pass
