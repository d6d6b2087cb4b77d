"""Per-workspace cgroups: one memory and process budget for everything a workspace runs.

Resource limits (`setrlimit`) bound each process; a cgroup bounds them together, so a fork
bomb of memory hogs cannot take the node down. Creating cgroups needs write access to the
cgroup filesystem (root, or a delegated subtree); without it the workspace runs on rlimits
alone and `CgroupBudget.create` says why.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def _own_cgroup(controller: str | None) -> str:
    """This process's cgroup path in a v1 controller's hierarchy (None: the v2 one)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controller is None and controllers == "":
            return path
        if controller is not None and controller in controllers.split(","):
            return path
    raise OSError(f"no cgroup for controller {controller or 'v2'}")


@dataclass
class CgroupBudget:
    """The cgroup directories of one workspace and the limits written into them."""

    directories: list[Path]

    @classmethod
    def create(cls, name: str, *, memory_bytes: int, max_processes: int) -> CgroupBudget:
        """Create (or reuse) the workspace's cgroups with these limits.

        Raises:
            OSError: cgroups cannot be created or configured here.
        """
        leaf = f"troupe-{_SAFE.sub('_', name)}"
        v1_memory = CGROUP_ROOT / "memory"
        if (v1_memory / "memory.limit_in_bytes").exists() or v1_memory.is_dir():
            memory = v1_memory / _own_cgroup("memory").lstrip("/") / leaf
            pids = CGROUP_ROOT / "pids" / _own_cgroup("pids").lstrip("/") / leaf
            memory.mkdir(exist_ok=True)
            pids.mkdir(exist_ok=True)
            (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
            (pids / "pids.max").write_text(str(max_processes))
            return cls([memory, pids])
        unified = CGROUP_ROOT / _own_cgroup(None).lstrip("/") / leaf
        unified.mkdir(exist_ok=True)
        (unified / "memory.max").write_text(str(memory_bytes))
        (unified / "pids.max").write_text(str(max_processes))
        return cls([unified])

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """`argv` started inside the budget: a shell joins the cgroups, then execs it.

        Joining before `exec` matters: a sandbox launcher forks at once, and a process moved
        afterwards would leave its children outside.
        """
        joins = " && ".join(
            f"echo $$ > {shlex.quote(str(d / 'cgroup.procs'))}" for d in self.directories
        )
        return ["/bin/sh", "-c", f'{joins} && exec "$@"', "sh", *argv]

    def remove(self) -> None:
        """Delete the cgroups (once their processes are gone); best effort."""
        for directory in self.directories:
            with contextlib.suppress(OSError):
                os.rmdir(directory)
