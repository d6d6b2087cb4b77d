"""The workspace backends the escape suite runs against, and what each one isolates.

A backend is registered with a factory building an (unopened) workspace for a directory, an
identifier and a `SandboxPolicy` (its limits; a backend maps them onto its own mechanism), and
with what it claims to isolate. `tests/integration/test_workspace_escapes.py` runs each probe
against every backend claiming what the probe attacks. Adding a backend (a container, a remote
sandbox) is one `register(...)` call here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import pytest

from workspaces import LocalWorkspace, WorkspaceBase
from workspaces._env import agent_environment
from workspaces.sandbox import SandboxPolicy, SandboxWorkspace, sandbox_available


class Isolation(Enum):
    """What a backend keeps from its tools."""

    ENV = "the server's environment (the tools get a scrubbed one)"
    FILES = "the host's files outside the workspace"
    PROCESSES = "the host's processes (their command lines and environments)"
    NETWORK = "the network (loopback services included)"
    LIMITS = "resources beyond the policy (memory, processes, disk, /tmp)"


WorkspaceFactory = Callable[[Path, str, SandboxPolicy], WorkspaceBase]


@dataclass(frozen=True)
class WorkspaceBackend:
    """A way to run a workspace, for the escape suite."""

    name: str
    create: WorkspaceFactory
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


def _sandbox(workdir: Path, workspace_id: str, policy: SandboxPolicy) -> WorkspaceBase:
    return SandboxWorkspace(workdir, workspace_id, policy=policy)


def _local(workdir: Path, workspace_id: str, policy: SandboxPolicy) -> WorkspaceBase:
    # The development backend: a scrubbed environment, nothing else (no file, process or
    # network isolation, no limits), so only the environment probes apply to it.
    return LocalWorkspace(workdir, workspace_id, env=agent_environment(str(workdir)))


register(
    WorkspaceBackend(
        name="bwrap",
        create=_sandbox,
        isolates=frozenset(Isolation),
        unavailable=sandbox_available,
    )
)
register(WorkspaceBackend(name="local", create=_local, isolates=frozenset({Isolation.ENV})))
