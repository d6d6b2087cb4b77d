"""`troupe serve` start-up: time to a green `/health`, then the idle footprint.

Starts `python -m serve.cli serve` (embedded Redis, a local Ray) on a free port with a temporary
data dir, from this checkout or from `--checkout DIR` (another checkout of Troupe, e.g. a
`git worktree` of an older commit, to compare before and after), and prints:

- the time from launch to a green `/health`;
- after `--settle` idle seconds: the process count of the server's tree (the CLI and every
  descendant) by name (a Python process by the script it runs);
- memory: the sum of RSS, and of PSS (shared pages split between the processes sharing them,
  the fairer total; read from /proc/<pid>/smaps_rollup);
- the TCP listeners of the tree and their addresses (0.0.0.0 / :: means all interfaces).

Then it stops the server with SIGINT (as Ctrl-C does) and waits for it.

Run: python bench/startup.py [--settle 10] [--checkout DIR] [-- extra serve args...]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actors.local._ports import find_free_port

_REPO = Path(__file__).resolve().parents[1]


def _pss(pid: int) -> int:
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0
    for line in text.splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    return 0


def _tree(root: psutil.Process) -> list[psutil.Process]:
    return [root, *root.children(recursive=True)]


def _name(process: psutil.Process) -> str:
    """The process name; for a Python interpreter, with the script or module it runs."""
    name = process.name()
    if not name.startswith("python"):
        return name
    args = [a for a in process.cmdline()[1:] if a != "-u"]
    if args[:1] == ["-m"] and len(args) > 1:
        return f"{name} -m {args[1]}"
    scripts = [a for a in args if a.endswith(".py")]
    return f"{name} {Path(scripts[0]).name}" if scripts else name


def _wait_healthy(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    while True:
        if process.poll() is not None:
            tail = log.read_text(errors="replace").splitlines()[-20:]
            raise SystemExit(f"troupe serve exited with {process.returncode}:\n" + "\n".join(tail))
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)


def _report(root: psutil.Process, ready: float) -> None:
    procs = _tree(root)
    names = Counter(_name(p) for p in procs)
    rss = sum(p.memory_info().rss for p in procs)
    pss = sum(_pss(p.pid) for p in procs)
    listeners = sorted(
        {
            f"{c.laddr.ip}:{c.laddr.port} ({p.name()})"
            for p in procs
            for c in p.net_connections(kind="tcp")
            if c.status == psutil.CONN_LISTEN
        }
    )
    print(f"ready after       {ready:.1f} s")
    print(f"processes         {len(procs)}")
    for name, count in sorted(names.items()):
        print(f"  {count:3d}  {name}")
    print(f"RSS total         {rss / 2**20:.0f} MiB")
    print(f"PSS total         {pss / 2**20:.0f} MiB")
    print(f"TCP listeners     {len(listeners)}")
    for listener in listeners:
        print(f"  {listener}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settle", type=float, default=10.0, help="seconds idle before reading")
    parser.add_argument(
        "--checkout", type=Path, default=_REPO, help="the Troupe checkout to run (default: this)"
    )
    parser.add_argument("serve_args", nargs="*", help="extra `troupe serve` arguments")
    args = parser.parse_args()
    port = find_free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("TROUPE_REDIS_URL", "RAY_ADDRESS")}
    env["PYTHONPATH"] = str(args.checkout.resolve())
    with tempfile.TemporaryDirectory(prefix="troupe-bench-") as data:
        command = [sys.executable, "-m", "serve.cli", "serve", "--port", str(port)]
        command += ["--data-dir", data, *args.serve_args]
        print(f"checkout          {args.checkout.resolve()}")
        log = Path(data) / "serve.log"
        started = time.monotonic()
        with log.open("wb") as output:
            process = subprocess.Popen(
                command, env=env, cwd=args.checkout, stdout=output, stderr=subprocess.STDOUT
            )
        try:
            _wait_healthy(process, port, log)
            ready = time.monotonic() - started
            time.sleep(args.settle)
            _report(psutil.Process(process.pid), ready)
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=90)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


if __name__ == "__main__":
    main()
