"""`docker_unavailable`: whether a Docker daemon can serve workspaces, checked at start-up."""

from __future__ import annotations

import asyncio
import concurrent.futures

import aiodocker
import aiohttp
from aiodocker.exceptions import DockerError

from workspaces.docker.policy import DEFAULT_IMAGE

_NOT_FOUND = 404


async def _probe(url: str | None, image: str) -> str | None:
    try:
        docker = aiodocker.Docker(url=url)
    # aiodocker asserts (ValueError under -O) when neither DOCKER_HOST nor a local socket exists.
    except (AssertionError, ValueError) as exc:
        return f"no Docker daemon configured (set DOCKER_HOST or a URL): {exc or 'no socket'}"
    try:
        try:
            await docker.version()
        except (DockerError, aiohttp.ClientError, OSError) as exc:
            return f"cannot reach the Docker daemon at {docker.docker_host}: {exc}"
        try:
            await docker.images.inspect(image)
        except DockerError as exc:
            if exc.status != _NOT_FOUND:
                raise
            return (
                f"the image {image!r} is not on the Docker daemon at {docker.docker_host} "
                "(build it: docker build -f workspaces/docker/Dockerfile -t "
                f"{image} .)"
            )
        return None
    finally:
        await docker.close()


def docker_unavailable(
    url: str | None = None, image: str = DEFAULT_IMAGE, timeout: float = 5.0
) -> str | None:
    """Why the daemon at `url` cannot run workspaces of `image`, or None when it can.

    Blocking (it runs its own event loop in a worker thread, so it may be called anywhere).

    Args:
        url: The daemon (default: `DOCKER_HOST` or the local socket).
        image: The workspace image, which must be on the daemon.
        timeout: Seconds to wait for the daemon's answers.
    """

    def check() -> str | None:
        try:
            return asyncio.run(asyncio.wait_for(_probe(url, image), timeout))
        except TimeoutError:
            return f"the Docker daemon did not answer within {timeout:g}s"
        except DockerError as exc:
            return f"the Docker daemon refused the check: {exc.message}"

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(check).result()
