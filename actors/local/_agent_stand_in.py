"""Stands in for Ray's dashboard agent on a local Ray started without the dashboard.

A raylet always starts a dashboard agent, dies with it, and waits until it has published its
ports. Without the dashboard nothing reads what the agent serves (metrics, logs, job and state
APIs), so this process publishes every port as unavailable (`-1`, what Ray's minimal agent
writes for a service it does not run) and then only waits for its raylet to go.

It is started by the raylet with the agent's arguments; it uses the standard library only, so
it runs under `python -I -S` in a few MiB.
"""

from __future__ import annotations

import os
import sys
import time

_PORT_FILES = ("metrics_agent_port", "metrics_export_port", "dashboard_agent_listen_port")
_UNAVAILABLE = "-1"
_PARENT_POLL_S = 1.0


def main(argv: list[str]) -> None:
    """Publish the agent's ports as unavailable, then live as long as the raylet."""
    options = dict(arg[2:].split("=", 1) for arg in argv if arg.startswith("--") and "=" in arg)
    for name in _PORT_FILES:
        path = os.path.join(options["session-dir"], f"{name}_{options['node-id']}")
        with open(f"{path}.tmp", "w") as port_file:
            port_file.write(_UNAVAILABLE)
        os.replace(f"{path}.tmp", path)
    raylet = os.getppid()
    while os.getppid() == raylet:
        time.sleep(_PARENT_POLL_S)


if __name__ == "__main__":
    main(sys.argv[1:])
