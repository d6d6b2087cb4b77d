"""An idle `troupe serve`: its processes, their memory and where they listen.

Starts `python -m serve.cli serve` (embedded Redis, a local Ray) on a free port with a temporary
data dir, waits until `/health` answers 200, lets it settle, then prints:

- the process count of the server's tree (the CLI and every descendant) and their names;
- memory: the sum of RSS, and of PSS (shared pages split between the processes sharing them,
  the fairer total; read from /proc/<pid>/smaps_rollup);
- the TCP listeners of the tree and their addresses (0.0.0.0 / :: means all interfaces);
- the time from launch to a green `/health`.

Then it stops the server with SIGINT (as Ctrl-C does) and waits for it.

Run: python bench/serve_idle.py [--settle 10] [-- extra serve args...]
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

from actors._ports import find_free_port


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settle", type=float, default=10.0, help="seconds idle before reading")
    parser.add_argument("serve_args", nargs="*", help="extra `troupe serve` arguments")
    args = parser.parse_args()
    port = find_free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("TROUPE_REDIS_URL", "RAY_ADDRESS")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    with tempfile.TemporaryDirectory(prefix="troupe-bench-") as data:
        command = [sys.executable, "-m", "serve.cli", "serve", "--port", str(port)]
        command += ["--data-dir", data, *args.serve_args]
        started = time.monotonic()
        process = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            while True:
                if process.poll() is not None:
                    raise SystemExit(f"troupe serve exited with {process.returncode}")
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)
            ready = time.monotonic() - started
            time.sleep(args.settle)
            procs = _tree(psutil.Process(process.pid))
            names = Counter(p.name() for p in procs)
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
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=90)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


if __name__ == "__main__":
    main()
