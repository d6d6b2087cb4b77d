"""Ray workers of `troupe serve`'s local Ray die as soon as their raylet does.

A worker runs in its own process group, so a kill of the server's group (`kill -9 -PGID`, an
OOM kill of the whole tree, a container stop) spares it, and it notices that its raylet is gone
only seconds later. Until then it goes on serving: a replica accepts turns, a session actor
writes, a tool keeps running. A thread polling the parent pid ends the worker within a tenth of
a second of its raylet's death instead. Ray runs `die_with_parent` in each worker at start-up
(`worker_process_setup_hook`).
"""

from __future__ import annotations

import os
import signal
import threading

_POLL_S = 0.1


def die_with_parent() -> None:
    """Kill this process once its parent is gone (it is then re-parented: its ppid changes)."""
    parent = os.getppid()

    def watch() -> None:
        stopped = threading.Event()
        while not stopped.wait(_POLL_S):
            if os.getppid() != parent:
                os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
