"""The tool host: a real `python -m workspaces.toolhost` process (no sandbox) serving tool calls.

The tools are bound to a `ToolHostProcess` and called through a `Toolkit` like an agent does;
a few tests speak the wire protocol to the process directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_core.message import TextBlock, ToolResultState
from agent_core.tool import ToolChunk
from agent_core.tool.builtin._base import BuiltinTool
from agent_core.tool.builtin.runner import workspace_tools
from agent_core.tool.execution import ToolInvocation
from tests.unit.agent_core.tools._helpers import Runner
from tests.unit.agent_core.tools.test_bash_tool import wait_until_gone
from workspaces._env import agent_environment
from workspaces.toolhost import ToolHostProcess
from workspaces.toolhost.protocol import REPLIES, CallRequest, EndReply, OutputReply

REPO = Path(__file__).resolve().parents[3]
TOOLHOST = [sys.executable, "-m", "workspaces.toolhost"]
WAIT = 30.0


def host_env(ws: Path) -> dict[str, str]:
    return {**agent_environment(str(ws)), "PYTHONPATH": str(REPO)}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture
async def host(ws: Path) -> AsyncIterator[ToolHostProcess]:
    process = ToolHostProcess(TOOLHOST, env=host_env(ws), cwd=str(ws))
    yield process
    await process.aclose()


@pytest.fixture
def tools(ws: Path, host: ToolHostProcess) -> dict[str, BuiltinTool[Any]]:
    return {tool.name: tool.bind(host) for tool in workspace_tools(ws)}


@pytest.fixture
def run(tools: dict[str, BuiltinTool[Any]]) -> Runner:
    return Runner(*tools.values())


def text_of(chunks: list[ToolChunk]) -> str:
    return "".join(b.text for c in chunks for b in c.content if isinstance(b, TextBlock))


async def first_chunks(stream: AsyncIterator[ToolChunk], until_text: str) -> list[ToolChunk]:
    """Read `stream` until its output contains `until_text`."""
    chunks: list[ToolChunk] = []
    async with asyncio.timeout(WAIT):
        async for chunk in stream:
            chunks.append(chunk)
            if until_text in text_of(chunks):
                break
    return chunks


# --- output -----------------------------------------------------------------------------------


async def test_bash_output_streams_while_the_command_runs(
    ws: Path, tools: dict[str, BuiltinTool[Any]]
) -> None:
    # The command only finishes once the test saw its first line: without streaming it hangs.
    command = "echo first; while [ ! -e go ]; do sleep 0.02; done; echo second"
    stream = tools["Bash"](command=command)
    async with contextlib.aclosing(stream):
        head = await first_chunks(stream, "first")
        assert not head[-1].is_final
        (ws / "go").touch()
        async with asyncio.timeout(WAIT):
            rest = [chunk async for chunk in stream]
    assert "second" in text_of(rest)
    assert rest[-1].state is ToolResultState.SUCCESS
    assert rest[-1].metadata["exit_code"] == 0


async def test_concurrent_calls_run_side_by_side(ws: Path, run: Runner) -> None:
    # The first call waits for a file only the second creates: serialised calls would hang.
    waiter = run("Bash", command="while [ ! -e ready ]; do sleep 0.02; done; echo waited")
    maker = run("Bash", command="touch ready; echo made")
    async with asyncio.timeout(WAIT):
        first, second = await asyncio.gather(waiter, maker)
    assert (first.ok, second.ok) == (True, True)
    assert "waited" in first.text
    assert "made" in second.text


async def test_large_output_streams_in_chunks(run: Runner, tools: dict[str, Any]) -> None:
    megabyte = 1024 * 1024
    result = await run("Bash", command=f"head -c {megabyte} /dev/zero | tr '\\0' x")

    assert result.ok
    assert len(result.chunks) > 2  # several output chunks, then the final one
    shown = tools["Bash"].max_output_chars
    assert result.text.startswith("x" * shown)
    assert f"{megabyte - shown} more characters were not shown" in result.text


async def test_a_megabyte_argument_travels_in_one_frame(ws: Path, run: Runner) -> None:
    content = ("y" * 1023 + "\n") * 1024

    written = await run("Write", file_path="big.txt", content=content)
    read = await run("Read", file_path="big.txt", offset=1000)

    assert written.ok, written.text
    assert (ws / "big.txt").read_text() == content
    assert read.ok
    assert "1024\t" + "y" * 1023 in read.text


# --- state ------------------------------------------------------------------------------------


async def test_the_read_cache_travels_both_ways(ws: Path, run: Runner) -> None:
    (ws / "notes.txt").write_text("one\ntwo\n")

    unread = await run("Write", file_path="notes.txt", content="changed\n")
    read = await run("Read", file_path="notes.txt")
    [entry] = run.state.tool_context.read_file_cache
    written = await run("Write", file_path="notes.txt", content="three\n")
    edited = await run("Edit", file_path="notes.txt", old_string="three", new_string="four")

    assert not unread.ok
    assert "has not been read yet" in unread.text
    assert read.ok
    assert (entry.file_path, entry.lines) == (str(ws / "notes.txt"), ["one\n", "two\n"])
    assert written.ok, written.text
    assert edited.ok, edited.text
    assert (ws / "notes.txt").read_text() == "four\n"
    [after] = run.state.tool_context.read_file_cache
    assert after.updated_at == os.stat(ws / "notes.txt").st_mtime


# --- cancel and failures ----------------------------------------------------------------------


async def test_closing_the_stream_kills_the_command(
    ws: Path, tools: dict[str, BuiltinTool[Any]]
) -> None:
    command = "sleep 600 & echo $! > sleeper.pid; echo started; wait"
    stream = tools["Bash"](command=command)
    await first_chunks(stream, "started")
    sleeper = int((ws / "sleeper.pid").read_text())
    os.kill(sleeper, 0)  # it runs

    await stream.aclose()

    assert await wait_until_gone(sleeper, WAIT)


async def test_a_dying_host_fails_the_call_and_the_next_call_restarts_it(
    ws: Path, host: ToolHostProcess, tools: dict[str, BuiltinTool[Any]], run: Runner
) -> None:
    command = "echo $$ > shell.pid; echo started; sleep 600"
    stream = tools["Bash"](command=command)
    try:
        await first_chunks(stream, "started")
        first_pid = host.pid
        assert first_pid is not None
        os.kill(first_pid, signal.SIGKILL)
        async with asyncio.timeout(WAIT):
            rest = [chunk async for chunk in stream]
    finally:
        await stream.aclose()
        # Without a sandbox nothing reaps what the dead host started: clean up after it.
        with contextlib.suppress(ProcessLookupError, FileNotFoundError, ValueError):
            os.killpg(int((ws / "shell.pid").read_text()), signal.SIGKILL)

    assert rest[-1].state is ToolResultState.ERROR
    assert "tool process died while the call ran" in text_of(rest)
    after = await run("Bash", command="echo back")
    assert after.ok
    assert after.text.strip() == "back"
    assert host.pid not in (None, first_pid)


async def test_unknown_tool(host: ToolHostProcess, ws: Path) -> None:
    invocation = ToolInvocation(tool="Nope", cwd=str(ws), arguments={})

    outputs = [output async for output in host.execute(invocation)]

    [output] = outputs
    assert output.chunk is not None
    assert output.chunk.state is ToolResultState.ERROR
    assert "Unknown workspace tool 'Nope'" in text_of([output.chunk])


async def test_arguments_are_validated_before_anything_is_sent(
    host: ToolHostProcess, run: Runner
) -> None:
    missing = await run("Bash", description="no command")
    wrong = await run("Read", file_path="a.txt", offset="first")

    assert not missing.ok
    assert "command" in missing.text
    assert not wrong.ok
    assert "offset" in wrong.text
    assert host.pid is None  # the tool host was never even started


async def test_malformed_requests_are_dropped_and_the_host_keeps_serving(ws: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        *TOOLHOST,
        env=host_env(ws),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    invocation = ToolInvocation(tool="Bash", cwd=str(ws), arguments={"command": "echo fine"})
    garbage = [b"not json\n", b'{"type": "call"}\n', b'{"type": "launch", "call_id": "x"}\n']
    try:
        for line in garbage:
            process.stdin.write(line)
        process.stdin.write(CallRequest(invocation=invocation).model_dump_json().encode() + b"\n")
        await process.stdin.drain()
        replies: list[OutputReply | EndReply] = []
        async with asyncio.timeout(WAIT):
            while not replies or not isinstance(replies[-1], EndReply):
                replies.append(REPLIES.validate_json(await process.stdout.readline()))
        process.stdin.close()
        async with asyncio.timeout(WAIT):
            errors = (await process.stderr.read()).decode()
            code = await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()

    outputs = [r.output for r in replies if isinstance(r, OutputReply)]
    assert "fine" in text_of([o.chunk for o in outputs if o.chunk is not None])
    assert replies[-1] == EndReply(call_id=invocation.call_id)
    assert errors.count("malformed request dropped") == len(garbage)
    assert code == 0


def fake_host(script: str) -> list[str]:
    """A stand-in tool host: reads one request, then runs `script` (Python)."""
    return [sys.executable, "-c", f"import sys\nsys.stdin.readline()\n{script}"]


@pytest.mark.parametrize(
    "reply",
    ["this is not a frame", '{"type": "output", "call_id": "x", "output": {"bogus": 1}}'],
)
async def test_a_host_sending_malformed_frames_is_stopped(ws: Path, reply: str) -> None:
    script = f"print({reply!r}, flush=True)\nimport time\ntime.sleep(600)"
    host = ToolHostProcess(fake_host(script), env=host_env(ws))
    try:
        invocation = ToolInvocation(tool="Bash", cwd=str(ws), arguments={"command": "true"})
        async with asyncio.timeout(WAIT):
            outputs = [output async for output in host.execute(invocation)]
    finally:
        await host.aclose()

    chunk = outputs[-1].chunk
    assert chunk is not None
    assert chunk.state is ToolResultState.ERROR
    assert "stopped after a malformed frame" in text_of([chunk])


async def test_a_host_that_cannot_start_fails_the_call(ws: Path) -> None:
    host = ToolHostProcess(["/nonexistent/toolhost"], env=host_env(ws))
    invocation = ToolInvocation(tool="Bash", cwd=str(ws), arguments={"command": "true"})

    outputs = [output async for output in host.execute(invocation)]

    [output] = outputs
    assert output.chunk is not None
    assert output.chunk.state is ToolResultState.ERROR
    assert "cannot start the tool host" in text_of([output.chunk])


async def test_a_closed_host_refuses_calls(host: ToolHostProcess, run: Runner) -> None:
    assert (await run("Bash", command="true")).ok
    await host.aclose()

    refused = await run("Bash", command="true")

    assert not refused.ok
    assert "tool host is closed" in refused.text
