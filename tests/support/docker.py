"""A private Docker daemon and an offline workspace image for the Docker workspace tests.

``DockerDaemon.start()`` runs its own ``dockerd`` (no bridge, no iptables, its state in a
temporary directory, listening on a unix socket there) and stops it by pid. Nothing is pulled:
``build_test_image`` builds ``FROM scratch`` an image holding only a root skeleton (the
``/bin``-style links, a few ``/etc`` files); the host's ``/usr``, Python installation,
virtualenv and Troupe's packages of this checkout (not the checkout's other files) are
bind-mounted read-only at their own paths (`image_mounts`), and ``PYTHONPATH`` points at the
checkout, so the container runs this code with this interpreter. A real deployment builds
``workspaces/docker/Dockerfile`` instead.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import aiodocker
import httpx

from workspaces._bwrap import python_dirs
from workspaces.docker import ReadOnlyMount

REPO = Path(__file__).resolve().parents[2]
TEST_IMAGE = "troupe-workspace-test:latest"
MCP_SERVERS = REPO / "tests" / "support" / "mcp_servers"
"""The test MCP servers (the demo server), for tests running them in a container."""
_START_TIMEOUT = 60.0
_STOP_TIMEOUT = 30.0


def dockerd_unavailable() -> str | None:
    """Why a private dockerd cannot run here, or None when it can try."""
    if shutil.which("dockerd") is None:
        return "dockerd is not installed (apt-get install docker.io)"
    if os.geteuid() != 0:
        return "dockerd needs root"
    return None


@dataclass
class DockerDaemon:
    """A running private dockerd."""

    process: subprocess.Popen[bytes]
    root: Path

    @property
    def url(self) -> str:
        """The daemon's API socket, as a `DOCKER_HOST`-style URL."""
        return f"unix://{self.root / 'docker.sock'}"

    @classmethod
    @contextlib.contextmanager
    def start(cls) -> Iterator[DockerDaemon]:
        """Run a dockerd for the block; yields it once it answers `/_ping`.

        Raises:
            RuntimeError: It did not come up (its log tail says why).
        """
        # Short: containerd's sockets under the exec root must fit a unix socket path.
        root = Path(tempfile.mkdtemp(prefix="dk", dir="/tmp"))
        log = (root / "dockerd.log").open("wb")
        argv = [
            "dockerd",
            "--bridge=none",
            "--iptables=false",
            "--ip6tables=false",
            f"--data-root={root / 'data'}",
            f"--exec-root={root / 'exec'}",
            f"--pidfile={root / 'dockerd.pid'}",
            f"--host=unix://{root / 'docker.sock'}",
        ]
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        daemon = cls(process, root)
        try:
            daemon._wait_ready()
            yield daemon
        finally:
            daemon._stop()
            log.close()
            shutil.rmtree(root, ignore_errors=True)

    def _wait_ready(self) -> None:
        socket = self.root / "docker.sock"
        deadline = time.monotonic() + _START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            if socket.exists():
                transport = httpx.HTTPTransport(uds=str(socket))
                with (
                    httpx.Client(transport=transport, base_url="http://docker") as client,
                    contextlib.suppress(httpx.HTTPError),
                ):
                    if client.get("/_ping").status_code == 200:
                        return
            time.sleep(0.1)
        tail = (self.root / "dockerd.log").read_text(errors="replace")[-2000:]
        raise RuntimeError(f"dockerd did not start:\n{tail}")

    def _stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=_STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _skeleton() -> bytes:
    """A root filesystem skeleton: merged-/usr links, mount points and a few /etc files."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        # /sbin stays a real directory: Docker mounts its init at /sbin/docker-init.
        for name in ("bin", "lib", "lib64"):
            if os.path.islink(f"/{name}"):
                link = tarfile.TarInfo(name)
                link.type, link.linkname = tarfile.SYMTYPE, os.readlink(f"/{name}")
                tar.addfile(link)
        for name in ("usr", "sbin", "etc", "tmp", "proc", "sys", "dev", "run", "workspace"):
            folder = tarfile.TarInfo(name)
            folder.type, folder.mode = tarfile.DIRTYPE, 0o1777 if name == "tmp" else 0o755
            tar.addfile(folder)
        for name in ("passwd", "group", "ld.so.cache", "nsswitch.conf"):
            path = Path("/etc") / name
            if path.is_file():
                tar.add(str(path), arcname=f"etc/{name}")
    return buffer.getvalue()


def image_mounts(*extra: Path) -> list[ReadOnlyMount]:
    """The host directories the test image needs, and `extra`, read-only at their own paths."""
    wanted = ["/usr", sys.prefix, *python_dirs(), *map(str, extra)]
    kept: list[str] = []
    for path in sorted(set(wanted), key=len):
        if not any(path == k or path.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(path)
    return [ReadOnlyMount(source=path, target=path) for path in kept]


async def build_test_image(docker_url: str, tag: str = TEST_IMAGE) -> str:
    """Build the test image on the daemon at `docker_url` (nothing pulled); return its tag.

    Raises:
        RuntimeError: The build failed.
    """
    dockerfile = (
        "FROM scratch\n"
        "ADD rootfs.tar /\n"
        f"ENV PYTHONPATH={REPO}\n"
        "WORKDIR /workspace\n"
        'CMD ["sleep", "infinity"]\n'
    )
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        for name, data in (("Dockerfile", dockerfile.encode()), ("rootfs.tar", _skeleton())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    context.seek(0)
    docker = aiodocker.Docker(url=docker_url)
    try:
        log = await docker.images.build(
            fileobj=context, encoding="identity", tag=tag, rm=True, stream=False
        )
    finally:
        await docker.close()
    errors = [entry["error"] for entry in log if "error" in entry]
    if errors:
        raise RuntimeError(f"building {tag} failed: {errors}")
    return tag
