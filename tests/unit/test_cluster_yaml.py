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
import yaml
from ray._private.label_utils import parse_node_labels_string
from ray.autoscaler._private.util import prepare_config, validate_config
from ray.scripts.scripts import start as ray_start_cli

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
    serve = [shlex.split(cmd) for cmd in commands if "troupe serve" in cmd]
    assert len(serve) == 1
    env, command = serve[0][0], serve[0][1:]
    assert env.startswith("TROUPE_SESSION_RESOURCES=")
    assert json.loads(env.split("=", 1)[1]) == {"troupe_agent": 0.01}
    assert command[:5] == ["nohup", "troupe", "serve", "--ray-address", "auto"]
    assert "--redis-url" in command


def test_head_refuses_to_start_without_a_redis_url(config: dict[str, Any], tmp_path: Path) -> None:
    guard = config["head_start_ray_commands"][0]
    env = {"PATH": "/usr/bin:/bin"}

    missing = _run(guard, env, tmp_path)
    present = _run(guard, {**env, "TROUPE_REDIS_URL": f"redis://{HEAD_IP}:6379/0"}, tmp_path)

    assert missing.returncode != 0
    assert "TROUPE_REDIS_URL" in missing.stderr
    assert present.returncode == 0


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
