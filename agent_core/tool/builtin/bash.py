"""`Bash`: run a shell command in the workspace, streaming its output."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import resource
import signal
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from agent_core.message import DataOrText, TextBlock
from agent_core.permission.bash import (
    bash_match_rule,
    bash_permission,
    bash_read_paths,
    bash_rule_subjects,
    bash_suggestions,
    is_read_only,
)
from agent_core.permission.types import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionRule,
)
from agent_core.tool.base import ToolChunk
from agent_core.tool.builtin._base import (
    StatelessTool,
    ToolInput,
    Workspace,
    done,
    done_blocks,
    input_schema,
)

_TETHER = str(Path(__file__).with_name("_tether.py"))

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
_READ_SIZE = 65_536


class BashInput(ToolInput):
    """Arguments of `Bash`."""

    command: str = Field(description="The bash command to run.")
    description: str | None = Field(
        default=None,
        description=(
            "A short description of what the command does (5-10 words), shown to the user."
        ),
    )
    timeout: int = Field(
        default=DEFAULT_TIMEOUT_MS,
        ge=0,
        description=(
            f"Timeout in milliseconds (default {DEFAULT_TIMEOUT_MS}, max {MAX_TIMEOUT_MS})."
        ),
        json_schema_extra={"maximum": MAX_TIMEOUT_MS},
    )


def _kill_group(process: asyncio.subprocess.Process) -> None:
    """Kill the command and everything it started in its process group."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


class Bash(StatelessTool[BashInput]):
    """Run `bash -c <command>` in the workspace directory.

    Output (stdout and stderr, interleaved as written) streams back in chunks while the
    command runs. The final chunk reports a non-zero exit code in its text, and always in its
    metadata as `exit_code`; a non-zero exit or a timeout ends the call in ERROR. On timeout
    the whole process group is killed. Each call starts a fresh shell in the workspace
    directory, so `cd` and variables do not carry over between calls.
    """

    name = "Bash"
    description = (
        "Run a bash command and return its output (stdout and stderr together).\n\n"
        "- Every command starts in the workspace directory in a fresh shell; `cd` and "
        "environment changes do not persist between calls. Prefer absolute paths.\n"
        "- Quote paths that contain spaces.\n"
        "- The default timeout is 2 minutes (max 10 minutes), given in milliseconds; on "
        "timeout the command and its children are killed.\n"
        "- A process meant to keep running (a server, a watcher) must run detached with its "
        "output redirected, e.g. `nohup cmd > /tmp/cmd.log 2>&1 &`; otherwise the call waits "
        "for it until the timeout.\n"
        "- Prefer the Read, Write, Edit, Glob and Grep tools over cat, echo/sed, find and grep.\n"
        "- Chain dependent commands with `&&`; issue independent commands as separate calls."
    )
    input_model = BashInput
    input_schema = input_schema(BashInput)

    def __init__(
        self,
        cwd: str | Path,
        *,
        additional_dangerous_files: Sequence[str] = (),
        additional_dangerous_directories: Sequence[str] = (),
        max_output_chars: int = 100_000,
        env: Mapping[str, str] | None = None,
        limits: Mapping[int, int] | None = None,
        tethered: bool = False,
    ) -> None:
        """Create the tool for the workspace at `cwd`.

        Args:
            cwd: The workspace directory; commands start there.
            additional_dangerous_files: File names that always need confirmation, on top of
                the permission system's defaults.
            additional_dangerous_directories: Directory names that always need
                confirmation, on top of the defaults.
            max_output_chars: Output beyond this many characters is dropped (and counted).
            env: The commands' whole environment; None inherits this process's.
            limits: Resource limits (`resource.RLIMIT_*` -> soft and hard value) set on each
                command's shell before it starts, e.g. CPU seconds.
            tethered: Kill each command's whole process group when this process dies, even
                by SIGKILL (Linux; a small wrapper process leads the group, `_tether`).
        """
        self.workspace = Workspace(cwd)
        self.additional_dangerous_files = list(additional_dangerous_files)
        self.additional_dangerous_directories = list(additional_dangerous_directories)
        self.max_output_chars = max_output_chars
        self.env = None if env is None else dict(env)
        self.limits = dict(limits or {})
        self.tethered = tethered

    def _argv(self, command: str) -> list[str]:
        shell = ["bash", "-c", command]
        if not self.tethered:
            return shell
        return [sys.executable, "-I", "-S", _TETHER, str(os.getpid()), "--", *shell]

    def _apply_limits(self) -> None:
        # Runs in the forked child before exec: lower its limits (children inherit them).
        for which, value in self.limits.items():
            resource.setrlimit(which, (value, value))

    def _command(self, tool_input: dict[str, Any]) -> str:
        raw = tool_input.get("command")
        return raw if isinstance(raw, str) else ""

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        """Layered safety analysis of the command (see `agent_core.permission.bash`)."""
        command = self._command(tool_input)
        if not command.strip():
            return PermissionDecision(behavior=PermissionBehavior.PASSTHROUGH)
        return bash_permission(
            command,
            context,
            str(self.workspace.cwd),
            dangerous_files=self.additional_dangerous_files,
            dangerous_directories=self.additional_dangerous_directories,
            tool_name=self.name,
        )

    async def check_read_only(self, tool_input: dict[str, Any]) -> bool:
        """Whether the command only reads (every subcommand is a known read-only command)."""
        command = self._command(tool_input)
        return bool(command.strip()) and is_read_only(command)

    async def check_read_only_in(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> bool:
        """`check_read_only`, widened by the context's `extra_read_only_commands`."""
        command = self._command(tool_input)
        return bool(command.strip()) and is_read_only(command, context.extra_read_only_commands)

    def match_rule(self, rule_content: str | None, tool_input: dict[str, Any]) -> bool:
        """Prefix matching: `git commit:*` matches every `git commit ...` command."""
        return bash_match_rule(rule_content, self._command(tool_input))

    def rule_subjects(self, tool_input: dict[str, Any]) -> list[dict[str, Any]]:
        """The call as rules see it: one input per command the line runs."""
        subjects = bash_rule_subjects(self._command(tool_input))
        return [{**tool_input, "command": subject} for subject in subjects]

    def read_paths(self, tool_input: dict[str, Any]) -> list[str] | None:
        """The paths a read-only command reads, or None when they cannot be told."""
        return bash_read_paths(self._command(tool_input), str(self.workspace.cwd))

    def generate_suggestions(self, tool_input: dict[str, Any]) -> list[PermissionRule]:
        """Suggest a prefix rule from the command's first two words (`git commit:*`)."""
        return bash_suggestions(self._command(tool_input), self.name)

    async def run(self, params: BashInput) -> AsyncIterator[ToolChunk]:
        """Start the command and stream its output until it exits or times out."""
        timeout_ms = params.timeout or DEFAULT_TIMEOUT_MS
        seconds = min(timeout_ms, MAX_TIMEOUT_MS) / 1000
        try:
            process = await asyncio.create_subprocess_exec(
                *self._argv(params.command),
                cwd=self.workspace.cwd,
                env=self.env,
                preexec_fn=self._apply_limits if self.limits else None,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            yield done(f"Cannot start bash in {self.workspace.cwd}: {exc}", error=True)
            return
        stream = self._stream(process, seconds)
        try:
            async with contextlib.aclosing(stream):
                async for chunk in stream:
                    yield chunk
        finally:
            if process.returncode is None:  # timed out, or the caller stopped listening
                _kill_group(process)

    async def _stream(
        self, process: asyncio.subprocess.Process, seconds: float
    ) -> AsyncGenerator[ToolChunk, None]:
        assert process.stdout is not None
        deadline = asyncio.get_running_loop().time() + seconds
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        shown = dropped = 0
        ends_with_newline = True
        timed_out = False
        while True:
            # The deadline scopes each read only: a timeout must never fire while the
            # consumer holds a yielded chunk.
            try:
                async with asyncio.timeout_at(deadline):
                    data = await process.stdout.read(_READ_SIZE)
            except TimeoutError:
                timed_out = True
                break
            text = decoder.decode(data, final=not data)
            keep = text[: max(0, self.max_output_chars - shown)]
            shown += len(keep)
            dropped += len(text) - len(keep)
            if keep:
                ends_with_newline = keep.endswith("\n")
                yield ToolChunk(content=[TextBlock(text=keep)])
            if not data:
                break
        if timed_out:
            _kill_group(process)
        code = await process.wait()
        notes: list[str] = []
        if dropped:
            notes.append(f"[Output truncated: {dropped} more characters were not shown.]")
        if timed_out:
            notes.append(f"Command timed out after {seconds:g} seconds and was killed.")
        elif code != 0:
            notes.append(f"Exit code: {code}")
        text = "\n".join(notes)
        if text and not ends_with_newline:
            text = "\n" + text
        metadata: dict[str, Any] = {"exit_code": None if timed_out else code}
        if timed_out:
            metadata["timed_out"] = True
        blocks: list[DataOrText] = [TextBlock(text=text)] if text else []
        yield done_blocks(blocks, error=timed_out or code != 0, **metadata)
