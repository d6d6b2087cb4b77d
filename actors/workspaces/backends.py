"""Which workspace backend a deployment runs, and the workspace manager for it."""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from actors.settings import RuntimeSettings
from workspaces import LocalWorkspace, LocalWorkspaceManager, WorkspaceManagerBase
from workspaces._env import agent_environment
from workspaces.docker import DockerPolicy
from workspaces.errors import DockerUnavailable, E2BUnavailable, SandboxUnavailable
from workspaces.sandbox import SandboxPolicy, SandboxWorkspace, sandbox_available

if TYPE_CHECKING:
    from workspaces.docker import DockerWorkspaceManager
    from workspaces.e2b import E2BWorkspaceManager

log = logging.getLogger(__name__)

LOCAL_WARNING = (
    "workspace backend 'local': agents' tools run unsandboxed on the server with its user's "
    "file access (development only)"
)


def resolve_backend(settings: RuntimeSettings) -> tuple[str, str | None]:
    """The backend `settings` asks for, made concrete, and a warning when it is unsafe.

    Raises:
        SandboxUnavailable: `sandbox` was asked for explicitly and cannot run here.
        DockerUnavailable: `docker` was asked for and its daemon (as this node reaches it)
            does not answer or lacks the image.
        E2BUnavailable: `e2b` was asked for without an API key.
    """
    backend = settings.workspace_backend
    if backend == "auto":
        why = sandbox_available()
        if why is None:
            return "sandbox", None
        return "local", f"{LOCAL_WARNING}: {why}"
    if backend == "sandbox":
        why = sandbox_available()
        if why is not None:
            raise SandboxUnavailable(f"workspace backend 'sandbox': {why}")
    if backend == "local":
        return "local", LOCAL_WARNING
    if backend == "docker":
        # The Docker and E2B clients are imported only by the backends that use them.
        from workspaces.docker.availability import docker_unavailable

        why = docker_unavailable(settings.docker_url, settings.docker_image)
        if why is not None:
            raise DockerUnavailable(f"workspace backend 'docker': {why}")
    if backend == "e2b" and not settings.e2b_api_key:
        raise E2BUnavailable(
            "workspace backend 'e2b': no API key (set E2B_API_KEY or TROUPE_E2B_API_KEY)"
        )
    return backend, None


def workspace_health(settings: RuntimeSettings) -> str:
    """The workspace backend as `/health` reports it: `ok (<backend>)`, a warning, or why not."""
    try:
        backend, warning = resolve_backend(settings)
    except (SandboxUnavailable, DockerUnavailable, E2BUnavailable) as exc:
        return f"unavailable: {exc}"
    return f"warning ({backend}): {warning}" if warning else f"ok ({backend})"


def _local(workdir: Path, workspace_id: str, **options: Any) -> LocalWorkspace:
    return LocalWorkspace(workdir, workspace_id, env=agent_environment(str(workdir)), **options)


def _docker(settings: RuntimeSettings) -> DockerWorkspaceManager:
    """The `docker` backend's manager: a container per workspace, keyed as the service places.

    `DockerWorkspaceManager` keys a workspace by user and by the session's workspace id or else
    its agent id, which is `actors.workspaces.ray_service.placement_key`: each workspace has one
    container, on the node its placement names.
    """
    from workspaces.docker.manager import DockerWorkspaceManager

    network = settings.docker_network or ("bridge" if settings.workspace_network else "none")
    return DockerWorkspaceManager(
        settings.workspace_root,
        ttl=settings.workspace_ttl,
        policy=DockerPolicy(network=network),
        image=settings.docker_image,
        python=settings.docker_python,
        mounts=settings.docker_mounts,
        docker_url=settings.docker_url,
    )


def _e2b(settings: RuntimeSettings) -> E2BWorkspaceManager:
    """The `e2b` backend's manager: a sandbox per workspace, paused when idle."""
    from workspaces.e2b.manager import E2BWorkspaceManager

    return E2BWorkspaceManager(
        ttl=settings.workspace_ttl,
        template=settings.e2b_template,
        api_key=settings.e2b_api_key,
        domain=settings.e2b_domain,
    )


def workspace_manager(settings: RuntimeSettings) -> WorkspaceManagerBase:
    """The workspace manager of the configured backend, under `settings.workspace_root`.

    The `docker` backend's daemon is not checked here (`resolve_backend` does at start-up): it
    may come and go, and opening a workspace while it is away fails saying so.

    Raises:
        SandboxUnavailable: the configured backend cannot run here.
    """
    if settings.workspace_backend == "docker":
        return _docker(settings)
    if settings.workspace_backend == "e2b":
        return _e2b(settings)
    backend, warning = resolve_backend(settings)
    if warning:
        log.warning(warning)
    root, ttl = settings.workspace_root, settings.workspace_ttl
    if backend == "sandbox":
        policy = SandboxPolicy(network=settings.workspace_network)
        factory = functools.partial(SandboxWorkspace, policy=policy)
        return LocalWorkspaceManager(root, ttl=ttl, factory=factory)
    if backend == "local":
        return LocalWorkspaceManager(root, ttl=ttl, factory=_local)
    raise SandboxUnavailable(f"workspace backend {backend!r} is not available in this build")
