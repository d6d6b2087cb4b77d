"""The local Ray of `troupe serve`: a head node with only the processes a server uses.

`ray.init()` on a fresh machine starts, besides the GCS and the raylet, a dashboard process (a
minimal one even with `include_dashboard=False`), a dashboard agent, the autoscaler's monitor
and a log monitor. A single-node server reads none of them unless the dashboard is asked for:

- without `dashboard`, no dashboard process runs, and a few-MiB stand-in takes the dashboard
  agent's place (the raylet insists on starting one; see `actors.local._agent_stand_in`); metrics
  collection is off, as nothing would collect them;
- the autoscaler's monitor never runs (a local node has nothing to scale);
- the log monitor runs only when worker output is relayed to this process (`log_to_driver`).

Its workers die with their raylet (`actors.local._parent_watch`), which dies with this process: a
killed server leaves no worker serving on.

The node is started as `ray.init()` starts its own (Ray's `Node`, written against Ray 2.60),
then this process connects to it; `stop()` disconnects and stops every process of the node.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import ray
import ray._private.node as ray_node
import ray._private.services as ray_services
from ray._private.parameter import RayParams

from actors.local._parent_watch import die_with_parent

__all__ = ["LocalRay"]

_AGENT_COMMAND = "--dashboard_agent_command="
_AGENT_SCRIPT = str(Path(__file__).with_name("_agent_stand_in.py"))
_SETUP_HOOK = f"{die_with_parent.__module__}.{die_with_parent.__name__}"


def _stand_in_agent(argument: str) -> str:
    """The raylet's `--dashboard_agent_command=...` with the stand-in as the program."""
    command = shlex.split(argument.removeprefix(_AGENT_COMMAND))
    script = next(i for i, part in enumerate(command) if part.endswith("agent.py"))
    stand_in = [sys.executable, "-I", "-S", _AGENT_SCRIPT, *command[script + 1 :]]
    return _AGENT_COMMAND + subprocess.list2cmdline(stand_in)


@contextmanager
def _raylet_with_stand_in_agent() -> Iterator[None]:
    start_ray_process = ray_services.start_ray_process

    def start(command: list[str], *args: Any, **kwargs: Any) -> Any:
        command = [_stand_in_agent(a) if a.startswith(_AGENT_COMMAND) else a for a in command]
        return start_ray_process(command, *args, **kwargs)

    ray_services.start_ray_process = start
    try:
        yield
    finally:
        ray_services.start_ray_process = start_ray_process


class _HeadWithoutDashboard(ray_node.Node):  # type: ignore[misc]  # Ray is untyped
    """Ray's head node without the dashboard process, with the stand-in agent."""

    def start_api_server(self, *, include_dashboard: bool | None, raise_on_failure: bool) -> None:
        """Start nothing: no dashboard was asked for."""

    def start_raylet(self, *args: Any, **kwargs: Any) -> None:
        """Start the raylet with the stand-in in place of the dashboard agent."""
        with _raylet_with_stand_in_agent():
            super().start_raylet(*args, **kwargs)


class LocalRay:
    """A local single-node Ray for this process; a context manager (`start()` / `stop()`).

    Args:
        namespace: The Ray namespace this process joins.
        dashboard: Run Ray's dashboard (and its real agent) on `dashboard_host`.
        dashboard_host: Where the dashboard listens.
        log_to_driver: Relay the output of Ray's workers to this process.
        logging_level: Level of Ray's loggers in this process.
        num_cpus: CPUs the node offers (Ray counts them when None).
    """

    def __init__(
        self,
        *,
        namespace: str,
        dashboard: bool = False,
        dashboard_host: str = "127.0.0.1",
        log_to_driver: bool = False,
        logging_level: str = "WARNING",
        num_cpus: int | None = None,
    ) -> None:
        self._namespace = namespace
        self._dashboard = dashboard
        self._log_to_driver = log_to_driver
        self._logging_level = logging_level
        self._params = RayParams(
            num_cpus=num_cpus,
            include_dashboard=dashboard,
            dashboard_host=dashboard_host,
            dashboard_port=None,  # as `ray.init()`: 8265, or the next free port
            no_monitor=True,
            include_log_monitor=log_to_driver,
            _system_config={} if dashboard else {"enable_metrics_collection": False},
        )
        self._node: ray_node.Node | None = None
        self.dashboard_url: str | None = None
        """`host:port` of the dashboard when it runs."""

    def start(self) -> None:
        """Start the node and connect this process to it (the node stops if that fails)."""
        node_class = ray_node.Node if self._dashboard else _HeadWithoutDashboard
        # As `ray.init()` does: the node's processes die with this one (spawn_reaper), and
        # `stop()` ends them on a clean exit.
        self._node = node_class(self._params, head=True, shutdown_at_exit=False, spawn_reaper=True)
        try:
            ray.init(
                address=self._node.address,
                namespace=self._namespace,
                logging_level=self._logging_level,
                log_to_driver=self._log_to_driver,
                runtime_env={"worker_process_setup_hook": _SETUP_HOOK},
            )
        except BaseException:
            self.stop()
            raise
        self.dashboard_url = self._node.webui_url or None

    def stop(self) -> None:
        """Disconnect and stop every process of the node; idempotent."""
        if ray.is_initialized():
            ray.shutdown()
        node, self._node = self._node, None
        if node is not None:
            node.kill_all_processes(check_alive=False, allow_graceful=True, wait=True)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
