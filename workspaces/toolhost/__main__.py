"""`python -m workspaces.toolhost [--limit NAME=VALUE ...] [--child-limit NAME=VALUE ...]`.

`--limit` lowers a resource limit of the tool host itself (and so of everything it starts):
`nproc`, `as` (bytes of address space), `fsize` (bytes per file), `nofile`. `--child-limit`
lowers one for each shell command only, e.g. `cpu` (seconds). `--agent-env JSON` is the whole
environment of the shell commands (default: the tool host's own).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import resource

from agent_core.tool.builtin.runner import WorkspaceToolRunner
from workspaces.toolhost.server import main

LIMITS = {
    "nproc": resource.RLIMIT_NPROC,
    "as": resource.RLIMIT_AS,
    "fsize": resource.RLIMIT_FSIZE,
    "nofile": resource.RLIMIT_NOFILE,
    "cpu": resource.RLIMIT_CPU,
}


def _limit(text: str) -> tuple[int, int]:
    name, _, value = text.partition("=")
    if name not in LIMITS or not value.isdigit():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE with NAME in {sorted(LIMITS)}")
    return LIMITS[name], int(value)


def run() -> None:
    """Parse the limits, apply them and serve until stdin closes."""
    parser = argparse.ArgumentParser(prog="python -m workspaces.toolhost")
    parser.add_argument("--limit", type=_limit, action="append", default=[])
    parser.add_argument("--child-limit", type=_limit, action="append", default=[])
    parser.add_argument("--agent-env", type=json.loads, default=None)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="toolhost: %(levelname)s %(message)s")
    for which, value in args.limit:
        resource.setrlimit(which, (value, value))
    env = dict(os.environ) if args.agent_env is None else args.agent_env
    runner = WorkspaceToolRunner(env=env, limits=dict(args.child_limit))
    asyncio.run(main(runner))


run()
