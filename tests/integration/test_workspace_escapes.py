"""Escape probes: what an agent's tools must not reach, against every workspace backend.

Each probe runs through the workspace's own built-in tools (Bash, and Read, Write, Edit, Glob
and Grep where they apply), against each backend registered in
`tests/support/workspace_backends.py` that claims to isolate what the probe attacks. A probe
must fail with a clear tool error or be contained (checked on the host), and afterwards the
workspace must still work.

The scene: the attacker's workspace `tenant-a` and a second tenant's `tenant-b` (holding a
secret) under the server's data directory `.troupe/workspaces/`, a server key in `.troupe/`,
secrets in the server's environment (`TROUPE_SECRET_KEY`, a `REDIS_URL` with a password) and in
another server-side process's, and a real redis-server on 127.0.0.1 standing for the server's
Redis.

`LocalWorkspace` (the development backend) is only probed for its environment: it has no file,
process or network isolation and no resource limits, so an agent on it reaches whatever the
server's user can. Outbound network probes run only on backends isolating the network, and
only once the probe has seen that the sandbox has no interface but loopback: no traffic may
leave the machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis

from actors.local.embedded_redis import EmbeddedRedis
from agent_core.message import ToolResultBlock
from tests.support.workspace_backends import (
    Isolation,
    StartedBackends,
    WorkspaceBackend,
    WorkspaceFactory,
    backends,
)
from tests.unit.agent_core.tools._helpers import Result, Runner
from workspaces import LocalWorkspace
from workspaces.sandbox import SandboxPolicy

pytestmark = [pytest.mark.integration, pytest.mark.redis]

MiB = 1024 * 1024
SECRET = f"s3cr3t-{uuid.uuid4().hex}"
# What probes search and edit for: it finds the secret, but an echo of it reveals nothing.
SECRET_PATTERN = "s3cr3t-[0-9a-f]{32}"
SECRET_PREFIX = "s3cr3t-"
REPO = Path(__file__).resolve().parents[2]
SERVER_HOME = Path.home()
POLICY = SandboxPolicy(
    memory_bytes=256 * MiB,
    max_processes=64,
    tmp_bytes=8 * MiB,
    file_bytes=4 * MiB,
    disk_bytes=12 * MiB,
)
PYTHON = sys.executable  # the tool host's interpreter: present inside every backend


@pytest.fixture(scope="module")
def listener() -> Iterator[EmbeddedRedis]:
    """A real redis-server on 127.0.0.1, private to this module (its connections are counted)."""
    with EmbeddedRedis(persistence=False) as server:
        yield server


def secret_env(listener: EmbeddedRedis) -> dict[str, str]:
    return {
        "TROUPE_SECRET_KEY": SECRET,
        "REDIS_URL": f"redis://:{SECRET}@127.0.0.1:{listener.port}/0",
    }


def wait_for_environ(pid: int, needle: str, attempts: int = 500) -> bool:
    """Whether process ``pid``'s environment comes to hold ``needle`` (polled, bounded)."""
    for _ in range(attempts):
        if needle in Path(f"/proc/{pid}/environ").read_text(errors="replace"):
            return True
        time.sleep(0.01)
    return False


@pytest.fixture(scope="module")
def secret_holder(listener: EmbeddedRedis) -> Iterator[subprocess.Popen[bytes]]:
    """Another server-side process (a Ray worker, say) with the secrets in its environment."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"],
        stdin=subprocess.PIPE,
        env={**os.environ, **secret_env(listener)},
    )
    assert holder.stdin is not None
    # Its environment really holds the secret: a leak would show. Until the child has
    # exec'd, /proc/PID/environ can read empty, so wait for it to say so.
    assert wait_for_environ(holder.pid, SECRET), "the holder's environment never showed the secret"
    yield holder
    holder.stdin.close()
    holder.wait(timeout=30)


@pytest.fixture(autouse=True)
def server_env(monkeypatch: pytest.MonkeyPatch, listener: EmbeddedRedis) -> None:
    """The secrets in this (the server's) process environment, as a deployment would set them."""
    for name, value in secret_env(listener).items():
        monkeypatch.setenv(name, value)


def connections(client: redis.Redis) -> int:
    return int(client.info("stats")["total_connections_received"])


@dataclass
class Scene:
    """Tenant A's workspace (the attacker's tools) among the server's data."""

    backend: WorkspaceBackend
    root: Path
    mine: LocalWorkspace
    theirs: LocalWorkspace
    run: Runner
    listener: EmbeddedRedis

    @property
    def secret_file(self) -> Path:
        return self.theirs.host_workdir / "secret.txt"

    @property
    def server_key(self) -> Path:
        return self.root / ".troupe" / "server.key"

    async def bash(self, command: str, timeout_ms: int = 60_000) -> Result:
        return await self.run("Bash", command=command, timeout=timeout_ms)

    async def call(self, tool: str, **arguments: Any) -> Result:
        return await self.run(tool, **arguments)

    def outside(self) -> dict[str, bytes | str]:
        """Every file of the server's data outside tenant A's workspace, with its content."""
        found: dict[str, bytes | str] = {}
        for directory, dirs, files in os.walk(self.root):
            if Path(directory) == self.mine.host_workdir:
                dirs.clear()
                continue
            for name in [*files, *dirs]:
                path = Path(directory, name)
                if path.is_symlink():
                    found[str(path)] = f"-> {os.readlink(path)}"
                elif path.is_file():
                    found[str(path)] = path.read_bytes()
                else:
                    found[str(path)] = "dir"
        return found

    async def still_works(self) -> None:
        """A normal call after a probe: the shell, a write and a read in the workspace."""
        echoed = await self.bash("echo still-$((6 * 7))")
        assert (echoed.ok, echoed.text) == (True, "still-42\n"), echoed.text
        name = f"ok-{uuid.uuid4().hex[:8]}.txt"
        written = await self.call("Write", file_path=name, content="fine\n")
        assert written.ok, written.text
        read = await self.call("Read", file_path=name)
        assert read.ok
        assert "fine" in read.text
        assert (self.mine.host_workdir / name).read_text() == "fine\n"


@pytest.fixture(scope="module")
def started() -> Iterator[StartedBackends]:
    """Each backend started once for the module, on its first probe (a daemon, an image)."""
    with contextlib.ExitStack() as stack:
        yield StartedBackends(stack)


@pytest.fixture
def backend(
    request: pytest.FixtureRequest, started: StartedBackends
) -> tuple[WorkspaceBackend, WorkspaceFactory]:
    """The probed backend (a parameter) and its workspace factory."""
    probed: WorkspaceBackend = request.param
    return probed, started.factory(probed)


@pytest.fixture
async def scene(
    backend: tuple[WorkspaceBackend, WorkspaceFactory], tmp_path: Path, listener: EmbeddedRedis
) -> AsyncIterator[Scene]:
    probed, create = backend
    spaces = tmp_path / ".troupe" / "workspaces"
    run_id = uuid.uuid4().hex[:8]
    mine = create(spaces / "tenant-a", f"tenant-a-{run_id}", POLICY)
    theirs = create(spaces / "tenant-b", f"tenant-b-{run_id}", POLICY)
    await theirs.initialize()
    await mine.initialize()
    (theirs.host_workdir / "secret.txt").write_text(f"{SECRET}\n")
    (tmp_path / ".troupe" / "server.key").write_text(f"{SECRET}\n")
    try:
        yield Scene(probed, tmp_path, mine, theirs, Runner(*mine.builtin_tools()), listener)
    finally:
        await mine.close()
        await theirs.close()


def probes(isolation: Isolation) -> pytest.MarkDecorator:
    """Run the test on every backend claiming `isolation` (`scene` is built for each)."""
    return pytest.mark.parametrize("backend", backends(isolation), indirect=True)


def assert_no_leak(*results: Result) -> None:
    for result in results:
        assert SECRET not in result.text, result.text


def assert_refused(*results: Result) -> None:
    for result in results:
        assert not result.ok, result.text
    assert_no_leak(*results)


def needs_cgroups(scene: Scene) -> None:
    """Skip when the workspace runs without its cgroup budget (per-process limits only)."""
    notes = getattr(scene.mine, "isolation_notes", [])
    if notes:
        pytest.skip(f"{scene.backend.name}: {'; '.join(notes)}")


# --- files --------------------------------------------------------------------------------------


@probes(Isolation.FILES)
@pytest.mark.parametrize("spelled", ["relative", "absolute"])
async def test_reading_another_tenant(scene: Scene, spelled: str) -> None:
    target = "../tenant-b/secret.txt" if spelled == "relative" else str(scene.secret_file)
    folder = os.path.dirname(target)
    before = scene.outside()

    read = await scene.call("Read", file_path=target)
    cat = await scene.bash(f"cat {shlex.quote(target)}")
    listing = await scene.bash(f"ls -la {shlex.quote(folder)}")
    edit = await scene.call("Edit", file_path=target, old_string=SECRET_PREFIX, new_string="stolen")
    grep = await scene.call("Grep", pattern=SECRET_PATTERN, path=folder, output_mode="content")
    glob = await scene.call("Glob", pattern="*", path=folder)

    assert_refused(read, cat, listing, edit)
    assert "does not exist" in read.text
    assert_no_leak(grep, glob)
    assert "secret.txt" not in grep.text + glob.text
    assert scene.outside() == before
    await scene.still_works()


@probes(Isolation.FILES)
@pytest.mark.parametrize("spelled", ["relative", "absolute"])
async def test_writing_another_tenant(scene: Scene, spelled: str) -> None:
    folder = "../tenant-b" if spelled == "relative" else str(scene.theirs.host_workdir)
    before = scene.outside()

    results = [
        await scene.call("Write", file_path=f"{folder}/secret.txt", content="pwned\n"),
        await scene.call("Write", file_path=f"{folder}/planted.txt", content="pwned\n"),
        await scene.call(
            "Edit", file_path=f"{folder}/secret.txt", old_string=SECRET_PREFIX, new_string=""
        ),
        await scene.bash(f"echo pwned > {folder}/secret.txt"),
        await scene.bash(f"mkdir -p {folder}/sub && echo pwned > {folder}/sub/planted.txt"),
        await scene.bash(f"rm -rf {folder}/* {folder}/.mcp"),
    ]

    # Whatever the tools answered, tenant B's files are untouched and nothing was planted.
    assert_no_leak(*results)
    assert scene.outside() == before
    await scene.still_works()


@probes(Isolation.FILES)
async def test_symlinks_pointing_out(scene: Scene) -> None:
    links = {
        "peek": scene.theirs.host_workdir,
        "peek-secret": scene.secret_file,
        "key": scene.server_key,
        "shadow": Path("/etc/shadow"),
        "ssh": SERVER_HOME / ".ssh",
    }
    made = await scene.bash(
        "; ".join(f"ln -s {shlex.quote(str(t))} {name}" for name, t in links.items())
    )
    assert made.ok, made.text
    before = scene.outside()

    reads = [
        await scene.call("Read", file_path="peek-secret"),
        await scene.call("Read", file_path="peek/secret.txt"),
        await scene.call("Read", file_path="key"),
        await scene.call("Read", file_path="shadow"),
        await scene.bash("cat peek-secret peek/secret.txt key shadow ssh/*"),
    ]
    searches = [
        await scene.call("Grep", pattern=SECRET_PATTERN, output_mode="content"),
        await scene.call("Grep", pattern=".", path="peek", output_mode="content"),
        await scene.call("Glob", pattern="**/*", path="peek"),
        await scene.call("Glob", pattern="**/*"),
    ]
    writes = [
        await scene.call("Write", file_path="peek-secret", content="pwned\n"),
        await scene.call("Write", file_path="peek/planted.txt", content="pwned\n"),
        await scene.call("Write", file_path="key", content="pwned\n"),
        await scene.call("Edit", file_path="peek-secret", old_string=SECRET_PREFIX, new_string="x"),
        await scene.bash("echo pwned >> peek-secret; echo pwned > peek/planted.txt; : > key"),
    ]

    assert_refused(*reads)
    assert_no_leak(*searches, *writes)
    assert "secret.txt" not in "".join(r.text for r in searches)
    assert scene.outside() == before
    await scene.still_works()


@probes(Isolation.FILES)
async def test_proc_1_root(scene: Scene) -> None:
    root = await scene.bash("ls -a /proc/1/root/")
    cats = await scene.bash(
        f"cat /proc/1/root{scene.secret_file} /proc/1/root{scene.server_key} "
        "/proc/1/root/etc/shadow /proc/self/root/etc/shadow"
    )
    read = await scene.call("Read", file_path=f"/proc/1/root{scene.secret_file}")
    grep = await scene.call("Grep", pattern=SECRET_PATTERN, path="/proc/1/root/tmp")

    # Pid 1 is the sandbox's own init: its root is the sandbox's, not the host's.
    host_only = {"home", "var", "opt", "srv", "boot", "mnt"} & set(os.listdir("/"))
    assert host_only
    assert not host_only & set(root.text.split())
    assert_refused(cats, read)
    assert_no_leak(root, grep)
    await scene.still_works()


def host_secret_lines() -> list[str]:
    """Lines of the host's secret files that this (root) test process can read."""
    lines = []
    for path in (Path("/etc/shadow"), Path("/etc/gshadow")):
        if os.access(path, os.R_OK):
            lines += [line for line in path.read_text().splitlines() if line.strip()]
    return lines


@probes(Isolation.FILES)
async def test_system_secrets_and_the_server_users_home(scene: Scene) -> None:
    ssh = SERVER_HOME / ".ssh"
    results = [
        await scene.call("Read", file_path="/etc/shadow"),
        await scene.call("Read", file_path=str(ssh / "authorized_keys")),
        await scene.bash(f"cat /etc/shadow /etc/gshadow /etc/sudoers; ls -la {ssh}; cat {ssh}/*"),
    ]
    searches = [
        await scene.call("Glob", pattern="*", path=str(ssh)),
        await scene.call("Grep", pattern="root", path="/etc", output_mode="content"),
    ]

    assert_refused(*results)
    leaked = "".join(r.text for r in results + searches)
    assert not [line for line in host_secret_lines() if line in leaked]
    if ssh.is_dir():
        assert not [name for name in os.listdir(ssh) if name in leaked]
    await scene.still_works()


@probes(Isolation.FILES)
async def test_the_server_checkout_and_data_dir(scene: Scene) -> None:
    planted = REPO / "agent_core" / f"pwned_{uuid.uuid4().hex[:8]}.py"
    listing = await scene.bash(f"ls -a {REPO}")
    try:
        results = [
            await scene.call("Read", file_path=str(REPO / "pyproject.toml")),
            await scene.bash(f"cat {REPO}/pyproject.toml {REPO}/.git"),
            await scene.call("Read", file_path=str(scene.server_key)),
            await scene.bash(f"cat {scene.server_key}; ls {scene.listener.data_dir}"),
            await scene.call("Write", file_path=str(planted), content="x"),
            await scene.bash(f"touch {planted}"),
        ]
        landed = planted.exists()
    finally:
        planted.unlink(missing_ok=True)

    # Only Troupe's own packages are visible (read-only), never the checkout's other files.
    assert not {"pyproject.toml", ".git", "tests", ".troupe"} & set(listing.text.split())
    assert_refused(*results)
    assert not landed
    await scene.still_works()


@probes(Isolation.FILES)
async def test_writes_outside_the_workspace_land_nowhere(scene: Scene) -> None:
    name = f"pwned-{uuid.uuid4().hex[:8]}"
    targets = [
        Path("/") / name,
        Path("/etc") / name,
        Path("/usr") / name,
        Path("/dev") / name,
        SERVER_HOME / name,
        REPO / name,
        scene.root / ".troupe" / name,
        scene.mine.host_workdir.parent / name,
    ]
    assert not [t for t in targets if t.exists()]
    before = scene.outside()

    results = []
    try:
        for target in targets:
            results.append(await scene.call("Write", file_path=str(target), content="pwned\n"))
            results.append(await scene.bash(f"echo pwned > {target}"))
        landed = [t for t in targets if t.exists()]
    finally:  # a backend that lets writes through must not leave them on the host
        for target in targets:
            target.unlink(missing_ok=True)

    assert not landed
    assert scene.outside() == before
    # The sandbox's own root is read-only: writing there fails outright.
    assert_refused(*results[:8])
    await scene.still_works()


# --- environment and processes ------------------------------------------------------------------


@probes(Isolation.ENV)
async def test_the_environment_is_scrubbed(scene: Scene) -> None:
    assert os.environ["TROUPE_SECRET_KEY"] == SECRET  # the server's own environment has it

    env = await scene.bash("env; tr '\\0' '\\n' < /proc/self/environ")
    printed = await scene.bash("printenv TROUPE_SECRET_KEY REDIS_URL")

    assert env.ok
    assert "PATH=" in env.text
    assert_no_leak(env, printed)
    assert "TROUPE_" not in env.text
    assert "REDIS_URL" not in env.text
    assert not printed.ok
    await scene.still_works()


@probes(Isolation.PROCESSES)
async def test_other_processes_are_out_of_sight(
    scene: Scene, secret_holder: subprocess.Popen[bytes]
) -> None:
    ps = await scene.bash("ps auxe; ps -e -o pid,args")
    environs = await scene.bash(
        "for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\\0' '\\n' < $f; done"
    )
    kill = await scene.bash(f"kill -9 {secret_holder.pid}")

    assert ps.ok
    assert_no_leak(ps, environs, kill)
    assert secret_holder.poll() is None  # still running
    await scene.still_works()


# --- network ------------------------------------------------------------------------------------


@probes(Isolation.NETWORK)
async def test_loopback_services_are_unreachable(scene: Scene) -> None:
    port = scene.listener.port
    client = redis.Redis.from_url(scene.listener.url)
    try:
        before = connections(client)
        tcp = await scene.bash(f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")
        named = await scene.bash(f"exec 3<>/dev/tcp/localhost/{port} && echo connected")
        python = await scene.bash(
            f"{PYTHON} -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 5)\""
        )
        after = connections(client)
    finally:
        client.close()

    assert_refused(tcp, named, python)
    assert "connected" not in tcp.text + named.text
    assert after == before  # nothing reached the server's Redis
    await scene.still_works()


@probes(Isolation.NETWORK)
async def test_outbound_network_fails(scene: Scene) -> None:
    # Guard first: with any interface but loopback this probe must not run at all.
    interfaces = await scene.bash("tail -n +3 /proc/net/dev | cut -d: -f1")
    assert interfaces.ok
    if interfaces.text.split() != ["lo"]:
        pytest.fail(f"the sandbox has network interfaces: {interfaces.text.split()}")

    tcp = await scene.bash("exec 3<>/dev/tcp/1.1.1.1/80 && echo connected")
    dns = await scene.bash("getent hosts example.com")

    assert_refused(tcp, dns)
    assert "Network is unreachable" in tcp.text
    await scene.still_works()


# --- resources ----------------------------------------------------------------------------------


@probes(Isolation.LIMITS)
async def test_a_fork_bomb_is_contained(scene: Scene) -> None:
    needs_cgroups(scene)

    bomb = await scene.bash(":(){ :|:& };:", timeout_ms=5_000)
    left = await scene.bash("ps -e --no-headers | wc -l")

    assert not bomb.ok
    assert bomb.metadata.get("timed_out") is True
    assert int(left.text) < 10  # the bomb's processes went with its process group
    await scene.still_works()


@probes(Isolation.LIMITS)
async def test_a_memory_hog_is_contained(scene: Scene) -> None:
    needs_cgroups(scene)
    one = await scene.bash(f"{PYTHON} -c \"x = bytearray({512 * MiB}); print('held')\"")
    # Each process within its own limit, together over the workspace's memory.
    hog = f"x = b'x' * {100 * MiB}; import time; time.sleep(2); print('held', flush=True)"
    many = await scene.bash(f'for i in 1 2 3 4; do {PYTHON} -c "{hog}" & done; wait')

    assert not one.ok
    assert "MemoryError" in one.text
    assert "held" not in one.text
    assert many.text.splitlines().count("held") < 4, many.text
    await scene.still_works()


@probes(Isolation.LIMITS)
async def test_files_are_bounded_in_size(scene: Scene) -> None:
    dd = await scene.bash(f"head -c {8 * MiB} /dev/zero > big")
    write = await scene.call("Write", file_path="big2", content="x" * (5 * MiB))

    assert not dd.ok
    assert "File size limit exceeded" in dd.text
    assert (scene.mine.host_workdir / "big").stat().st_size <= POLICY.file_bytes
    assert not write.ok
    assert "File too large" in write.text
    assert (await scene.bash("rm -f big big2")).ok
    await scene.still_works()


@probes(Isolation.LIMITS)
async def test_the_disk_quota_stops_a_growing_call(scene: Scene) -> None:
    fill = await scene.bash(f"i=0; while :; do head -c {MiB} /dev/zero > fill-$i; i=$((i+1)); done")
    refused = await scene.call("Write", file_path="more.txt", content="more\n")
    shell = await scene.bash("du -sk . && rm -f fill-*")

    assert not fill.ok
    assert "The call was stopped: The workspace is over its disk quota" in fill.text
    assert not refused.ok
    assert "over its disk quota" in refused.text
    assert shell.ok  # the shell stays usable to free space
    await scene.still_works()


@probes(Isolation.LIMITS)
async def test_the_disk_quota_fails_a_write_that_ends_over_it(scene: Scene) -> None:
    results = []
    for i in range(6):
        results.append(await scene.call("Write", file_path=f"part-{i}", content="x" * (3 * MiB)))
        if not results[-1].ok:
            break
    edit = await scene.call("Edit", file_path="part-0", old_string="xx", new_string="y")

    assert [r.ok for r in results[:-1]] == [True] * (len(results) - 1)
    assert "over its disk quota" in results[-1].text
    assert len(results) * 3 * MiB >= POLICY.disk_bytes
    assert not edit.ok
    assert "over its disk quota" in edit.text
    assert (await scene.bash("rm -f part-*")).ok
    await scene.still_works()


@probes(Isolation.LIMITS)
@pytest.mark.parametrize("where", ["/tmp", "/dev/shm"])
async def test_scratch_space_is_bounded(scene: Scene, where: str) -> None:
    # Files below the per-file limit, until the space runs out.
    fill = await scene.bash(
        f"for i in $(seq 64); do head -c {MiB} /dev/zero > {where}/fill-$i || exit 1; done"
    )
    usage = await scene.bash(f"df -k --output=used,size {where} | tail -n 1; rm -f {where}/fill-*")

    assert not fill.ok
    assert "No space left on device" in fill.text
    used, size = (int(kib) * 1024 for kib in usage.text.split())
    assert used <= size == POLICY.tmp_bytes
    await scene.still_works()


# --- host-side bookkeeping ----------------------------------------------------------------------


@probes(Isolation.FILES)
async def test_offloading_does_not_follow_planted_symlinks(scene: Scene) -> None:
    # The bookkeeping directories are read-only to tools: planting fails, and even if it had
    # worked the server's own writes must not land outside.
    planted = await scene.bash(f"rm -rf sessions && ln -s {scene.theirs.host_workdir} sessions")
    assert not planted.ok
    before = scene.outside()

    result = ToolResultBlock(id="call-1", name="Bash", output="offloaded")
    with contextlib.suppress(OSError):  # refusing is fine
        await scene.mine.offload_tool_result("session-1", result)

    assert scene.outside() == before


@probes(Isolation.FILES)
async def test_bookkeeping_symlinks_planted_while_closed_are_removed(scene: Scene) -> None:
    # Planted by whatever ran unsandboxed in the directory (the local backend, a restore):
    # binding them into the sandbox would show their targets to the tools.
    await scene.mine.close()
    mcp, sessions = scene.mine.host_workdir / ".mcp", scene.mine.host_workdir / "sessions"
    mcp.unlink()
    mcp.symlink_to(scene.secret_file)
    shutil.rmtree(sessions)
    sessions.symlink_to(scene.theirs.host_workdir)
    await scene.mine.initialize()
    scene.run = Runner(*scene.mine.builtin_tools())
    before = scene.outside()

    shown = await scene.bash("cat .mcp; ls -la sessions")
    result = ToolResultBlock(id="call-1", name="Bash", output="offloaded")
    await scene.mine.offload_tool_result("session-1", result)

    assert not mcp.is_symlink()
    assert not sessions.is_symlink()
    assert_no_leak(shown)
    assert "secret.txt" not in shown.text
    assert scene.outside() == before
    await scene.still_works()


@probes(Isolation.NETWORK)
async def test_a_planted_mcp_config_does_not_reach_loopback(scene: Scene) -> None:
    port = scene.listener.port
    config = (
        '[{"name": "probe", "is_stateful": true, "timeout": 5, '
        f'"mcp_config": {{"type": "http", "url": "http://127.0.0.1:{port}/mcp"}}}}]'
    )
    assert (await scene.call("Read", file_path=".mcp")).ok
    planted = await scene.call("Write", file_path=".mcp", content=config)
    assert not planted.ok  # the workspace's MCP registry is read-only to its tools
    client = redis.Redis.from_url(scene.listener.url)
    try:
        before = connections(client)
        await asyncio.wait_for(scene.mine.list_mcps(), timeout=60)
        after = connections(client)
    finally:
        client.close()

    assert after == before
