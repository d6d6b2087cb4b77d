"""POST /chat/ accepted per second with 20 clients, against plain uvicorn + FastAPI in the same run.

Starts the stack (embedded Redis, local Ray, the API) on 127.0.0.1, one session per client with
an instant model, then runs keep-alive POST loops (raw sockets, a separate process) for
`--seconds` against `POST /chat/`, and the same against a trivial FastAPI POST on plain uvicorn.
Prints accepted/s, the ratio, the server CPU per accepted POST by process (Serve's proxy and
replica, or the uvicorn worker) and how many of the machine's cores were busy meanwhile: every
accepted input is also a reply for a session host to run, on the same machine.

`--ingress serve` (default) is the Serve deployment; `--ingress uvicorn` runs the same app on
uvicorn workers that join the Ray cluster (`troupe serve --ingress uvicorn`). Serve's own
settings are read from the environment, e.g. `RAY_SERVE_THROUGHPUT_OPTIMIZED=1`.

Run: python bench/ingress.py [--clients 20] [--seconds 10] [--ingress serve|uvicorn]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
from _harness import service_stack
from _procs import busy_seconds, cpu_delta, cpu_seconds

from actors.local._ports import find_free_port
from tests.support.api import make_session

HERE = Path(__file__).resolve().parent
USER = {"X-User-ID": "bench"}


def load(
    url: str, bodies: list[dict[str, object]], clients: int, seconds: float
) -> tuple[int, int]:
    """Run the POST loops in a separate process; return (accepted, total)."""
    out = subprocess.run(
        [
            sys.executable,
            str(HERE / "_load.py"),
            "post",
            url,
            json.dumps(bodies),
            json.dumps(USER),
            str(clients),
            str(seconds),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return int(out[0]), int(out[1])


def wait_up(url: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


def plain_uvicorn(clients: int, seconds: float) -> tuple[float, float, float]:
    """accepted/s, CPU ms per accepted POST and busy cores of the plain reference."""
    port = find_free_port()
    server = subprocess.Popen([sys.executable, str(HERE / "_plain_app.py"), str(port)])
    try:
        wait_up(f"http://127.0.0.1:{port}/docs")
        proc = {"uvicorn": psutil.Process(server.pid)}
        body = {"agent_id": "a", "session_id": "s", "input": {"role": "user", "content": "hi"}}
        before, busy = cpu_seconds(proc), busy_seconds()
        accepted, _ = load(f"http://127.0.0.1:{port}/chat/", [body], clients, seconds)
        busy = busy_seconds() - busy
        spent = sum(cpu_delta(before, cpu_seconds(proc)).values())
    finally:
        server.terminate()
        server.wait()
    return accepted / seconds, spent * 1000 / max(accepted, 1), busy / seconds


async def sessions(base_url: str, model_url: str, count: int) -> list[tuple[str, str]]:
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as api:
        return [await make_session(api, model_url, USER) for _ in range(count)]


async def settle(base_url: str, ids: list[tuple[str, str]]) -> None:
    """Wait until every session is idle again (its actor is up and its inbox drained)."""
    async with httpx.AsyncClient(base_url=base_url, timeout=60, headers=USER) as api:
        for _, session_id in ids:
            status = ""
            while status != "idle":
                await asyncio.sleep(0.2)
                status = (await api.get(f"/sessions/{session_id}/status")).json()["status"]


def profile(
    procs: dict[str, psutil.Process], seconds: float, out: Path
) -> list[subprocess.Popen[bytes]]:
    """py-spy (on PATH or in PYSPY) sampling each server process into OUT/<role>.txt."""
    out.mkdir(parents=True, exist_ok=True)
    spy = os.environ.get("PYSPY", "py-spy")
    return [
        subprocess.Popen(
            [
                spy,
                "record",
                "--gil",
                "-p",
                str(proc.pid),
                "-d",
                str(int(seconds)),
                "-r",
                "200",
                "--format",
                "raw",
                "-o",
                str(out / f"{role.replace(':', '-')}.txt"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for role, proc in procs.items()
    ]


def troupe(args: argparse.Namespace) -> tuple[float, float, dict[str, float], int, float]:
    with service_stack(ingress=args.ingress, workers=args.workers) as stack:
        ids = asyncio.run(sessions(stack.base_url, stack.model_server.base_url, args.clients))
        message = {"name": "u", "role": "user", "content": "hi"}
        bodies: list[dict[str, object]] = [
            {"agent_id": agent_id, "session_id": session_id, "input": message}
            for agent_id, session_id in ids
        ]
        url = f"{stack.base_url}/chat/"
        load(url, bodies, args.clients, 2)  # warm-up: activation, connections
        asyncio.run(settle(stack.base_url, ids))
        procs = stack.server_processes()
        spies = profile(procs, args.seconds, args.profile) if args.profile else []
        before, busy = cpu_seconds(procs), busy_seconds()
        accepted, total = load(url, bodies, args.clients, args.seconds)
        busy = busy_seconds() - busy
        spent = cpu_delta(before, cpu_seconds(procs))
        for spy in spies:
            spy.wait()
    per_post = {role: ms * 1000 / max(accepted, 1) for role, ms in spent.items()}
    rate = accepted / args.seconds
    return rate, sum(per_post.values()), per_post, total - accepted, busy / args.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--ingress", choices=["serve", "uvicorn"], default="serve")
    parser.add_argument("--workers", type=int, default=1, help="uvicorn workers")
    parser.add_argument("--profile", type=Path, help="write py-spy profiles of the servers here")
    args = parser.parse_args()
    rate, cpu, per_process, refused, busy = troupe(args)
    plain_rate, plain_cpu, plain_busy = plain_uvicorn(args.clients, args.seconds)
    cores = psutil.cpu_count()
    print(f"POST /chat/ accepted, {args.clients} clients, {args.seconds:.0f} s, {args.ingress}")
    print(
        f"  troupe:        {rate:8.0f}/s  server CPU {cpu:.2f} ms/POST  (not accepted: {refused})"
    )
    for role, ms in sorted(per_process.items()):
        print(f"    {role:28s} {ms:.2f} ms/POST")
    if refused:  # answered 429 (full inboxes): they cost the server CPU too
        accepted = rate * args.seconds
        per_answered = cpu * accepted / (accepted + refused)
        print(f"    per POST answered (429s included): {per_answered:.2f} ms")
    print(f"    machine busy: {busy:.2f} of {cores} cores (sessions, Redis, model, load included)")
    print(f"  plain uvicorn: {plain_rate:8.0f}/s  server CPU {plain_cpu:.2f} ms/POST")
    print(f"    machine busy: {plain_busy:.2f} of {cores} cores")
    print(f"  ratio: {rate / plain_rate:.1%} of plain uvicorn (goal >= 50%)")
    print(f"  server CPU per POST: {cpu / plain_cpu:.1f}x plain uvicorn's")


if __name__ == "__main__":
    main()
