"""Offloading to the local layout: `sessions/<id>/` files and the content-addressed `data/`.

Blocking throughout; the workspace calls it from a worker thread.
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
        return self.sessions_dir / component(session_id or _NO_SESSION)

    def store_data(self, payload: bytes, media_type: str) -> Path:
        """Store `payload` under `data/<sha256><ext>`, unless the same bytes are stored already.

        Returns:
            The file holding the payload.
        """
        digest = hashlib.sha256(payload).hexdigest()
        stored = next(self.data_dir.glob(f"{digest}*"), None)
        if stored is not None:
            return stored
        path = self.data_dir / f"{digest}{mimetypes.guess_extension(media_type) or ''}"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(path, payload)
        return path

    def context(self, session_id: str, msgs: list[Msg]) -> Path:
        """Append `msgs` (one JSON line each) to the session's context file; return the file."""
        folder = self.session_dir(session_id)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / CONTEXT_FILE
        lines = [self._externalized(msg).model_dump_json() + "\n" for msg in msgs]
        with path.open("a", encoding="utf-8") as handle:
            handle.writelines(lines)
        return path

    def tool_result(self, session_id: str, result: ToolResultBlock) -> Path:
        """Write a tool result's full output as text to a new file of the session; return it.

        Binary output is stored under `data/` and appears as a `[data: <url> (<type>)]` line.
        """
        folder = self.session_dir(session_id)
        folder.mkdir(parents=True, exist_ok=True)
        if isinstance(result.output, str):
            text = result.output
        else:
            text = "".join(self._as_text(block) for block in result.output)
        stem = f"tool_result-{component(result.id)}"
        for attempt in count():
            path = folder / (f"{stem}.txt" if attempt == 0 else f"{stem}-{attempt}.txt")
            try:
                with path.open("x", encoding="utf-8") as handle:
                    handle.write(text)
            except FileExistsError:
                continue
            return path
        raise AssertionError("unreachable")  # pragma: no cover - count() never ends

    def _as_text(self, block: TextBlock | DataBlock) -> str:
        if isinstance(block, TextBlock):
            return block.text
        source = self._externalized_block(block).source
        assert isinstance(source, URLSource)  # externalized blocks are URL-backed
        return f"\n[data: {source.url} ({source.media_type})]\n"

    def _externalized_block(self, block: DataBlock) -> DataBlock:
        """`block` with an inline payload replaced by a file URL into `data/`."""
        if not isinstance(block.source, Base64Source):
            return block
        media_type = block.source.media_type
        path = self.store_data(b64decode(block.source.data), media_type)
        source = URLSource(url=self.visible(path).as_uri(), media_type=media_type)
        return block.model_copy(update={"source": source})

    def _externalized(self, msg: Msg) -> Msg:
        """`msg` with every inline payload (in data, tool-result and hint blocks) stored."""
        content: list[Any] = []
        for block in msg.content:
            if isinstance(block, DataBlock):
                block = self._externalized_block(block)
            elif isinstance(block, ToolResultBlock) and not isinstance(block.output, str):
                block = block.model_copy(update={"output": self._blocks(block.output)})
            elif isinstance(block, HintBlock) and not isinstance(block.hint, str):
                block = block.model_copy(update={"hint": self._blocks(block.hint)})
            content.append(block)
        return msg.model_copy(update={"content": content})

    def _blocks(self, blocks: list[TextBlock | DataBlock]) -> list[TextBlock | DataBlock]:
        return [self._externalized_block(b) if isinstance(b, DataBlock) else b for b in blocks]
