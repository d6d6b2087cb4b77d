"""Where the servers' CPU goes: CPU seconds of the processes that serve HTTP."""

from __future__ import annotations

import psutil

SERVE_PROCESSES = ("ray::ProxyActor", "ray::ServeReplica")


def serve_processes() -> dict[str, psutil.Process]:
    """Serve's HTTP proxy and API replica processes of the Ray this process started, by role."""
    found: dict[str, psutil.Process] = {}
    for proc in psutil.Process().children(recursive=True):
        try:
            title = " ".join(proc.cmdline())
        except psutil.Error:
            continue
        for role in SERVE_PROCESSES:
            if title.startswith(role):
                found[f"{role.removeprefix('ray::')}:{proc.pid}"] = proc
    return found


def cpu_seconds(procs: dict[str, psutil.Process]) -> dict[str, float]:
    """User + system CPU seconds of each process so far."""
    out = {}
    for role, proc in procs.items():
        times = proc.cpu_times()
        out[role] = times.user + times.system
    return out


def cpu_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """CPU seconds spent by each process between two readings."""
    return {role: after[role] - before.get(role, 0.0) for role in after}


def busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy (all processes, all cores) so far."""
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)
