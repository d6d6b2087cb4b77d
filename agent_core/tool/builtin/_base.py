"""What the built-in tools share: argument models, workspace paths, results and the read cache."""

from __future__ import annotations

import contextlib
import os
from abc import abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Self, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from agent_core.deferred_model import DeferredModel
from agent_core.message import DataOrText, TextBlock, ToolResultState
from agent_core.state import AgentState, ReadCacheEntry
from agent_core.tool.base import ToolBase, ToolChunk
from agent_core.tool.execution import ToolExecutor, ToolInvocation
from agent_core.tool.function import (
    CALL_ID_ARG,
    STATE_ARG,
    clean_schema,
    format_validation_error,
)

# Version-control metadata directories, never listed or searched.
VCS_DIRS = frozenset({".git", ".svn", ".hg", ".bzr", ".jj", ".sl"})


class ToolInput(DeferredModel):
    """Base of the built-in tools' argument models.

    Unknown arguments are ignored rather than rejected, so that a model prompted for a
    look-alike tool (an extra flag or two) still gets its call through.
    """

    model_config = ConfigDict(extra="ignore", populate_by_name=True)


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema the model sees for an argument model.

    Optional arguments are shown with their plain type (no `anyOf [..., null]`, no null
    default), the way hand-written tool schemas declare them.

    Args:
        model: The argument model.

    Returns:
        A self-contained object schema.
    """
    schema = clean_schema(model.model_json_schema(by_alias=True))
    for prop in schema.get("properties", {}).values():
        variants = prop.get("anyOf")
        if isinstance(variants, list) and {"type": "null"} in variants:
            rest = [v for v in variants if v != {"type": "null"}]
            if len(rest) == 1:
                del prop["anyOf"]
                prop.update(rest[0])
        if "default" in prop and prop["default"] is None:
            del prop["default"]
    # The argument model's docstring documents the code, not the tool.
    for noise in ("additionalProperties", "description"):
        schema.pop(noise, None)
    return schema


def done(text: str, *, error: bool = False, **metadata: Any) -> ToolChunk:
    """The final chunk of a call: `text` as SUCCESS (or ERROR), with optional metadata."""
    return done_blocks([TextBlock(text=text)], error=error, **metadata)


def done_blocks(blocks: list[DataOrText], *, error: bool = False, **metadata: Any) -> ToolChunk:
    """The final chunk of a call carrying arbitrary output blocks."""
    state = ToolResultState.ERROR if error else ToolResultState.SUCCESS
    return ToolChunk(content=blocks, state=state, metadata=metadata, is_last=True)


P = TypeVar("P", bound=ToolInput)


class BuiltinTool(ToolBase, Generic[P]):
    """A built-in tool: validates its arguments with `input_model`, then executes.

    Invalid arguments become an ERROR result rather than an exception. A workspace-bound tool
    (one with a `workspace` directory) may be bound to a `ToolExecutor`: it then validates
    locally and runs the call wherever the executor runs it.
    """

    input_model: type[P]
    is_call_id_injected = True
    executor: ToolExecutor | None = None
    """Where calls run; None runs them in this process."""

    def bind(self, executor: ToolExecutor | None) -> Self:
        """Run this tool's calls through `executor` (None: in this process); return the tool.

        Raises:
            ValueError: The tool is not bound to a workspace directory.
        """
        if executor is not None and _cwd_of(self) is None:
            raise ValueError(f"tool {self.name!r} has no workspace to delegate to")
        self.executor = executor
        return self

    async def __call__(self, *args: Any, **kwargs: Any) -> AsyncGenerator[ToolChunk, None]:
        """Validate the keyword arguments and stream the tool's output.

        Args:
            *args: Unused; tools are always called with keyword arguments.
            **kwargs: The tool arguments, as sent by the model, plus `_agent_state` for
                state-injected tools.

        Yields:
            Output chunks; the last one has `is_last=True` and a final state.
        """
        state = kwargs.pop(STATE_ARG, None)
        call_id = kwargs.pop(CALL_ID_ARG, None)
        try:
            params = self.input_model.model_validate(self.prepare(kwargs))
        except ValidationError as exc:
            yield done(format_validation_error(self.name, exc), error=True)
            return
        if self.executor is None:
            async for chunk in self.execute(params, state):
                yield chunk
            return
        # Closed here, not whenever it is collected: closing a delegated call cancels it.
        async with contextlib.aclosing(
            self._delegate(self.executor, params, state, call_id)
        ) as stream:
            async for chunk in stream:
                yield chunk

    async def _delegate(
        self, executor: ToolExecutor, params: P, state: object, call_id: object
    ) -> AsyncGenerator[ToolChunk, None]:
        """Run the validated call through `executor`, carrying the read cache both ways."""
        context = state.tool_context if isinstance(state, AgentState) else None
        invocation = ToolInvocation(
            tool_call_id=call_id if isinstance(call_id, str) else None,
            tool=self.name,
            cwd=str(_cwd_of(self)),
            arguments=params.model_dump(mode="json", by_alias=True, exclude_unset=True),
            tool_context=context,
        )
        final: ToolChunk | None = None
        async with contextlib.aclosing(executor.execute(invocation)) as outputs:
            async for output in outputs:
                if output.tool_context is not None and isinstance(state, AgentState):
                    state.tool_context = output.tool_context
                if output.chunk is None or final is not None:
                    continue
                if output.chunk.is_final:
                    # Held back to the end: callers stop reading at the final chunk, and the
                    # tool state may only follow it.
                    final = output.chunk
                else:
                    yield output.chunk
        if final is not None:
            yield final

    def prepare(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Rewrite raw arguments before validation (aliases a model might use); default: none."""
        return kwargs

    @abstractmethod
    def execute(self, params: P, state: object) -> AsyncIterator[ToolChunk]:
        """Run on validated arguments and whatever state the toolkit injected."""


class StatelessTool(BuiltinTool[P]):
    """A built-in tool that does not use the agent state."""

    def execute(self, params: P, state: object) -> AsyncIterator[ToolChunk]:
        """Run the tool, ignoring `state`."""
        return self.run(params)

    @abstractmethod
    def run(self, params: P) -> AsyncIterator[ToolChunk]:
        """Execute the call on validated arguments, streaming chunks (the last one final).

        Args:
            params: The validated arguments.

        Returns:
            An async iterator of chunks.
        """


class StatefulTool(BuiltinTool[P]):
    """A built-in tool that reads or changes the agent state (`is_state_injected`)."""

    is_state_injected = True

    async def execute(self, params: P, state: object) -> AsyncIterator[ToolChunk]:
        """Run the tool on the injected agent state; without one, fail the call."""
        if not isinstance(state, AgentState):
            yield done(f"Tool '{self.name}' needs the agent state to run.", error=True)
            return
        async for chunk in self.run(params, state):
            yield chunk

    @abstractmethod
    def run(self, params: P, state: AgentState) -> AsyncIterator[ToolChunk]:
        """Execute the call on validated arguments, streaming chunks (the last one final).

        Args:
            params: The validated arguments.
            state: The agent state, changed in place.

        Returns:
            An async iterator of chunks.
        """


def _cwd_of(tool: ToolBase) -> Path | None:
    workspace = getattr(tool, "workspace", None)
    return workspace.cwd if isinstance(workspace, Workspace) else None


class Workspace:
    """A tool's working directory: where relative paths point and commands run."""

    def __init__(self, cwd: str | Path) -> None:
        """Bind to `cwd` (made absolute; it need not exist yet).

        Args:
            cwd: The workspace directory.
        """
        self.cwd = Path(os.path.abspath(Path(cwd).expanduser()))

    def path(self, raw: str) -> Path:
        """The absolute path `raw` names (`~` expanded, relative to the workspace).

        The result is joined, not resolved, so the operating system interprets `..` and
        symlinks when the file is opened.
        """
        path = Path(raw).expanduser()
        return path if path.is_absolute() else self.cwd / path

    def display(self, raw: str) -> str:
        """How to name `raw` to the model: absolute and normalised.

        Normalisation is lexical, except that a path with `..` components is resolved on
        disk: after a symlink, `..` leads to the parent of the link's target, not of the link.
        """
        path = self.path(raw)
        return os.path.realpath(path) if ".." in path.parts else normal(path)


def normal(path: Path | str) -> str:
    """`path` lexically normalised (`a/./b/../c` -> `a/c`), a pure string operation."""
    return os.path.normpath(path)


@dataclass
class Seen:
    """A file as a file tool just read or wrote it: what the read cache should record."""

    key: str
    mtime: float
    lines: list[str] | None


def observe(path: Path, lines: list[str] | None) -> Seen:
    """Describe `path` as it is on disk now (blocking: call it from a worker thread).

    The cache key is the file's real path, so a file reached through a symlink or `..` is
    the same entry as the file named directly.

    Args:
        path: The file.
        lines: Its lines to keep in the cache, or None to keep only the read marker.
    """
    key = os.path.realpath(path)
    return Seen(key=key, mtime=os.stat(key).st_mtime, lines=lines)


def lookup(entries: list[ReadCacheEntry], path: Path) -> ReadCacheEntry | None:
    """The read-cache entry for `path`, if it was read (blocking: resolves the path)."""
    key = os.path.realpath(path)
    return next((entry for entry in entries if entry.file_path == key), None)


def remember(state: AgentState, seen: Seen) -> None:
    """Record a file in the read cache; newest last. Call it on the event loop.

    Entries beyond `max_cache_files` are dropped oldest first. Beyond `max_cache_bytes` of
    kept content, older entries lose their lines but stay as read markers, so the persisted
    state stays small without forgetting what was read.

    Args:
        state: The agent state holding the cache.
        seen: The file, from `observe`.
    """
    context = state.tool_context
    kept = [e for e in context.read_file_cache if e.file_path != seen.key]
    lines = seen.lines or []
    size = float(sum(len(line.encode()) for line in lines))
    if size > context.max_cache_bytes:
        lines, size = [], 0.0
    kept.append(ReadCacheEntry(file_path=seen.key, lines=lines, updated_at=seen.mtime, bytes=size))
    del kept[: max(0, len(kept) - context.max_cache_files)]
    total = sum(e.bytes for e in kept)
    for old in kept[:-1]:
        if total <= context.max_cache_bytes:
            break
        total -= old.bytes
        old.lines, old.bytes = [], 0.0
    context.read_file_cache = kept


def stale_reason(entry: ReadCacheEntry | None, path: Path, shown: str) -> str | None:
    """Why an existing file may not be changed yet (not read, or changed since), or None.

    Args:
        entry: The file's read-cache entry, if any.
        path: The existing file about to be written.
        shown: The file's name as shown to the model.

    Returns:
        An error message for the model, or None when the file may be written.
    """
    if entry is None:
        return f"File {shown} exists but has not been read yet. Read it first before writing to it."
    if os.stat(path).st_mtime != entry.updated_at:
        return (
            f"File {shown} has been modified since it was last read. Read it again before "
            "writing to it."
        )
    return None
