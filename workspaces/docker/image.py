"""Workspace images derived from a base image (`DockerWorkspace(base_image=...)`).

`ImageRecipe` says what to add to the base: Troupe itself (what the tool host and the MCP
gateway run), Node.js (for `npx` MCP servers) and extra pip packages. `ensure_image` builds
the recipe once: the tag is a hash of the Dockerfile and of the Troupe sources it copies, so a
second workspace with the same recipe (and an unchanged Troupe) reuses the image.
"""

from __future__ import annotations

import hashlib
import io
import shlex
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import aiodocker
import aiohttp
from aiodocker.exceptions import DockerError
from pydantic import ConfigDict, Field

from agent_core.deferred_model import DeferredModel
from workspaces.errors import DockerUnavailable

REPO = Path(__file__).resolve().parents[2]
TROUPE_SOURCES = ("pyproject.toml", "README.md", "agent_core", "workspaces", "actors", "serve")
"""What `pip install` of Troupe needs, relative to the repository root."""
IMAGE_REPOSITORY = "troupe-workspace-derived"
_INSTALL_DIR = "/opt/troupe"
_REQUIREMENT = r"^[A-Za-z0-9][A-Za-z0-9._\[\],<>=!~@:/+-]*$"  # no options, no shell syntax
_UNREACHABLE = 900  # aiodocker's status for a request that never reached the daemon


class ImageRecipe(DeferredModel):
    """What a derived workspace image adds to its base."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_image: str = Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._/:@-]*$",
        max_length=255,
        description="The image to start from, e.g. `python:3.11-slim`.",
    )
    node_version: str | None = Field(
        default=None,
        pattern=r"^[0-9]{1,3}$",
        description="Node.js major version to install (Debian-based images, from NodeSource).",
    )
    extra_pip: tuple[Annotated[str, Field(pattern=_REQUIREMENT)], ...] = Field(
        default=(),
        description="Requirements to pip install, e.g. `numpy` or `pandas>=2`.",
    )
    install_troupe: bool = Field(
        default=True,
        description="Install Troupe (needed unless the base image already provides it).",
    )
    python: str = Field(
        default="python3",
        pattern=r"^[A-Za-z0-9._/-]+$",
        description="The base image's interpreter pip installs into.",
    )

    def dockerfile(self) -> str:
        """The Dockerfile of the derived image (build context: `TROUPE_SOURCES`)."""
        lines = [f"FROM {self.base_image}"]
        if self.node_version:
            lines.append(
                "RUN apt-get update"
                " && apt-get install -y --no-install-recommends curl ca-certificates"
                f" && curl -fsSL https://deb.nodesource.com/setup_{self.node_version}.x | bash -"
                " && apt-get install -y --no-install-recommends nodejs"
                " && rm -rf /var/lib/apt/lists/*"
            )
        pip = f"{self.python} -m pip install --no-cache-dir"
        extra = " ".join(shlex.quote(requirement) for requirement in self.extra_pip)
        if self.install_troupe:
            lines += [f"COPY {name} {_INSTALL_DIR}/{name}" for name in TROUPE_SOURCES]
            lines.append(
                f"RUN {pip} {_INSTALL_DIR} {extra}".rstrip() + f" && rm -rf {_INSTALL_DIR}"
            )
        elif extra:
            lines.append(f"RUN {pip} {extra}")
        lines.append("WORKDIR /workspace")
        lines.append('CMD ["sleep", "infinity"]')
        return "\n".join(lines) + "\n"

    def tag(self) -> str:
        """The derived image's tag: a hash of its Dockerfile and of what it copies."""
        digest = hashlib.sha256(self.dockerfile().encode())
        if self.install_troupe:
            for path in _source_files():
                digest.update(str(path.relative_to(REPO)).encode() + b"\0")
                digest.update(path.read_bytes())
        return f"{IMAGE_REPOSITORY}:{digest.hexdigest()[:24]}"


def _source_files() -> Iterator[Path]:
    for name in TROUPE_SOURCES:
        root = REPO / name
        paths = [root] if root.is_file() else sorted(root.rglob("*"))
        for path in paths:
            if path.is_file() and "__pycache__" not in path.parts:
                yield path


def build_context(recipe: ImageRecipe) -> io.BytesIO:
    """The build context of `recipe`: its Dockerfile and, if it installs Troupe, the sources."""
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        data = recipe.dockerfile().encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        if recipe.install_troupe:
            for path in _source_files():
                tar.add(path, arcname=str(path.relative_to(REPO)), recursive=False)
    context.seek(0)
    return context


async def ensure_image(docker: aiodocker.Docker, recipe: ImageRecipe) -> str:
    """Return the tag of `recipe`'s image, building it unless the daemon already has it.

    Raises:
        DockerUnavailable: The daemon cannot be reached or the build failed (its error says
            which step).
    """
    tag = recipe.tag()
    try:
        try:
            await docker.images.inspect(tag)
            return tag
        except DockerError as exc:
            if exc.status != 404:
                raise
        log = await docker.images.build(
            fileobj=build_context(recipe), encoding="identity", tag=tag, rm=True, stream=False
        )
    except DockerError as exc:
        if exc.status == _UNREACHABLE:
            raise DockerUnavailable(f"cannot reach the Docker daemon: {exc.message}") from exc
        raise DockerUnavailable(
            f"cannot build an image from {recipe.base_image!r}: {exc.message}"
        ) from exc
    except (aiohttp.ClientError, OSError, ValueError, AssertionError) as exc:
        raise DockerUnavailable(f"cannot reach the Docker daemon: {exc}") from exc
    errors = [str(entry["error"]) for entry in log if "error" in entry]
    if errors:
        raise DockerUnavailable(f"building the image from {recipe.base_image!r} failed: {errors}")
    return tag
