"""cluster.yaml is accepted by Ray's cluster launcher and gives each node its Troupe role.

Nothing here starts Ray: the config goes through the launcher's own preparation and schema
validation (what `ray up` does before contacting any node), `ray start` command lines are parsed
by Ray's real CLI parser without running it, and the shell commands run against fake `ray` and
`hostname` executables.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import click
import pytest
import ray
import yaml
from ray._private.label_utils import parse_node_labels_string
from ray.autoscaler._private.util import prepare_config, validate_config
from ray.scripts.scripts import start as ray_start_cli

from actors.storage.crypto import SecretBox
from serve import cli as serve_cli
from serve import cluster_head

CLUSTER_YAML = Path(__file__).resolve().parents[2] / "cluster.yaml"
REDIS_PORT = 6379
HEAD_IP = "192.0.2.10"


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    loaded = yaml.safe_load(CLUSTER_YAML.read_text())
    assert isinstance(loaded, dict)
    return loaded


def _ray_start_args(commands: list[str]) -> list[str]:
    """The arguments of the single `ray start` in a list of commands (variables unexpanded)."""
    found = [cmd[cmd.index("ray start") :] for cmd in commands if "ray start" in cmd]
    assert len(found) == 1, commands
    return shlex.split(found[0])[2:]


def _parse_ray_start(args: list[str]) -> dict[str, Any]:
    """Parse `ray start` arguments with Ray's own CLI definition, without running it."""
    try:
        ctx = ray_start_cli.make_context("start", list(args))
    except click.ClickException as exc:
        pytest.fail(f"`ray start {shlex.join(args)}` is rejected by Ray's CLI: {exc}")
    return dict(ctx.params)


def _fake_bin(tmp_path: Path) -> Path:
    """Fake `ray` (records its arguments, one per line) and `hostname` (prints $FAKE_NODE_IP)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fakes = {
        "ray": 'printf "%s\\n" "$@" > "$FAKE_RAY_ARGS"\n',
        "hostname": 'echo "10.99.0.1 $FAKE_NODE_IP "\n',
    }
    for name, body in fakes.items():
        path = bin_dir / name
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(0o755)
    return bin_dir


def _run(command: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    # Never run the launcher's `ray stop` here, not even against the fake: on a developer machine
    # the real one would stop every Ray on the host.
    assert "ray stop" not in command
    return subprocess.run(
        ["bash", "-c", command],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_ray_launcher_accepts_the_config(config: dict[str, Any]) -> None:
    # `ray up` prepares (fills defaults, expands the local provider) and then validates.
    prepared = prepare_config(copy.deepcopy(config))
    validate_config(prepared)

    assert prepared["cluster_name"] == "troupe"
    assert prepared["provider"]["type"] == "local"
    assert prepared["auth"]["ssh_user"]
    worker_ips = prepared["provider"]["worker_ips"]
    assert prepared["max_workers"] == len(worker_ips) >= 2


def test_ray_gcs_port_is_not_the_redis_port(config: dict[str, Any]) -> None:
    head = _parse_ray_start(_ray_start_args(config["head_start_ray_commands"]))
    worker = _parse_ray_start(_ray_start_args(config["worker_start_ray_commands"]))

    assert head["head"] is True
    assert head["port"] != REDIS_PORT
    assert worker["address"] == f"$RAY_HEAD_IP:{head['port']}"


def test_head_binds_dashboard_to_loopback_and_deploys_troupe(config: dict[str, Any]) -> None:
    commands: list[str] = config["head_start_ray_commands"]
    head = _parse_ray_start(_ray_start_args(commands))

    assert head["dashboard_host"] == "127.0.0.1"
    assert head["autoscaling_config"] == "~/ray_bootstrap_config.yaml"
    assert parse_node_labels_string(head["labels"]) == {"troupe.io/node-role": "head"}
    assert json.loads(head["resources"] or "{}") == {}
    starts = [shlex.split(cmd) for cmd in commands if "serve.cluster_head start" in cmd]
    assert len(starts) == 1
    env, command = starts[0][0], starts[0][1:]
    assert env.startswith("TROUPE_SESSION_RESOURCES=")
    assert json.loads(env.split("=", 1)[1]) == {"troupe_agent": 0.01}
    assert command[:5] == ["nohup", "python3", "-m", "serve.cluster_head", "start"]
    redirect = command.index(">")
    own, passed_on = cluster_head.split_args(command[4:redirect])
    args = cluster_head.parser().parse_args(own)
    assert args.ray_port == head["port"]
    assert args.redis_port == REDIS_PORT
    assert command[-1] == "&"  # detached from the launcher's SSH session
    # What it passes on is valid `troupe serve` (the flags it sets itself come first).
    serve_args = ["serve", "--auth", "keys", *passed_on]
    assert serve_cli._parser().parse_args(serve_args).workspace_backend == "sandbox"


def test_an_earlier_troupe_stops_before_ray_restarts(config: dict[str, Any]) -> None:
    commands: list[str] = config["head_start_ray_commands"]
    stop = commands.index("python3 -m serve.cluster_head stop")
    assert (
        stop
        < commands.index("ray stop")
        < next(i for i, c in enumerate(commands) if "serve.cluster_head start" in c)
    )


def test_nodes_install_this_checkout_with_the_launchers_ray(config: dict[str, Any]) -> None:
    assert config["file_mounts"] == {"~/troupe": "."}
    assert {".git", ".venv"} <= set(config["rsync_exclude"])
    assert config["rsync_filter"] == [".gitignore"]
    (install,) = [c for c in config["setup_commands"] if "pip install" in c]
    pinned = re.search(r"ray\[serve\]==([\w.]+)", install)
    assert pinned is not None
    assert pinned.group(1) == ray.__version__, "pin the Ray version `ray up` runs with"
    assert shlex.split(install)[-1] == "~/troupe"


def test_the_head_keeps_one_generated_secret_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TROUPE_SECRET_KEY", raising=False)

    first = cluster_head.secret_key(tmp_path)
    again = cluster_head.secret_key(tmp_path)
    monkeypatch.setenv("TROUPE_SECRET_KEY", "given")
    given = cluster_head.secret_key(tmp_path)

    assert first == again
    SecretBox(first)  # a valid Fernet key
    assert (tmp_path / "secret_key").stat().st_mode & 0o777 == 0o600
    assert given == "given"


@pytest.mark.parametrize(
    ("role", "resources"),
    [("agent", {"troupe_agent": 100}), ("sandbox", {"troupe_sandbox": 8})],
)
def test_worker_role_follows_its_ip(
    config: dict[str, Any], tmp_path: Path, role: str, resources: dict[str, int]
) -> None:
    start = config["worker_start_ray_commands"][-1]
    worker_ips: list[str] = config["provider"]["worker_ips"]
    declared = re.search(r'SANDBOX_IPS="([^"]*)"', start)
    assert declared is not None
    sandbox_ips = declared.group(1).split()
    assert set(sandbox_ips) < set(worker_ips), "sandbox nodes must be listed in worker_ips"
    node_ip = sandbox_ips[0] if role == "sandbox" else sorted(set(worker_ips) - set(sandbox_ips))[0]
    args_file = tmp_path / "ray-args"
    env = {
        "PATH": f"{_fake_bin(tmp_path)}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "RAY_HEAD_IP": HEAD_IP,
        "FAKE_NODE_IP": node_ip,
        "FAKE_RAY_ARGS": str(args_file),
    }

    result = _run(start, env, tmp_path)

    assert result.returncode == 0, result.stderr
    parsed = _parse_ray_start(args_file.read_text().splitlines()[1:])
    assert parsed["address"] == f"{HEAD_IP}:6380"
    assert json.loads(parsed["resources"]) == resources
    assert parse_node_labels_string(parsed["labels"]) == {"troupe.io/node-role": role}


def test_every_command_is_valid_bash(config: dict[str, Any], tmp_path: Path) -> None:
    sections = ("setup_commands", "head_start_ray_commands", "worker_start_ray_commands")
    commands = [cmd for section in sections for cmd in config[section]]
    for command in commands:
        checked = subprocess.run(
            ["bash", "-n", "-c", command],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert checked.returncode == 0, f"{command!r}: {checked.stderr}"
