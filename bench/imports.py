"""What a session process pays for its imports: time and USS over a bare Ray worker.

Each figure comes from a fresh interpreter (median of `--reps`): a bare one that imports only
`ray` (what every Ray worker has loaded before it runs an actor), and one that then imports the
module a session host or a workspace actor is built from. Printed: wall and CPU time of the
extra import (CPU time varies less with the machine's load), USS (unique set size) of both
processes and the difference, the private dirty memory (what the imports allocated and wrote)
and its difference, the number of modules loaded, and the heavy third-party packages it loaded
that the bare worker had not. USS also counts the clean pages of shared libraries that no other
process maps at that moment, so on a busy machine it swings by tens of MiB; the private dirty
figure does not. Every interpreter finds each module's bytecode compiled already: a warm-up
import writes it into a private cache (`PYTHONPYCACHEPREFIX`), so that whether the checkout
holds `__pycache__` directories (or `PYTHONDONTWRITEBYTECODE` is set) does not change the
figures; compiling the project's sources at import costs a session host about 1.1 MiB and a
third of its import time, which a deployed worker does not pay.

Run: .venv/bin/python bench/imports.py [--reps 5] [--module actors._remote.session_actor]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

WATCHED = (
    "click",
    "rich",
    "typer",
    "httpx",
    "redis",
    "mcp",
    "e2b",
    "aiodocker",
    "pypdf",
    "jsonschema",
    "apscheduler",
    "cryptography",
    "opentelemetry.sdk.trace",
    "yaml",
    "uvicorn",
    "fastapi",
    "starlette",
    "serve",
)

_PROBE = """
import json, sys, time
import psutil
import ray
start, cpu_start = time.perf_counter(), time.process_time()
for name in {modules!r}:
    __import__(name)
elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
watched = {watched!r}
with open("/proc/self/smaps_rollup") as rollup:
    dirty = next(int(ln.split()[1]) * 1024 for ln in rollup if ln.startswith("Private_Dirty:"))
print(json.dumps({{
    "seconds": elapsed,
    "cpu": cpu,
    "uss": psutil.Process().memory_full_info().uss,
    "dirty": dirty,
    "modules": len(sys.modules),
    "loaded": sorted(w for w in watched if w in sys.modules),
}}))
"""


def probe(modules: list[str], env: dict[str, str]) -> dict[str, object]:
    """Import `modules` after `ray` in a fresh interpreter; return its figures."""
    code = _PROBE.format(modules=modules, watched=WATCHED)
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env
    ).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def median_of(samples: list[dict[str, object]], key: str) -> float:
    """The median of one numeric figure over samples."""
    return statistics.median(float(s[key]) for s in samples)  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument(
        "--module",
        action="append",
        help="module to measure (repeatable; default: the session and workspace actor modules)",
    )
    args = parser.parse_args()
    targets = args.module or ["actors._remote.session_actor", "actors.workspaces.host"]
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "PYTHONPYCACHEPREFIX": cache}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        probe(targets, env)  # compiles every module the runs import into the cache
        measure(targets, args.reps, env)


def measure(targets: list[str], reps: int, env: dict[str, str]) -> None:
    """Print the bare worker's figures, then each target's over it (medians of `reps`)."""
    bare = [probe([], env) for _ in range(reps)]
    bare_uss = median_of(bare, "uss")
    bare_dirty = median_of(bare, "dirty")
    print(f"Imports over a bare Ray worker (python + `import ray`), median of {reps} runs")
    print(
        f"  bare: USS {bare_uss / 2**20:6.1f} MiB, private dirty {bare_dirty / 2**20:6.1f} MiB, "
        f"{median_of(bare, 'modules'):.0f} modules"
    )
    for module in targets:
        samples = [probe([module], env) for _ in range(reps)]
        uss = median_of(samples, "uss")
        dirty = median_of(samples, "dirty")
        print(
            f"  {module}: +{median_of(samples, 'seconds') * 1e3:5.0f} ms "
            f"(CPU {median_of(samples, 'cpu') * 1e3:4.0f} ms), "
            f"USS {uss / 2**20:6.1f} MiB (+{(uss - bare_uss) / 2**20:5.1f} MiB), "
            f"private dirty +{(dirty - bare_dirty) / 2**20:5.1f} MiB, "
            f"{median_of(samples, 'modules'):.0f} modules"
        )
        extra = sorted(set(samples[-1]["loaded"]) - set(bare[-1]["loaded"]))  # type: ignore[call-overload]
        print(f"    watched packages loaded beyond the bare worker's: {', '.join(extra) or 'none'}")


if __name__ == "__main__":
    main()
