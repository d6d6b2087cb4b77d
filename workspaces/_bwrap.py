"""bubblewrap command lines: what a sandboxed process sees of the machine.

The sandbox gets a new user, pid, ipc, uts and (unless allowed) network namespace, no
capabilities, the system directories read-only, a private `/proc`, a private size-bounded `/tmp`
and `/dev/shm`, the Python installation Troupe's tool host needs (read-only), and exactly one
writable directory on disk: the workspace. The sandbox's own root and `/dev` are read-only (a
writable root would be an unbounded in-memory filesystem). `/etc` is reduced to files without
secrets; the server's home, other workspaces and everything else do not exist inside.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import agent_core
import workspaces

SANDBOX_UID = 1000
"""The uid (and gid) processes have inside the sandbox."""

_SYSTEM_DIRS = ("/usr", "/bin", "/lib", "/lib32", "/lib64", "/sbin")
# /etc entries programs need and that hold no secrets (no shadow, ssh keys, credentials).
_ETC_FILES = (
    "alternatives",
    "bash.bashrc",
    "ca-certificates",
    "debian_version",
    "group",
    "host.conf",
    "hosts",
    "inputrc",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "magic",
    "magic.mime",
    "mime.types",
    "nsswitch.conf",
    "os-release",
    "passwd",
    "profile",
    "protocols",
    "services",
    "ssl",
    "timezone",
)
_NETWORK_ETC_FILES = ("resolv.conf", "gai.conf")


def bwrap_path() -> str | None:
    """The `bwrap` executable, if installed."""
    return shutil.which("bwrap")


def python_dirs() -> list[str]:
    """What the tool host's interpreter needs: its installation, environment and Troupe's code."""
    dirs = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)}
    for package in (agent_core, workspaces):
        dirs.add(os.path.dirname(os.path.dirname(os.path.realpath(package.__file__ or ""))))
    # Only Troupe's packages from a source checkout, never the checkout itself (its data).
    code: list[str] = []
    for directory in sorted(dirs):
        if (Path(directory) / "pyproject.toml").exists():
            code.extend(str(Path(directory) / name) for name in ("agent_core", "workspaces"))
        else:
            code.append(directory)
    return sorted(set(code))


def bwrap_argv(
    command: Sequence[str],
    *,
    workdir: str,
    cwd: str | None = None,
    env: Mapping[str, str],
    network: bool = False,
    tmp_bytes: int = 256 * 1024 * 1024,
    readonly: Sequence[str] = (),
    protected: Sequence[str] = (),
) -> list[str]:
    """The bubblewrap command line running `command` in the workspace's sandbox.

    Args:
        command: The program and its arguments.
        workdir: The workspace directory: the only writable path, at the same path inside.
        cwd: Where the program starts (default: `workdir`).
        env: The program's whole environment.
        network: Share the host's network (default: a private namespace with no interfaces).
        tmp_bytes: Size of the private `/tmp` (and, separately, of `/dev/shm`).
        readonly: More host paths to show read-only (e.g. a Python installation).
        protected: Paths inside `workdir` shown read-only (the workspace's own bookkeeping,
            which the server reads and writes: the agent must not plant files or symlinks
            there). Missing ones are skipped.
    """
    bwrap = bwrap_path() or "bwrap"
    argv = [bwrap, "--die-with-parent", "--new-session"]
    argv += ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not network:
        argv.append("--unshare-net")
    argv += ["--hostname", "sandbox", "--cap-drop", "ALL"]
    for directory in _SYSTEM_DIRS:
        if os.path.islink(directory):
            argv += ["--symlink", os.readlink(directory), directory]
        elif os.path.isdir(directory):
            argv += ["--ro-bind", directory, directory]
    etc = _ETC_FILES + (_NETWORK_ETC_FILES if network else ())
    for name in etc:
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--size", str(tmp_bytes), "--tmpfs", "/dev/shm"]
    argv += ["--size", str(tmp_bytes), "--tmpfs", "/tmp"]
    for path in readonly:
        argv += ["--ro-bind", path, path]
    argv += ["--bind", workdir, workdir]
    for path in protected:
        argv += ["--ro-bind-try", path, path]
    argv += ["--chdir", cwd or workdir]
    # Last, once every mount point exists: what is left writable is /tmp, /dev/shm, the workspace.
    argv += ["--remount-ro", "/dev", "--remount-ro", "/"]
    argv.append("--clearenv")
    for name, value in env.items():
        argv += ["--setenv", name, value]
    argv += ["--disable-userns", "--"]
    argv += list(command)
    return argv
