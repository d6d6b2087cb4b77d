"""The process inside a local E2B sandbox (see `tests.support.e2b_server`): it starts commands.

Started once per running sandbox under bubblewrap (its own pid, network, ipc and uts
namespaces), it does what only something inside can do and nothing else: start processes
(as a given uid/gid, with their stdio relayed) and relay a TCP port of the sandbox's own
loopback to a unix socket the host can connect to. Stdlib only; it speaks JSON lines on the
unix socket given as its argument. One request per connection::

    {"op": "spawn", "argv": [...], "env": {...}, "cwd": "...", "uid": 1000, "gid": 1000,
     "stdin": true}
        -> {"pid": N} then {"out": b64} / {"err": b64} ... and finally {"exit": code};
           the client may send {"stdin": b64}, {"close": true} or {"signal": 9} meanwhile
    {"op": "expose", "port": P}   -> {"socket": path} (a unix socket relaying to 127.0.0.1:P)
    {"op": "ping"}                -> {"ok": true}
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any


async def _send(writer: asyncio.StreamWriter, lock: asyncio.Lock, frame: dict[str, Any]) -> None:
    async with lock:
        writer.write(json.dumps(frame).encode() + b"\n")
        with contextlib.suppress(ConnectionError):
            await writer.drain()


async def _spawn(
    request: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    uid, gid = request.get("uid"), request.get("gid")

    def drop_privileges() -> None:
        if gid is not None:
            os.setgroups([])
            os.setgid(gid)
        if uid is not None:
            os.setuid(uid)

    lock = asyncio.Lock()
    try:
        process = await asyncio.create_subprocess_exec(
            *request["argv"],
            env=request["env"],
            cwd=request["cwd"],
            stdin=asyncio.subprocess.PIPE if request.get("stdin") else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            preexec_fn=drop_privileges,
            start_new_session=True,
        )
    except OSError as exc:
        await _send(writer, lock, {"error": str(exc)})
        return
    await _send(writer, lock, {"pid": process.pid})

    async def relay(stream: asyncio.StreamReader | None, key: str) -> None:
        assert stream is not None
        while data := await stream.read(65536):
            await _send(writer, lock, {key: base64.b64encode(data).decode()})

    async def control() -> None:
        while line := await reader.readline():
            message = json.loads(line)
            if "stdin" in message and process.stdin is not None:
                process.stdin.write(base64.b64decode(message["stdin"]))
                with contextlib.suppress(ConnectionError):
                    await process.stdin.drain()
            elif message.get("close") and process.stdin is not None:
                process.stdin.close()
            elif "signal" in message:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, message["signal"])

    controller = asyncio.create_task(control())
    await asyncio.gather(relay(process.stdout, "out"), relay(process.stderr, "err"))
    code = await process.wait()
    controller.cancel()
    await _send(writer, lock, {"exit": code})


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        with contextlib.suppress(OSError):
            writer.close()


async def _expose(port: int, directory: Path, exposed: dict[int, asyncio.Server]) -> str:
    path = directory / f"port-{port}.sock"
    if port not in exposed:

        async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                writer.close()
                return
            await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))

        path.unlink(missing_ok=True)
        exposed[port] = await asyncio.start_unix_server(relay, path=str(path))
        path.chmod(0o666)
    return str(path)


async def main(socket_path: str) -> None:
    exposed: dict[int, asyncio.Server] = {}
    directory = Path(socket_path).parent

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line = await reader.readline()
        if not line:
            return
        request = json.loads(line)
        if request["op"] == "spawn":
            await _spawn(request, reader, writer)
        elif request["op"] == "expose":
            where = await _expose(int(request["port"]), directory, exposed)
            writer.write(json.dumps({"socket": where}).encode() + b"\n")
        else:
            writer.write(b'{"ok": true}\n')
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()

    Path(socket_path).unlink(missing_ok=True)  # noqa: ASYNC240 - start-up, nothing else runs
    server = await asyncio.start_unix_server(handle, path=socket_path, limit=2**26)
    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    loop.add_signal_handler(signal.SIGTERM, stop.set_result, None)
    async with server:
        await stop


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
