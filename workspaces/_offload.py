"""Offloading: what `sessions/<id>/` files and the content-addressed `data/` hold.

`render_context` and `render_tool_result` turn offloaded content into the files' text, handing
each inline binary payload to a `DataSink` that stores it and names its URL; `OffloadStore`
writes them to the local layout (blocking throughout: the workspace calls it from a worker
thread). A sandbox backend renders the same text and writes it through its own filesystem.
"""

from __future__ import annotations

import hashlib
import mimetypes
from base64 import b64decode
from collections.abc import Callable
from itertools import count
from pathlib import Path
from typing import Any

from agent_core.message import (
    Base64Source,
    DataBlock,
    HintBlock,
    Msg,
    TextBlock,
    ToolResultBlock,
    URLSource,
)
from workspaces._files import component, write_atomic

CONTEXT_FILE = "context.jsonl"
# Offloads of an agent that runs outside any session.
_NO_SESSION = "default"

DataSink = Callable[[bytes, str], str]
"""Stores a binary payload of a media type once; returns the URL the offloaded text cites."""


def session_component(session_id: str) -> str:
    """The directory name of one session's offloaded files."""
    return component(session_id or _NO_SESSION)


def data_name(payload: bytes, media_type: str) -> str:
    """The file name of a payload under `data/`: its SHA-256 and the type's extension."""
    digest = hashlib.sha256(payload).hexdigest()
    return f"{digest}{mimetypes.guess_extension(media_type) or ''}"


def tool_result_stem(result: ToolResultBlock) -> str:
    """The file name (before any `-N` and `.txt`) of an offloaded tool result."""
    return f"tool_result-{component(result.id)}"


def render_context(msgs: list[Msg], sink: DataSink) -> str:
    """The lines `msgs` add to a session's context file (one JSON object each)."""
    return "".join(_externalized(msg, sink).model_dump_json() + "\n" for msg in msgs)


def render_tool_result(result: ToolResultBlock, sink: DataSink) -> str:
    """A tool result's full output as text; binary output appears as `[data: <url> (<type>)]`."""
    if isinstance(result.output, str):
        return result.output
    return "".join(_as_text(block, sink) for block in result.output)


def _as_text(block: TextBlock | DataBlock, sink: DataSink) -> str:
    if isinstance(block, TextBlock):
        return block.text
    source = _externalized_block(block, sink).source
    assert isinstance(source, URLSource)  # externalized blocks are URL-backed
    return f"\n[data: {source.url} ({source.media_type})]\n"


def _externalized_block(block: DataBlock, sink: DataSink) -> DataBlock:
    """`block` with an inline payload replaced by the URL of its stored copy."""
    if not isinstance(block.source, Base64Source):
        return block
    media_type = block.source.media_type
    url = sink(b64decode(block.source.data), media_type)
    source = URLSource(url=url, media_type=media_type)
    return block.model_copy(update={"source": source})


def _externalized(msg: Msg, sink: DataSink) -> Msg:
    """`msg` with every inline payload (in data, tool-result and hint blocks) stored."""
    content: list[Any] = []
    for block in msg.content:
        if isinstance(block, DataBlock):
            block = _externalized_block(block, sink)
        elif isinstance(block, ToolResultBlock) and not isinstance(block.output, str):
            block = block.model_copy(update={"output": _blocks(block.output, sink)})
        elif isinstance(block, HintBlock) and not isinstance(block.hint, str):
            block = block.model_copy(update={"hint": _blocks(block.hint, sink)})
        content.append(block)
    return msg.model_copy(update={"content": content})


def _blocks(blocks: list[TextBlock | DataBlock], sink: DataSink) -> list[TextBlock | DataBlock]:
    return [_externalized_block(b, sink) if isinstance(b, DataBlock) else b for b in blocks]


class OffloadStore:
    """Writes offloaded context and tool results, and stores binary payloads once each."""

    def __init__(
        self,
        sessions_dir: Path,
        data_dir: Path,
        visible: Callable[[Path], Path] = lambda path: path,
    ) -> None:
        """Write session files under `sessions_dir` and payloads under `data_dir`.

        Args:
            sessions_dir: Where each session's files go.
            data_dir: Where binary payloads go.
            visible: How the agent's tools name a stored file (its URLs point there).
        """
        self.sessions_dir = sessions_dir
        self.data_dir = data_dir
        self.visible = visible

    def session_dir(self, session_id: str) -> Path:
        """The directory of one session's offloaded files (not created)."""
        return self.sessions_dir / session_component(session_id)

    def store_data(self, payload: bytes, media_type: str) -> Path:
        """Store `payload` under `data/<sha256><ext>`, unless the same bytes are stored already.

        Returns:
            The file holding the payload.
        """
        name = data_name(payload, media_type)
        digest = name[:64]
        stored = next(self.data_dir.glob(f"{digest}*"), None)
        if stored is not None:
            return stored
        path = self.data_dir / name
        self.data_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(path, payload)
        return path

    def _sink(self, payload: bytes, media_type: str) -> str:
        return self.visible(self.store_data(payload, media_type)).as_uri()

    def context(self, session_id: str, msgs: list[Msg]) -> Path:
        """Append `msgs` (one JSON line each) to the session's context file; return the file."""
        folder = self.session_dir(session_id)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / CONTEXT_FILE
        lines = render_context(msgs, self._sink)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(lines)
        return path

    def tool_result(self, session_id: str, result: ToolResultBlock) -> Path:
        """Write a tool result's full output as text to a new file of the session; return it.

        Binary output is stored under `data/` and appears as a `[data: <url> (<type>)]` line.
        """
        folder = self.session_dir(session_id)
        folder.mkdir(parents=True, exist_ok=True)
        text = render_tool_result(result, self._sink)
        stem = tool_result_stem(result)
        for attempt in count():
            path = folder / (f"{stem}.txt" if attempt == 0 else f"{stem}-{attempt}.txt")
            try:
                with path.open("x", encoding="utf-8") as handle:
                    handle.write(text)
            except FileExistsError:
                continue
            return path
        raise AssertionError("unreachable")  # pragma: no cover - count() never ends
