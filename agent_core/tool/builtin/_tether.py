"""Run a command tethered to the process that started it: `python _tether.py PID -- ARGV...`.

A shell command runs in a process group of its own (so a timeout can kill all of it), which
also means nothing kills it when its host is killed outright (SIGKILL, OOM, a whole-server
crash): the command and whatever it started in the background would go on running, unowned.
This wrapper leads the command's process group and asks the kernel for a signal when its
parent (host `PID`) dies; it then kills the whole group. It otherwise waits for the command
and exits as it did. Stdlib only, run with `python -I -S` so it starts fast.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from types import FrameType

_PR_SET_PDEATHSIG = 1


def _kill_group(signum: int = signal.SIGKILL, frame: FrameType | None = None) -> None:
    os.killpg(0, signal.SIGKILL)  # the wrapper is the group's leader: this ends it too


def _tether(host: int) -> None:
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        signal.signal(signal.SIGHUP, _kill_group)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGHUP)
    if os.getppid() != host:  # the host died before the request took effect
        _kill_group()


def main(argv: list[str]) -> int:
    """Run `argv[3:]` (after `PID --`) tethered to `PID`; return its exit code."""
    host, command = int(argv[1]), argv[3:]
    _tether(host)
    child = os.fork()
    if child == 0:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        try:
            os.execvp(command[0], command)
        finally:
            os._exit(127)  # not found, or not executable
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # killed by a signal: end the same way, so the caller sees it
        with contextlib.suppress(OSError):  # SIGKILL and SIGSTOP have no handler to reset
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
