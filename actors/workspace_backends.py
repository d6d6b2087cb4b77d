"""Which workspace backend a deployment runs, and the workspace manager for it."""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any

from actors.settings import RuntimeSettings
from workspaces import LocalWorkspace, LocalWorkspaceManager, WorkspaceManagerBase
from workspaces._env import agent_environment
from workspaces.errors import SandboxUnavailable
from workspaces.sandbox import SandboxPolicy, SandboxWorkspace, sandbox_available

log = logging.getLogger(__name__)

LOCAL_WARNING = (
    "workspace backend 'local': agents' tools run unsandboxed on the server with its user's "
    "file access (development only)"
)


def resolve_backend(settings: RuntimeSettings) -> tuple[str, str | None]:
    """The backend `settings` asks for, made concrete, and a warning when it is unsafe.

    Raises:
        SandboxUnavailable: `sandbox` was asked for explicitly and cannot run here.
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
    return backend, None


def workspace_health(settings: RuntimeSettings) -> str:
    """The workspace backend as `/health` reports it: `ok (<backend>)`, a warning, or why not."""
    try:
        backend, warning = resolve_backend(settings)
    except SandboxUnavailable as exc:
        return f"unavailable: {exc}"
    return f"warning ({backend}): {warning}" if warning else f"ok ({backend})"


def _local(workdir: Path, workspace_id: str, **options: Any) -> LocalWorkspace:
    return LocalWorkspace(workdir, workspace_id, env=agent_environment(str(workdir)), **options)


def workspace_manager(settings: RuntimeSettings) -> WorkspaceManagerBase:
    """The workspace manager of the configured backend, under `settings.workspace_root`.

    Raises:
        SandboxUnavailable: the configured backend cannot run here.
    """
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
