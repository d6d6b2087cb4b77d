"""The workspace backends the escape suite runs against, and what each one isolates.

A backend is registered with how to start it (a context manager yielding a factory that builds
an unopened `LocalWorkspace` subclass, whose `host_workdir` the suite checks, for a directory,
an identifier and a `SandboxPolicy`: its limits, which a backend maps onto its own mechanism)
and with what it claims to isolate. `tests/integration/test_workspace_escapes.py` runs each
probe against every backend claiming what the probe attacks, starting each backend once per
module (`StartedBackends`). Adding a backend (a container, a remote sandbox) is one
`register(...)` call here.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

import pytest

from tests.support.docker import DockerDaemon, build_test_image, dockerd_unavailable, image_mounts
from workspaces import LocalWorkspace
from workspaces._env import agent_environment
from workspaces.docker import DockerPolicy, DockerWorkspace
from workspaces.sandbox import SandboxPolicy, SandboxWorkspace, sandbox_available


class Isolation(Enum):
    """What a backend keeps from its tools."""

    ENV = "the server's environment (the tools get a scrubbed one)"
    FILES = "the host's files outside the workspace"
    PROCESSES = "the host's processes (their command lines and environments)"
    NETWORK = "the network (loopback services included)"
    LIMITS = "resources beyond the policy (memory, processes, disk, /tmp)"


WorkspaceFactory = Callable[[Path, str, SandboxPolicy], LocalWorkspace]
Starter = Callable[[], contextlib.AbstractContextManager[WorkspaceFactory]]


class BackendUnavailable(Exception):
    """A backend could not be started here (its tests skip with this reason)."""


@dataclass(frozen=True)
class WorkspaceBackend:
    """A way to run a workspace, for the escape suite."""

    name: str
    start: Starter
    """Starts what the backend needs for the block and yields its workspace factory.

    Raises `BackendUnavailable` when it cannot start here."""
    isolates: frozenset[Isolation]
    unavailable: Callable[[], str | None] = lambda: None
    """Why the backend cannot run here (the tests skip with that reason), or None."""


BACKENDS: dict[str, WorkspaceBackend] = {}


def register(backend: WorkspaceBackend) -> None:
    """Add a backend to the suite."""
    BACKENDS[backend.name] = backend


def backends(isolation: Isolation) -> list[pytest.param]:  # type: ignore[valid-type]
    """The registered backends claiming `isolation`, as parameters (unavailable ones skipped)."""
    params = []
    for backend in BACKENDS.values():
        if isolation not in backend.isolates:
            continue
        why = backend.unavailable()
        marks = [pytest.mark.skip(reason=f"{backend.name}: {why}")] if why else []
        params.append(pytest.param(backend, id=backend.name, marks=marks))
    return params


@dataclass
class StartedBackends:
    """Backends started on first use and stopped together when `stack` closes."""

    stack: contextlib.ExitStack
    _started: dict[str, WorkspaceFactory | BackendUnavailable] = field(default_factory=dict)

    def factory(self, backend: WorkspaceBackend) -> WorkspaceFactory:
        """The started backend's factory; skips the test when it cannot start (saying why)."""
        if backend.name not in self._started:
            try:
                self._started[backend.name] = self.stack.enter_context(backend.start())
            except BackendUnavailable as exc:
                self._started[backend.name] = exc
        started = self._started[backend.name]
        if isinstance(started, BackendUnavailable):
            pytest.skip(f"{backend.name}: {started}")
        return started


def ready(factory: WorkspaceFactory) -> Starter:
    """The starter of a backend needing nothing started."""
    return lambda: contextlib.nullcontext(factory)


def _sandbox(workdir: Path, workspace_id: str, policy: SandboxPolicy) -> LocalWorkspace:
    return SandboxWorkspace(workdir, workspace_id, policy=policy)


def _local(workdir: Path, workspace_id: str, policy: SandboxPolicy) -> LocalWorkspace:
    # The development backend: a scrubbed environment, nothing else (no file, process or
    # network isolation, no limits), so only the environment probes apply to it.
    return LocalWorkspace(workdir, workspace_id, env=agent_environment(str(workdir)))


@contextlib.contextmanager
def _docker() -> Iterator[WorkspaceFactory]:
    """A private dockerd and the offline test image, for the block."""
    with contextlib.ExitStack() as stack:
        try:
            daemon = stack.enter_context(DockerDaemon.start())
            image = asyncio.run(build_test_image(daemon.url))
        except RuntimeError as exc:
            raise BackendUnavailable(f"no Docker daemon can run here: {exc}") from exc

        def create(workdir: Path, workspace_id: str, policy: SandboxPolicy) -> LocalWorkspace:
            limits = policy.model_dump(exclude={"network"})
            return DockerWorkspace(
                workdir,
                workspace_id,
                policy=DockerPolicy(network="bridge" if policy.network else "none", **limits),
                image=image,
                python=sys.executable,
                mounts=image_mounts(),
                docker_url=daemon.url,
            )

        yield create


register(
    WorkspaceBackend(
        name="bwrap",
        start=ready(_sandbox),
        isolates=frozenset(Isolation),
        unavailable=sandbox_available,
    )
)
register(WorkspaceBackend(name="local", start=ready(_local), isolates=frozenset({Isolation.ENV})))
register(
    WorkspaceBackend(
        name="docker",
        start=_docker,
        isolates=frozenset(Isolation),
        unavailable=dockerd_unavailable,
    )
)
