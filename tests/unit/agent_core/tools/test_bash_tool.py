"""Bash: streaming output, exit codes, timeouts that kill the process group."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from agent_core.message import TextBlock, ToolCallBlock, ToolResultState
from agent_core.tool import Bash, Toolkit
from tests.unit.agent_core.tools._helpers import Runner


async def wait_until_gone(pid: int, seconds: float = 10.0) -> bool:
    """Wait for a process to exit (a pidfd turns readable then, reaped or not)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    exited = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(fd, exited.set)
    try:
        async with asyncio.timeout(seconds):
            await exited.wait()
    finally:
        loop.remove_reader(fd)
        os.close(fd)
    return True


@pytest.mark.parametrize("tethered", [False, True])
async def test_output_and_success(ws: Path, tethered: bool) -> None:
    run = Runner(Bash(ws, tethered=tethered))
    (ws / "marker").touch()

    result = await run("Bash", command="pwd; ls", description="Show where we are")

    assert result.ok
    assert result.text == f"{ws}\nmarker\n"
    assert result.metadata == {"exit_code": 0}


@pytest.mark.parametrize("tethered", [False, True])
async def test_stderr_and_nonzero_exit_code(ws: Path, tethered: bool) -> None:
    result = await Runner(Bash(ws, tethered=tethered))(
        "Bash", command="echo out; echo err >&2; exit 3"
    )

    assert result.state is ToolResultState.ERROR
    assert result.text == "out\nerr\nExit code: 3"
    assert result.metadata == {"exit_code": 3}


async def test_exit_code_note_starts_on_its_own_line(ws: Path) -> None:
    result = await Runner(Bash(ws))("Bash", command="printf partial; false")

    assert result.text == "partial\nExit code: 1"


async def test_output_streams_while_the_command_runs(ws: Path) -> None:
    fifo = ws / "gate"
    os.mkfifo(fifo)
    toolkit = Toolkit([Bash(ws)])
    command = f"echo first; read line < {fifo}; echo second $line"
    stream = toolkit.call(
        ToolCallBlock(id="c", name="Bash", input=json.dumps({"command": command}))
    )

    first = await anext(stream)
    # The command is blocked on the FIFO, so this chunk was streamed before it finished.
    assert [b.text for b in first.content if isinstance(b, TextBlock)] == ["first\n"]
    assert not first.is_last
    fd = await asyncio.to_thread(os.open, fifo, os.O_WRONLY)
    os.write(fd, b"go\n")
    os.close(fd)
    rest = [chunk async for chunk in stream]

    texts = "".join(b.text for c in rest for b in c.content if isinstance(b, TextBlock))
    assert texts == "second go\n"
    assert rest[-1].is_last
    assert rest[-1].state is ToolResultState.SUCCESS


@pytest.mark.parametrize("tethered", [False, True])
async def test_a_command_killed_by_a_signal_reports_the_same(ws: Path, tethered: bool) -> None:
    result = await Runner(Bash(ws, tethered=tethered))("Bash", command="echo bye; kill -9 $$")

    assert result.state is ToolResultState.ERROR
    assert result.metadata == {"exit_code": -9}


@pytest.mark.parametrize("tethered", [False, True])
async def test_timeout_kills_the_whole_process_group(ws: Path, tethered: bool) -> None:
    command = "sleep 60 & echo $! > child.pid; echo started; wait"

    result = await Runner(Bash(ws, tethered=tethered))("Bash", command=command, timeout=500)

    assert result.state is ToolResultState.ERROR
    assert result.text == "started\nCommand timed out after 0.5 seconds and was killed."
    assert result.metadata == {"exit_code": None, "timed_out": True}
    assert await wait_until_gone(int((ws / "child.pid").read_text()))


@pytest.mark.parametrize("tethered", [False, True])
async def test_stopping_early_kills_the_command(ws: Path, tethered: bool) -> None:
    toolkit = Toolkit([Bash(ws, tethered=tethered)])
    command = "echo $$ > shell.pid; echo ready; sleep 60"
    stream = toolkit.call(
        ToolCallBlock(id="c", name="Bash", input=json.dumps({"command": command}))
    )

    await anext(stream)
    await stream.aclose()

    assert await wait_until_gone(int((ws / "shell.pid").read_text()))


async def test_long_output_is_capped_with_a_note(ws: Path) -> None:
    result = await Runner(Bash(ws, max_output_chars=10))("Bash", command="printf '%0100d' 0")

    assert result.ok
    assert result.text == "0" * 10 + "\n[Output truncated: 90 more characters were not shown.]"


async def test_invalid_bytes_are_replaced(ws: Path) -> None:
    result = await Runner(Bash(ws))("Bash", command=r"printf 'caf\xc3\xa9 \xff\n'")

    assert result.text == "café \ufffd\n"


async def test_missing_workspace_is_an_error(tmp_path: Path) -> None:
    result = await Runner(Bash(tmp_path / "absent"))("Bash", command="true")

    assert not result.ok
    assert "Cannot start bash" in result.text


@pytest.mark.parametrize("arguments", [{}, {"command": "true", "timeout": -1}])
async def test_invalid_arguments_are_results(ws: Path, arguments: dict[str, object]) -> None:
    result = await Runner(Bash(ws))("Bash", **arguments)

    assert not result.ok
    assert result.text.startswith("Invalid arguments for tool 'Bash':")


def test_schema_follows_agentscope_names() -> None:
    schema = Bash(".").input_schema

    assert set(schema["properties"]) == {"command", "description", "timeout"}
    assert schema["required"] == ["command"]
    timeout = schema["properties"]["timeout"]
    assert (timeout["type"], timeout["default"], timeout["maximum"]) == ("integer", 120000, 600000)
