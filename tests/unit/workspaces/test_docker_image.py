"""`DockerWorkspace(base_image=..., node_version=..., extra_pip=...)`: the derived image's recipe.

The spec's example (building-blocks.md, "Workspace"):

    workspace = DockerWorkspace(
        base_image="python:3.11-slim",
        workdir="/data/docker-workspaces/agent-1",  # bind-mounted to /workspace
        node_version="20",
        extra_pip=["numpy", "pandas"],
        default_mcps=[],
        skill_paths=["./skills/web-search"],
    )

Building that image needs the network (the base image, NodeSource, PyPI), so these tests check
the Dockerfile it builds; `tests/integration/docker/test_docker_base_image.py` builds and runs
a derived image offline (no node, no pip: the steps that would download).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from workspaces.docker import DockerWorkspace, ImageRecipe
from workspaces.docker.image import TROUPE_SOURCES, build_context


def test_the_spec_example_describes_its_image(tmp_path: Path) -> None:
    skill = tmp_path / "skills" / "web-search"
    workspace = DockerWorkspace(
        base_image="python:3.11-slim",
        workdir=tmp_path / "agent-1",  # Port: "/data/docker-workspaces/agent-1"
        node_version="20",
        extra_pip=["numpy", "pandas"],
        default_mcps=[],
        skill_paths=[skill],  # Port: "./skills/web-search"
    )

    assert workspace.recipe == ImageRecipe(
        base_image="python:3.11-slim", node_version="20", extra_pip=("numpy", "pandas")
    )
    dockerfile = workspace.recipe.dockerfile().splitlines()
    assert dockerfile[0] == "FROM python:3.11-slim"
    assert "https://deb.nodesource.com/setup_20.x" in dockerfile[1]
    assert dockerfile[1].endswith("rm -rf /var/lib/apt/lists/*")
    assert [line for line in dockerfile if line.startswith("COPY")] == [
        f"COPY {name} /opt/troupe/{name}" for name in TROUPE_SOURCES
    ]
    (pip,) = [line for line in dockerfile if "pip install" in line]
    assert pip == (
        "RUN python3 -m pip install --no-cache-dir /opt/troupe numpy pandas && rm -rf /opt/troupe"
    )
    assert dockerfile[-1] == 'CMD ["sleep", "infinity"]'


def test_the_build_context_holds_the_dockerfile_and_troupe() -> None:
    import tarfile

    recipe = ImageRecipe(base_image="python:3.11-slim")
    with tarfile.open(fileobj=build_context(recipe)) as tar:
        names = tar.getnames()
        dockerfile = tar.extractfile("Dockerfile")
        assert dockerfile is not None
        assert dockerfile.read().decode() == recipe.dockerfile()
    assert "workspaces/toolhost/__main__.py" in names
    assert not [name for name in names if "__pycache__" in name or name.startswith("tests/")]


def test_an_image_with_troupe_gets_only_the_extras() -> None:
    plain = DockerWorkspace(image="troupe-workspace:latest")
    extras = DockerWorkspace(image="troupe-workspace:latest", extra_pip=["pandas>=2"])
    own = DockerWorkspace(base_image="mine:1", install_troupe=False)

    assert plain.recipe is None
    assert extras.recipe is not None
    assert extras.recipe.dockerfile().splitlines()[:2] == [
        "FROM troupe-workspace:latest",
        "RUN python3 -m pip install --no-cache-dir 'pandas>=2'",
    ]
    assert own.recipe is not None
    assert own.recipe.dockerfile().splitlines()[0] == "FROM mine:1"
    assert "RUN" not in own.recipe.dockerfile()


def test_the_tag_follows_the_recipe() -> None:
    first = ImageRecipe(base_image="python:3.11-slim", extra_pip=("numpy",))

    assert first.tag() == ImageRecipe(base_image="python:3.11-slim", extra_pip=("numpy",)).tag()
    assert first.tag() != ImageRecipe(base_image="python:3.11-slim").tag()
    assert first.tag() != first.model_copy(update={"node_version": "20"}).tag()
    assert first.tag().startswith("troupe-workspace-derived:")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("node_version", "20; rm -rf /"),
        ("node_version", "lts"),
        ("extra_pip", ["--index-url=http://evil"]),
        ("extra_pip", ["numpy && curl x"]),
        ("base_image", "python:3.11 AS x\nRUN id"),
    ],
)
def test_malformed_arguments_are_refused(field: str, value: object) -> None:
    arguments: dict[str, object] = {"base_image": "python:3.11-slim", field: value}

    with pytest.raises(ValidationError, match=field):
        DockerWorkspace(**arguments)  # type: ignore[arg-type]
