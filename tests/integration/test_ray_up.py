"""`ray up` and `ray down` of cluster.yaml against a real sshd on 127.0.0.1 (head only).

The test starts its own sshd (generated host and client keys, a free port) inside a new PID
namespace, so the `ray stop` that `ray up` and `ray down` run over SSH sees only the processes
of this cluster. The "remote" user gets a home of its own, whose ~/.bashrc puts a node venv
first on PATH (it sees this environment's packages; `pip install` of the checkout lands in it).
The launcher copies the checkout, installs it, starts Ray and Troupe's head; the test then makes
an API key on the head's Redis and chats through the deployed API with a local fake model.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import pytest
import redis
import yaml
from click.testing import CliRunner

from actors.local._ports import find_free_port
from serve.cli_commands import cli
from serve.client import APIError, ModelChoice, TroupeClient
from tests.support.openai_server import OpenAIWireServer, ScriptedReply

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
RELAY = ROOT / "tests" / "support" / "tcp_relay.py"
SSHD = shutil.which("sshd") or "/usr/sbin/sshd"


def _missing() -> str | None:
    for tool in (SSHD, "ssh", "ssh-keygen", "rsync", "unshare"):
        if shutil.which(tool) is None:
            return f"{tool} not found (apt-get install openssh-server openssh-client rsync)"
    probe = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", "true"], capture_output=True, check=False
    )
    if probe.returncode != 0:
        return f"cannot make a PID namespace for the node: {probe.stderr.decode().strip()}"
    return None


@dataclass
class Node:
    """The SSH-reachable "machine" and the ports of its cluster."""

    home: Path
    yaml_path: Path
    api_port: int
    redis_port: int
    gcs_port: int


def _node_venv(path: Path) -> Path:
    """A venv whose packages include this environment's (a .pth), so nothing is downloaded."""
    base = Path(sys.base_prefix) / "bin" / "python3"
    subprocess.run([str(base), "-m", "venv", str(path)], check=True)
    site = next((path / "lib").glob("python3*/site-packages"))
    (site / "test-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # Ray's command (shared packages: pip installs no `ray` script here), on this interpreter:
    # Ray's workers run on the one that started Ray, and must import the node's Troupe.
    ray = path / "bin" / "ray"
    ray.write_text(f"#!{path / 'bin' / 'python3'}\nfrom ray.scripts.scripts import main\nmain()\n")
    ray.chmod(0o755)
    return path / "bin"


def _cluster_yaml(tmp: Path, key: Path, ssh_port: int, node: Node, dashboard: int) -> dict:
    config = yaml.safe_load((ROOT / "cluster.yaml").read_text())
    config["cluster_name"] = f"troupe-test-{uuid.uuid4().hex[:8]}"
    config["provider"] = {"type": "local", "head_ip": "127.0.0.1", "worker_ips": []}
    config["max_workers"] = 0
    config["auth"] = {
        "ssh_user": os.environ.get("USER") or psutil.Process().username(),
        "ssh_private_key": str(key),
        "ssh_proxy_command": f"{sys.executable} {RELAY} 127.0.0.1 {ssh_port}",
    }
    config["file_mounts"] = {"~/troupe": str(ROOT)}
    commands = []
    for command in config["head_start_ray_commands"]:
        command = command.replace("--port=6380", f"--port={node.gcs_port}")
        command = command.replace(
            "--dashboard-host=127.0.0.1",
            f"--dashboard-host=127.0.0.1 --dashboard-port={dashboard} "
            f"--ray-client-server-port={find_free_port()} --num-cpus=2",
        )
        # Head only: sessions and workspaces run on the head.
        command = command.replace("""'{"troupe_agent": 0.01}'""", "'{}'")
        command = command.replace("--workspace-backend sandbox", "--workspace-backend local")
        command = command.replace(
            "--port 8000 --ray-port 6380",
            f"--port {node.api_port} --ray-port {node.gcs_port} --redis-port {node.redis_port}",
        )
        commands.append(command)
    config["head_start_ray_commands"] = commands
    return config


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Node]:
    missing = _missing()
    if missing:
        pytest.skip(missing)
    tmp = tmp_path_factory.mktemp("ray-up")
    home = tmp / "home"
    home.mkdir()
    key, host_key = tmp / "id_ed25519", tmp / "host_ed25519"
    for path in (key, host_key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    (tmp / "authorized_keys").write_text((tmp / "id_ed25519.pub").read_text())
    venv_bin = _node_venv(tmp / "node-venv")
    (home / ".bashrc").write_text(
        f'export PATH="{venv_bin}:$PATH"\n'
        # Ray on this node takes 127.0.0.1 as its address (as it does on macOS).
        "export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0\n"
        f"export PYTHONPATH=\n"
    )
    ssh_port = find_free_port()
    config_path = tmp / "sshd_config"
    config_path.write_text(
        f"Port {ssh_port}\nListenAddress 127.0.0.1\nHostKey {host_key}\n"
        f"AuthorizedKeysFile {tmp / 'authorized_keys'}\nPidFile {tmp / 'sshd.pid'}\n"
        "StrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "UsePAM no\nPermitRootLogin yes\nAllowTcpForwarding yes\n"
        f"SetEnv HOME={home}\n"
    )
    # As root, sshd wants its privilege-separation directory (a service start would make it).
    start = f'mkdir -p /run/sshd 2>/dev/null; exec "{SSHD}" -D -e -f "{config_path}"'
    sshd = subprocess.Popen(
        ["unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "sh", "-c", start],
        stdout=subprocess.DEVNULL,
        stderr=(tmp / "sshd.log").open("wb"),
    )
    node = Node(home, tmp / "cluster.yaml", find_free_port(), find_free_port(), find_free_port())
    node.yaml_path.write_text(
        yaml.safe_dump(_cluster_yaml(tmp, key, ssh_port, node, find_free_port()))
    )
    try:
        yield node
    finally:
        # unshare takes its child, the namespace's first process, along (--kill-child), and
        # with it every process left in the namespace.
        sshd.send_signal(signal.SIGTERM)
        try:
            sshd.wait(10)
        except subprocess.TimeoutExpired:
            sshd.kill()
            sshd.wait()


def _ray(*args: str, log: Path, timeout: float) -> str:
    """Run the launcher; return its output (also in `log`), failing the test if it fails."""
    ray = Path(sys.executable).parent / "ray"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_", "TROUPE_"))}
    with log.open("w") as out:
        done = subprocess.run(
            [str(ray), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            timeout=timeout,
            env={**env, "RAY_UP_enable_autoscaler_v2": "1", "RAY_USAGE_STATS_ENABLED": "0"},
            check=False,
        )
    output = log.read_text()
    assert done.returncode == 0, output[-6000:]
    return output


def _listening(port: int) -> bool:
    return any(
        c.status == psutil.CONN_LISTEN and c.laddr.port == port
        for c in psutil.net_connections("tcp")
    )


def _wait(condition: object, within: float, what: str) -> None:
    deadline = time.monotonic() + within
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(1)


def _left(node: Node) -> list[str]:
    """Command lines of processes of the cluster still running (Ray's, Redis, Troupe's)."""
    marks = (str(node.home), f"--port {node.api_port}", f"--port={node.gcs_port}", "cluster_head")
    found = []
    for process in psutil.process_iter(["cmdline"]):
        line = " ".join(process.info["cmdline"] or [])
        if any(mark in line for mark in marks) and "pytest" not in line:
            found.append(line)
    return found


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


async def test_ray_up_serves_the_api_with_keys_and_ray_down_leaves_nothing(node: Node) -> None:
    logs = node.yaml_path.parent
    _ray("up", "-y", "--no-config-cache", str(node.yaml_path), log=logs / "up.log", timeout=420)
    base = f"http://127.0.0.1:{node.api_port}"
    _wait(lambda: _healthy(base), 240, "the deployed API")

    env_file = (node.home / ".troupe" / "env").read_text()
    assert oct((node.home / ".troupe" / "env").stat().st_mode & 0o777) == "0o600"
    settings = dict(
        line.removeprefix("export ").split("=", 1) for line in env_file.splitlines() if line
    )
    redis_url = settings["TROUPE_REDIS_URL"]
    assert f":{node.redis_port}/" in redis_url
    with pytest.raises(redis.AuthenticationError):  # a password is required
        redis.Redis(port=node.redis_port).ping()
    assert redis.Redis.from_url(redis_url).config_get("appendonly") == {"appendonly": "yes"}
    created = await asyncio.to_thread(
        CliRunner().invoke,
        cli,
        ["apikey", "create", "--user", "alice"],
        env={"TROUPE_REDIS_URL": redis_url},
    )
    assert created.exit_code == 0, created.output
    token = created.output.strip()

    with OpenAIWireServer() as model:
        model.push(ScriptedReply(text="hello from the cluster"))
        async with TroupeClient(base, api_key=token, timeout=60) as alice:
            agent_id = await alice.create_agent("Friday")
            credential_id = await alice.add_credential(
                {"type": "openai_credential", "api_key": "sk-test", "base_url": model.base_url}
            )
            choice = ModelChoice(
                type="openai_credential", credential_id=credential_id, model="gpt-test"
            )
            session_id = await alice.create_session(agent_id, choice, name="on the cluster")
            events = [e async for e in alice.chat(agent_id, session_id, "hi")]
        texts = "".join(e.data.get("delta", "") for e in events if e.type == "TEXT_BLOCK_DELTA")
        assert texts == "hello from the cluster"
        async with TroupeClient(base, user="alice") as keyless:
            with pytest.raises(APIError) as refused:
                await keyless.list_agents()
        assert refused.value.status == 401

    _ray("down", "-y", str(node.yaml_path), log=logs / "down.log", timeout=300)
    ports = (node.api_port, node.redis_port, node.gcs_port)
    _wait(lambda: not any(_listening(p) for p in ports), 120, "the cluster's ports to close")
    _wait(lambda: not _left(node), 60, f"the cluster's processes to exit: {_left(node)}")
