"""A local stand-in for E2B: the control-plane REST API, envd and the sandbox proxy, on 127.0.0.1.

The real `e2b` SDK is pointed at it (`api_url` and `sandbox_url`, see `LocalE2B.api_params`)
and cannot tell the difference for what Troupe uses. One HTTP/1.1 server answers everything;
like E2B's edge it routes by the SDK's headers: no `E2b-Sandbox-Id` is the control plane,
`E2b-Sandbox-Port: 49983` is the sandbox's envd, any other port is relayed to that port of the
sandbox.

Implemented subset:

- control plane (JSON, `X-API-KEY` checked): `POST /v2/sandboxes` (create; template ignored,
  `metadata`, `envVars`, `timeout`, `autoPause` honoured), `GET /v2/sandboxes` (`metadata`
  filter, `state`), `GET /sandboxes/{id}`, `POST /v2/sandboxes/{id}/connect` (resumes a paused
  one), `POST /sandboxes/{id}/pause`, `DELETE /sandboxes/{id}`, `POST /sandboxes/{id}/timeout`;
  a sandbox past its end is killed (or paused with `autoPause`);
- envd Connect RPC (JSON codec, served by the generated `connectrpc` ASGI applications):
  `process.Process/{Start, List, SendInput, CloseStdin, SendSignal}` and
  `filesystem.Filesystem/{Stat, MakeDir, Move, ListDir, Remove}`; the user comes from the
  `Authorization: Basic` header as envd takes it (default `user`);
- envd HTTP: `GET /health`, `GET /files`, `POST /files` (multipart or octet-stream);
- the port proxy, for any port a sandbox process listens on.

Not implemented: PTY, `Connect`/`StreamInput`/`Update`, watchers, snapshots, forks, templates,
volumes, metrics, logs, access tokens and signed URLs.

A running sandbox is a process tree under bubblewrap with its own pid, network, ipc and uts
namespaces: `tests.support.e2b_agent` starts its commands (as uid 0 for `root`, 1000 for
`user`) and relays its ports. Its disk is a directory per sandbox: `/home/user`, `/workspace`
and `/tmp` are writable and persistent, the system and Python read-only, nothing else of the
host visible. Pausing stops every process and keeps the disk (E2B's filesystem-only pause);
killing deletes the disk. File operations run host-side on that directory, refusing any path
that resolves outside it. Running as root is required (uids inside); `unavailable()` says why
a machine cannot run it.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime as dt
import grp
import json
import os
import pwd
import secrets
import shutil
import stat
import sys
import urllib.parse
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from e2b.envd.filesystem import filesystem_connect, filesystem_pb
from e2b.envd.process import process_connect, process_pb
from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse
from protobuf import Oneof
from protobuf.wkt.google.protobuf.timestamp_pb import Timestamp
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from tests.support.asgi_server import served
from workspaces._bwrap import bwrap_path, python_dirs

ENVD_PORT = 49983
ENVD_VERSION = "0.6.4"
REPO = Path(__file__).resolve().parents[2]
AGENT = Path(__file__).with_name("e2b_agent.py")
USERS = {"root": (0, 0), "user": (1000, 1000)}
# The writable, persistent directories of a sandbox, by sandbox path.
MOUNTS = {"/home/user": "home", "/workspace": "workspace", "/tmp": "tmp"}
_SYSTEM = ("/usr", "/bin", "/lib", "/lib32", "/lib64", "/sbin", "/etc")
_AGENT_SOCKET = "/run/e2b/agent.sock"


def unavailable() -> str | None:
    """Why the local E2B cannot run here, or None."""
    if sys.platform != "linux":
        return "needs Linux namespaces"
    if os.geteuid() != 0:
        return "needs root (sandbox processes run as uid 0 and 1000)"
    if bwrap_path() is None:
        return "bubblewrap (bwrap) is not installed"
    return None


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"code": status, "message": message}, status_code=status)


@dataclass
class _Process:
    pid: int
    config: process_pb.ProcessConfig
    writer: asyncio.StreamWriter
    events: asyncio.Queue[process_pb.ProcessEvent | None] = field(default_factory=asyncio.Queue)
    done: asyncio.Event = field(default_factory=asyncio.Event)

    async def send(self, message: dict[str, Any]) -> None:
        self.writer.write(json.dumps(message).encode() + b"\n")
        await self.writer.drain()


@dataclass
class Sandbox:
    """One sandbox: its record, disk and (while running) process tree."""

    sandbox_id: str
    template: str
    metadata: dict[str, str]
    env_vars: dict[str, str]
    directory: Path
    timeout: int
    auto_pause: bool
    started_at: dt.datetime = field(default_factory=_now)
    end_at: dt.datetime = field(default_factory=_now)
    state: str = "running"
    jail: asyncio.subprocess.Process | None = None
    processes: dict[int, _Process] = field(default_factory=dict)
    readers: set[asyncio.Task[None]] = field(default_factory=set)

    def renew(self, timeout: int) -> None:
        self.end_at = _now() + dt.timedelta(seconds=timeout)

    # -- life cycle

    async def start(self) -> None:
        for name in ("home", "workspace", "tmp", "run"):
            (self.directory / name).mkdir(parents=True, exist_ok=True)
        os.chown(self.directory / "home", *USERS["user"])
        (self.directory / "tmp").chmod(0o1777)
        socket = self.directory / "run" / "agent.sock"
        socket.unlink(missing_ok=True)
        self.jail = await asyncio.create_subprocess_exec(
            *self._bwrap(), stdin=asyncio.subprocess.DEVNULL, start_new_session=True
        )
        async with asyncio.timeout(30):
            while not socket.exists():
                if self.jail.returncode is not None:
                    raise RuntimeError(f"the sandbox's agent exited ({self.jail.returncode})")
                await asyncio.sleep(0.02)
        self.state = "running"
        self.started_at = _now()
        self.renew(self.timeout)

    def _bwrap(self) -> list[str]:
        argv = [bwrap_path() or "bwrap", "--die-with-parent", "--new-session"]
        argv += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
        argv += ["--hostname", self.sandbox_id, "--cap-drop", "ALL"]
        for cap in ("SETUID", "SETGID", "CHOWN", "FOWNER", "DAC_OVERRIDE", "KILL"):
            argv += ["--cap-add", f"CAP_{cap}"]
        for directory in _SYSTEM:
            if os.path.islink(directory):
                argv += ["--symlink", os.readlink(directory), directory]
            elif os.path.isdir(directory):
                argv += ["--ro-bind", directory, directory]
        argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "0755", "--dir", "/home"]
        for inside, name in MOUNTS.items():
            argv += ["--bind", str(self.directory / name), inside]
        argv += ["--bind", str(self.directory / "run"), "/run/e2b"]
        # After the sandbox's own /tmp: a checkout (and its venv) may live under /tmp.
        shown = [*python_dirs(), str(REPO / "tests")]
        # Their parents are made traversable (bubblewrap copies the host's modes, e.g. /root).
        parents = {str(p) for d in shown for p in Path(d).parents if str(p) != "/"}
        for parent in sorted(parents - {*_SYSTEM, *shown, *MOUNTS}):
            argv += ["--perms", "0755", "--dir", parent]
        for directory in shown:
            argv += ["--ro-bind", directory, directory]
        argv += ["--remount-ro", "/", "--", sys.executable, "-I", str(AGENT), _AGENT_SOCKET]
        return argv

    async def stop(self) -> None:
        """Kill every process; the disk stays."""
        jail, self.jail = self.jail, None
        if jail is not None and jail.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(jail.pid, 9)
            await jail.wait()
        for task in list(self.readers):
            task.cancel()
        await asyncio.gather(*self.readers, return_exceptions=True)
        for process in self.processes.values():
            process.events.put_nowait(None)
        self.processes.clear()

    # -- paths

    def host_path(self, path: str, user: str) -> Path:
        """The host file of a sandbox path, which must stay inside the sandbox's disk."""
        home = "/root" if user == "root" else "/home/user"
        absolute = os.path.normpath(path if path.startswith("/") else f"{home}/{path}")
        for inside, name in MOUNTS.items():
            if absolute == inside or absolute.startswith(inside + "/"):
                base = self.directory / name
                candidate = base / os.path.relpath(absolute, inside)
                resolved = Path(os.path.realpath(candidate))
                if resolved != base.resolve() and not resolved.is_relative_to(base.resolve()):
                    raise ConnectError(Code.PERMISSION_DENIED, f"{path}: outside the sandbox")
                return candidate
        raise ConnectError(Code.PERMISSION_DENIED, f"{path}: read-only file system")

    def sandbox_path(self, host: Path) -> str:
        for inside, name in MOUNTS.items():
            base = self.directory / name
            if host == base or host.is_relative_to(base):
                return os.path.normpath(f"{inside}/{host.relative_to(base)}")
        raise AssertionError(host)

    # -- processes

    async def spawn(self, config: process_pb.ProcessConfig, user: str, stdin: bool) -> _Process:
        if self.state != "running":
            raise ConnectError(Code.UNAVAILABLE, f"sandbox {self.sandbox_id} is not running")
        uid, gid = USERS.get(user, USERS["user"])
        home = "/root" if user == "root" else "/home/user"
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
            "HOME": home,
            "USER": user,
            "LANG": "C.UTF-8",
            **self.env_vars,
            **dict(config.envs or {}),
        }
        cwd = config.cwd if config.has_field("cwd") and config.cwd else home
        reader, writer = await asyncio.open_unix_connection(
            str(self.directory / "run" / "agent.sock"), limit=2**26
        )
        request = {
            "op": "spawn",
            "argv": [config.cmd, *config.args],
            "env": env,
            "cwd": cwd,
            "uid": uid,
            "gid": gid,
            "stdin": stdin,
        }
        writer.write(json.dumps(request).encode() + b"\n")
        reply = json.loads(await reader.readline() or b"{}")
        if "pid" not in reply:
            writer.close()
            raise ConnectError(Code.INVALID_ARGUMENT, reply.get("error", "cannot start"))
        process = _Process(reply["pid"], config, writer)
        self.processes[process.pid] = process
        task = asyncio.create_task(self._relay(process, reader))
        self.readers.add(task)
        task.add_done_callback(self.readers.discard)
        return process

    async def _relay(self, process: _Process, reader: asyncio.StreamReader) -> None:
        end = process_pb.ProcessEvent.EndEvent(exit_code=-1, exited=False, status="killed")
        try:
            while line := await reader.readline():
                message = json.loads(line)
                if "out" in message or "err" in message:
                    which = "stdout" if "out" in message else "stderr"
                    data = base64.b64decode(message.get("out") or message.get("err"))
                    event = process_pb.ProcessEvent.DataEvent(output=Oneof(which, data))
                    process.events.put_nowait(process_pb.ProcessEvent(event=Oneof("data", event)))
                elif "exit" in message:
                    code = int(message["exit"])
                    status = f"exit status {code}" if code >= 0 else f"signal: {-code}"
                    end = process_pb.ProcessEvent.EndEvent(
                        exit_code=code, exited=code >= 0, status=status
                    )
        finally:
            process.events.put_nowait(process_pb.ProcessEvent(event=Oneof("end", end)))
            process.events.put_nowait(None)
            process.done.set()
            self.processes.pop(process.pid, None)
            process.writer.close()


class LocalE2B:
    """The server and its sandboxes, under `root` on this host."""

    def __init__(self, root: Path, api_key: str = "e2b_local_test_key") -> None:
        self.root = root
        self.api_key = api_key
        self.sandboxes: dict[str, Sandbox] = {}
        self.base_url = ""
        self._control = _control_plane(self)
        self._envd = _envd_http(self)
        self._process = process_connect.ProcessASGIApplication(_ProcessService(self))
        self._filesystem = filesystem_connect.FilesystemASGIApplication(_FilesystemService(self))

    @property
    def api_params(self) -> dict[str, Any]:
        """The SDK connection options that reach this server."""
        return {
            "api_key": self.api_key,
            "api_url": self.base_url,
            "sandbox_url": self.base_url,
            "request_timeout": 30,
        }

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[LocalE2B]:
        """Serve until the block exits, then kill every sandbox."""
        reaper = asyncio.create_task(self._expire())
        try:
            async with served(self) as url:
                self.base_url = url
                yield self
        finally:
            reaper.cancel()
            await asyncio.gather(reaper, return_exceptions=True)
            for sandbox in self.sandboxes.values():
                await sandbox.stop()

    async def _expire(self) -> None:
        while True:
            await asyncio.sleep(0.2)
            for sandbox in list(self.sandboxes.values()):
                if sandbox.state == "running" and _now() >= sandbox.end_at:
                    if sandbox.auto_pause:
                        await self.pause(sandbox)
                    else:
                        await self.kill(sandbox)

    async def pause(self, sandbox: Sandbox) -> None:
        await sandbox.stop()
        sandbox.state = "paused"

    async def kill(self, sandbox: Sandbox) -> None:
        await sandbox.stop()
        self.sandboxes.pop(sandbox.sandbox_id, None)
        await asyncio.to_thread(shutil.rmtree, sandbox.directory, True)

    # -- routing

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The edge: control plane, envd, or a sandbox port, by the SDK's headers."""
        if scope["type"] != "http":
            await self._control(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if b"e2b-sandbox-id" not in headers:
            await self._control(scope, receive, send)
            return
        port = int(headers.get(b"e2b-sandbox-port", str(ENVD_PORT).encode()))
        if port != ENVD_PORT:
            await self._ports(scope, receive, send)
        elif scope["path"].startswith("/process.Process/"):
            await self._process(scope, receive, send)
        elif scope["path"].startswith("/filesystem.Filesystem/"):
            await self._filesystem(scope, receive, send)
        else:
            await self._envd(scope, receive, send)

    def sandbox_of(self, sandbox_id: str | None) -> Sandbox:
        sandbox = self.sandboxes.get(sandbox_id or "")
        if sandbox is None:
            raise ConnectError(Code.NOT_FOUND, f"sandbox {sandbox_id} not found")
        if sandbox.state != "running":
            raise ConnectError(Code.UNAVAILABLE, f"sandbox {sandbox_id} is paused")
        return sandbox

    async def _ports(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        sandbox = self.sandboxes.get(request.headers["e2b-sandbox-id"])
        port = int(request.headers["e2b-sandbox-port"])
        if sandbox is None or sandbox.state != "running":
            await _error(502, "sandbox not found or not running")(scope, receive, send)
            return
        reader, writer = await asyncio.open_unix_connection(
            str(sandbox.directory / "run" / "agent.sock")
        )
        writer.write(json.dumps({"op": "expose", "port": port}).encode() + b"\n")
        inside = json.loads(await reader.readline())["socket"]
        writer.close()
        host_socket = sandbox.directory / "run" / Path(inside).name
        skip = {"host", "content-length", "e2b-sandbox-id", "e2b-sandbox-port", "connection"}
        forwarded = {k: v for k, v in request.headers.items() if k.lower() not in skip}
        client = httpx.AsyncClient(
            transport=httpx.AsyncHTTPTransport(uds=str(host_socket)),
            base_url=f"http://127.0.0.1:{port}",
            timeout=httpx.Timeout(30, read=None),
        )
        url = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        try:
            upstream = await client.send(
                client.build_request(
                    request.method, url, headers=forwarded, content=await request.body()
                ),
                stream=True,
            )
        except httpx.HTTPError as exc:
            await client.aclose()
            message = f"The sandbox is running but port is not open ({port}): {exc}"
            await _error(502, message)(scope, receive, send)
            return

        async def body() -> AsyncIterator[bytes]:
            try:
                async for chunk in upstream.aiter_raw():
                    yield chunk
            finally:
                await upstream.aclose()
                await client.aclose()

        passed = {
            k: v
            for k, v in upstream.headers.items()
            if k.lower() not in {"content-length", "transfer-encoding", "connection"}
        }
        response = StreamingResponse(body(), status_code=upstream.status_code, headers=passed)
        await response(scope, receive, send)


def _user(headers: Any) -> str:
    value = headers.get("authorization", "")
    if value.lower().startswith("basic "):
        return base64.b64decode(value[6:]).decode().split(":", 1)[0] or "user"
    return "user"


def _sandbox_json(sandbox: Sandbox) -> dict[str, Any]:
    return {
        "templateID": sandbox.template,
        "sandboxID": sandbox.sandbox_id,
        "clientID": "local",
        "envdVersion": ENVD_VERSION,
    }


def _listed_json(sandbox: Sandbox) -> dict[str, Any]:
    return {
        **_sandbox_json(sandbox),
        "startedAt": sandbox.started_at.isoformat(),
        "endAt": sandbox.end_at.isoformat(),
        "cpuCount": 1,
        "memoryMB": 512,
        "diskSizeMB": 1024,
        "state": sandbox.state,
        "metadata": sandbox.metadata,
    }


def _control_plane(server: LocalE2B) -> FastAPI:
    app = FastAPI()

    @app.middleware("http")
    async def authenticate(request: Request, call_next: Any) -> Response:
        if not secrets.compare_digest(request.headers.get("x-api-key", ""), server.api_key):
            return _error(401, "Invalid API key")
        response: Response = await call_next(request)
        return response

    @app.post("/v2/sandboxes")
    async def create(request: Request) -> Response:
        body = await request.json()
        sandbox_id = "i" + secrets.token_hex(10)
        sandbox = Sandbox(
            sandbox_id=sandbox_id,
            template=body["templateID"],
            metadata=dict(body.get("metadata") or {}),
            env_vars=dict(body.get("envVars") or {}),
            directory=server.root / sandbox_id,
            timeout=int(body.get("timeout") or 300),
            auto_pause=bool(body.get("autoPause")),
        )
        await sandbox.start()
        server.sandboxes[sandbox_id] = sandbox
        return JSONResponse(_sandbox_json(sandbox), status_code=201)

    @app.get("/v2/sandboxes")
    async def listing(request: Request) -> Response:
        wanted: dict[str, str] = {}
        if "metadata" in request.query_params:
            pairs = urllib.parse.parse_qsl(request.query_params["metadata"])
            wanted = {urllib.parse.unquote(k): urllib.parse.unquote(v) for k, v in pairs}
        states = set(request.query_params.get("state", "running,paused").split(","))
        found = [
            _listed_json(s)
            for s in server.sandboxes.values()
            if s.state in states and all(s.metadata.get(k) == v for k, v in wanted.items())
        ]
        return JSONResponse(found)

    @app.get("/sandboxes/{sandbox_id}")
    async def detail(sandbox_id: str) -> Response:
        sandbox = server.sandboxes.get(sandbox_id)
        if sandbox is None:
            return _error(404, f"sandbox {sandbox_id} not found")
        return JSONResponse(_listed_json(sandbox))

    @app.post("/v2/sandboxes/{sandbox_id}/connect")
    async def connect(sandbox_id: str, request: Request) -> Response:
        sandbox = server.sandboxes.get(sandbox_id)
        if sandbox is None:
            return _error(404, f"sandbox {sandbox_id} not found")
        timeout = int((await request.json()).get("timeout") or sandbox.timeout)
        if sandbox.state == "running":
            sandbox.end_at = max(sandbox.end_at, _now() + dt.timedelta(seconds=timeout))
            return JSONResponse(_sandbox_json(sandbox), status_code=200)
        sandbox.timeout = timeout
        await sandbox.start()
        return JSONResponse(_sandbox_json(sandbox), status_code=201)

    @app.post("/sandboxes/{sandbox_id}/pause")
    async def pause(sandbox_id: str) -> Response:
        sandbox = server.sandboxes.get(sandbox_id)
        if sandbox is None:
            return _error(404, f"sandbox {sandbox_id} not found")
        if sandbox.state == "paused":
            return _error(409, f"sandbox {sandbox_id} is already paused")
        await server.pause(sandbox)
        return Response(status_code=204)

    @app.delete("/sandboxes/{sandbox_id}")
    async def kill(sandbox_id: str) -> Response:
        sandbox = server.sandboxes.get(sandbox_id)
        if sandbox is None:
            return _error(404, f"sandbox {sandbox_id} not found")
        await server.kill(sandbox)
        return Response(status_code=204)

    @app.post("/sandboxes/{sandbox_id}/timeout")
    async def set_timeout(sandbox_id: str, request: Request) -> Response:
        sandbox = server.sandboxes.get(sandbox_id)
        if sandbox is None:
            return _error(404, f"sandbox {sandbox_id} not found")
        sandbox.renew(int((await request.json())["timeout"]))
        return Response(status_code=204)

    return app


def _envd_http(server: LocalE2B) -> FastAPI:
    app = FastAPI()

    def target(request: Request) -> tuple[Sandbox, Path, str]:
        sandbox = server.sandboxes.get(request.headers["e2b-sandbox-id"])
        if sandbox is None or sandbox.state != "running":
            raise _HTTPFailure(502, "sandbox not found or not running")
        user = request.query_params.get("username") or "user"
        path = request.query_params.get("path", "")
        try:
            return sandbox, sandbox.host_path(path, user), user
        except ConnectError as exc:
            raise _HTTPFailure(403, exc.message) from exc

    @app.exception_handler(_HTTPFailure)
    async def failed(_: Request, exc: _HTTPFailure) -> Response:
        return _error(exc.status, exc.message)

    @app.get("/health")
    async def health() -> Response:
        return Response(status_code=204)

    @app.get("/files")
    async def download(request: Request) -> Response:
        _, path, _ = target(request)
        if not path.is_file():
            return _error(404, f"file {request.query_params.get('path')} not found")
        return Response(path.read_bytes(), media_type="application/octet-stream")

    @app.post("/files")
    async def upload(request: Request) -> Response:
        sandbox, default, user = target(request)
        written: list[tuple[Path, bytes]] = []
        if request.headers.get("content-type", "").startswith("multipart/form-data"):
            form = await request.form()
            parts = form.getlist("file")
            for part in parts:
                assert not isinstance(part, str)
                if "path" in request.query_params and len(parts) == 1:
                    path = default
                else:
                    path = sandbox.host_path(part.filename or "", user)
                written.append((path, await part.read()))
        else:
            written.append((default, await request.body()))
        infos = []
        for path, data in written:
            _write(path, data, user)
            infos.append({"name": path.name, "type": "file", "path": sandbox.sandbox_path(path)})
        return JSONResponse(infos)

    return app


class _HTTPFailure(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _makedirs(path: Path, user: str) -> None:
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        directory.mkdir()
        os.chown(directory, *USERS.get(user, USERS["user"]))


def _may_write(path: Path, user: str) -> bool:
    """Whether `user` may create or replace `path` (owner or world write bits; sticky dirs)."""
    if user == "root":
        return True
    uid = USERS.get(user, USERS["user"])[0]
    parent = path.parent
    while not parent.exists():
        parent = parent.parent
    info = parent.stat()
    writable_dir = (info.st_uid == uid and info.st_mode & 0o200) or info.st_mode & 0o002
    if not writable_dir:
        return False
    if path.exists() and info.st_mode & stat.S_ISVTX:
        return path.stat().st_uid == uid
    return True


def _write(path: Path, data: bytes, user: str) -> None:
    if not _may_write(path, user):
        raise _HTTPFailure(403, f"permission denied: {path.name}")
    _makedirs(path.parent, user)
    path.write_bytes(data)
    os.chown(path, *USERS.get(user, USERS["user"]))


def _entry(sandbox: Sandbox, path: Path) -> filesystem_pb.EntryInfo:
    info = path.lstat()
    is_link = stat.S_ISLNK(info.st_mode)
    kind = filesystem_pb.FileType.DIRECTORY if path.is_dir() else filesystem_pb.FileType.FILE
    owner = pwd.getpwuid(info.st_uid).pw_name if info.st_uid == 0 else "user"
    group = grp.getgrgid(info.st_gid).gr_name if info.st_gid == 0 else "user"
    entry = filesystem_pb.EntryInfo(
        name=path.name,
        type=kind,
        path=sandbox.sandbox_path(path),
        size=info.st_size,
        mode=info.st_mode & 0o7777,
        permissions=stat.filemode(info.st_mode),
        owner=owner,
        group=group,
        modified_time=Timestamp(seconds=int(info.st_mtime), nanos=info.st_mtime_ns % 10**9),
        is_symlink=is_link,
    )
    if is_link:
        entry.symlink_target = os.readlink(path)
    return entry


class _FilesystemService(filesystem_connect.Filesystem):
    def __init__(self, server: LocalE2B) -> None:
        self.server = server

    def _resolve(self, path: str, ctx: RequestContext[Any, Any]) -> tuple[Sandbox, Path, str]:
        headers = ctx.request_headers
        sandbox = self.server.sandbox_of(headers.get("e2b-sandbox-id"))
        user = _user(headers)
        return sandbox, sandbox.host_path(path, user), user

    async def stat(
        self, request: filesystem_pb.StatRequest, ctx: RequestContext[Any, Any]
    ) -> filesystem_pb.StatResponse:
        sandbox, path, _ = self._resolve(request.path, ctx)
        if not path.exists() and not path.is_symlink():
            raise ConnectError(Code.NOT_FOUND, f"{request.path} not found")
        return filesystem_pb.StatResponse(entry=_entry(sandbox, path))

    async def make_dir(
        self, request: filesystem_pb.MakeDirRequest, ctx: RequestContext[Any, Any]
    ) -> filesystem_pb.MakeDirResponse:
        sandbox, path, user = self._resolve(request.path, ctx)
        if path.exists():
            raise ConnectError(Code.ALREADY_EXISTS, f"{request.path} exists")
        if not _may_write(path, user):
            raise ConnectError(Code.PERMISSION_DENIED, f"{request.path}: permission denied")
        _makedirs(path, user)
        return filesystem_pb.MakeDirResponse(entry=_entry(sandbox, path))

    async def move(
        self, request: filesystem_pb.MoveRequest, ctx: RequestContext[Any, Any]
    ) -> filesystem_pb.MoveResponse:
        sandbox, source, user = self._resolve(request.source, ctx)
        _, target, _ = self._resolve(request.destination, ctx)
        if not source.exists():
            raise ConnectError(Code.NOT_FOUND, f"{request.source} not found")
        if not (_may_write(source, user) and _may_write(target, user)):
            raise ConnectError(Code.PERMISSION_DENIED, f"{request.source}: permission denied")
        _makedirs(target.parent, user)
        source.rename(target)
        return filesystem_pb.MoveResponse(entry=_entry(sandbox, target))

    async def list_dir(
        self, request: filesystem_pb.ListDirRequest, ctx: RequestContext[Any, Any]
    ) -> filesystem_pb.ListDirResponse:
        sandbox, path, _ = self._resolve(request.path, ctx)
        if not path.is_dir():
            raise ConnectError(Code.NOT_FOUND, f"{request.path} is not a directory")
        depth = request.depth or 1
        entries = [
            _entry(sandbox, child)
            for child in sorted(path.rglob("*"))
            if len(child.relative_to(path).parts) <= depth
        ]
        return filesystem_pb.ListDirResponse(entries=entries)

    async def remove(
        self, request: filesystem_pb.RemoveRequest, ctx: RequestContext[Any, Any]
    ) -> filesystem_pb.RemoveResponse:
        _, path, user = self._resolve(request.path, ctx)
        if not path.exists() and not path.is_symlink():
            raise ConnectError(Code.NOT_FOUND, f"{request.path} not found")
        if not _may_write(path, user):
            raise ConnectError(Code.PERMISSION_DENIED, f"{request.path}: permission denied")
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
        return filesystem_pb.RemoveResponse()


class _ProcessService(process_connect.Process):
    def __init__(self, server: LocalE2B) -> None:
        self.server = server

    def _sandbox(self, ctx: RequestContext[Any, Any]) -> Sandbox:
        return self.server.sandbox_of(ctx.request_headers.get("e2b-sandbox-id"))

    def _process(self, selector: Any, ctx: RequestContext[Any, Any]) -> _Process:
        sandbox = self._sandbox(ctx)
        pid = selector.selector.value if selector.selector is not None else None
        process = sandbox.processes.get(pid or -1)
        if process is None:
            raise ConnectError(Code.NOT_FOUND, f"process {pid} not found")
        return process

    async def start(
        self, request: process_pb.StartRequest, ctx: RequestContext[Any, Any]
    ) -> AsyncIterator[process_pb.StartResponse]:
        if request.pty is not None:
            raise ConnectError(Code.UNIMPLEMENTED, "PTY is not implemented here")
        sandbox = self._sandbox(ctx)
        config = request.process or process_pb.ProcessConfig()
        process = await sandbox.spawn(config, _user(ctx.request_headers), bool(request.stdin))
        start = process_pb.ProcessEvent.StartEvent(pid=process.pid)
        yield process_pb.StartResponse(event=process_pb.ProcessEvent(event=Oneof("start", start)))
        while (event := await process.events.get()) is not None:
            yield process_pb.StartResponse(event=event)

    async def list(
        self, request: process_pb.ListRequest, ctx: RequestContext[Any, Any]
    ) -> process_pb.ListResponse:
        sandbox = self._sandbox(ctx)
        infos = [
            process_pb.ProcessInfo(config=p.config, pid=p.pid) for p in sandbox.processes.values()
        ]
        return process_pb.ListResponse(processes=infos)

    async def send_input(
        self, request: process_pb.SendInputRequest, ctx: RequestContext[Any, Any]
    ) -> process_pb.SendInputResponse:
        process = self._process(request.process, ctx)
        data = request.input.input.value if request.input and request.input.input else b""
        await process.send({"stdin": base64.b64encode(data).decode()})
        return process_pb.SendInputResponse()

    async def close_stdin(
        self, request: process_pb.CloseStdinRequest, ctx: RequestContext[Any, Any]
    ) -> process_pb.CloseStdinResponse:
        await self._process(request.process, ctx).send({"close": True})
        return process_pb.CloseStdinResponse()

    async def send_signal(
        self, request: process_pb.SendSignalRequest, ctx: RequestContext[Any, Any]
    ) -> process_pb.SendSignalResponse:
        process = self._process(request.process, ctx)
        await process.send({"signal": request.signal.value or 9})
        return process_pb.SendSignalResponse()
