"""Looking into a Docker workspace's container from the daemon's side."""

from __future__ import annotations

from typing import Any

import aiodocker
from aiodocker.exceptions import DockerError


async def container_exists(docker_url: str, container_id: str) -> bool:
    """Whether the daemon still has the container."""
    docker = aiodocker.Docker(url=docker_url)
    try:
        await docker.containers.get(container_id)
    except DockerError as exc:
        if exc.status == 404:
            return False
        raise
    finally:
        await docker.close()
    return True


async def inspect(docker_url: str, container_id: str) -> dict[str, Any]:
    """The daemon's description of the container."""
    docker = aiodocker.Docker(url=docker_url)
    try:
        container = await docker.containers.get(container_id)
        return dict(container._container)
    finally:
        await docker.close()


async def containers(docker_url: str, workspace_id: str) -> list[dict[str, Any]]:
    """The running containers of the workspace `workspace_id`, as the daemon lists them."""
    docker = aiodocker.Docker(url=docker_url)
    try:
        found = await docker.containers.list(
            filters={"label": [f"troupe.workspace={workspace_id}"], "status": ["running"]}
        )
        return [dict(container._container) for container in found]
    finally:
        await docker.close()


async def remove_containers(docker_url: str, workspace_id: str) -> None:
    """Remove the workspace's containers (one a Ray actor opened and never closed)."""
    docker = aiodocker.Docker(url=docker_url)
    try:
        found = await docker.containers.list(
            all=True, filters={"label": [f"troupe.workspace={workspace_id}"]}
        )
        for container in found:
            await container.delete(force=True, v=True)
    finally:
        await docker.close()
