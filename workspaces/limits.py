"""`WorkspaceLimits`: what an isolated workspace's processes may use, whatever the backend."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from agent_core.deferred_model import DeferredModel

MiB = 1024 * 1024


class WorkspaceLimits(DeferredModel):
    """Resource limits shared by the isolating backends (bubblewrap, Docker)."""

    model_config = ConfigDict(extra="forbid")

    memory_bytes: int = Field(
        default=2048 * MiB,
        gt=0,
        description="Memory of the whole workspace (cgroup) and of each process (address space).",
    )
    max_processes: int = Field(
        default=256, gt=8, description="Processes the workspace may run at once."
    )
    cpu_seconds: int = Field(default=900, gt=0, description="CPU seconds per shell command.")
    file_bytes: int = Field(default=1024 * MiB, gt=0, description="Largest file a tool writes.")
    open_files: int = Field(default=1024, gt=16, description="Open files per process.")
    tmp_bytes: int = Field(default=256 * MiB, gt=0, description="Size of the private /tmp.")
    disk_bytes: int = Field(
        default=4096 * MiB,
        gt=0,
        description="Disk the workspace directory may occupy (see `workspaces._quota`).",
    )
