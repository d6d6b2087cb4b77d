"""Offloading into a LocalWorkspace: sessions/<id>/ files and the content-addressed data/."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

from agent_core.message import (
    AssistantMsg,
    Base64Source,
    DataBlock,
    TextBlock,
    ToolResultBlock,
    UserMsg,
)
from agent_core.ports import Offloader
from workspaces import LocalWorkspace

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def read(path: str | Path) -> str:
    return Path(path).read_text()


def image_block() -> DataBlock:
    source = Base64Source(data=base64.b64encode(PNG).decode(), media_type="image/png")
    return DataBlock(source=source, name="dot.png")


async def test_context_is_appended_to_the_sessions_jsonl_with_payloads_stored_once(
    workspace: LocalWorkspace,
) -> None:
    assert isinstance(workspace, Offloader)
    first = [UserMsg("user", [TextBlock(text="look"), image_block()])]
    path = await workspace.offload_context("s-1", first)
    assert Path(path) == workspace.workdir / "sessions" / "s-1" / "context.jsonl"

    result = ToolResultBlock(id="call_1", name="shot", output=[image_block()])
    second = [AssistantMsg("bot", [result])]
    assert await workspace.offload_context("s-1", second) == path

    stored = list((workspace.workdir / "data").iterdir())
    assert [p.name for p in stored] == [f"{hashlib.sha256(PNG).hexdigest()}.png"]
    assert stored[0].read_bytes() == PNG

    lines = [json.loads(line) for line in read(path).splitlines()]
    assert len(lines) == 2
    user_image = lines[0]["content"][1]["source"]
    assert user_image == {"type": "url", "url": stored[0].as_uri(), "media_type": "image/png"}
    assert lines[1]["content"][0]["output"][0]["source"]["url"] == stored[0].as_uri()


async def test_tool_results_get_a_file_each(workspace: LocalWorkspace) -> None:
    result = ToolResultBlock(id="call/1", name="Bash", output="x" * 50_000)
    first = Path(await workspace.offload_tool_result("s-1", result))
    second = Path(await workspace.offload_tool_result("s-1", result))
    assert first.parent == workspace.workdir / "sessions" / "s-1"
    assert first.name == "tool_result-call%2F1.txt"
    assert second.name == "tool_result-call%2F1-1.txt"
    assert read(first) == read(second) == "x" * 50_000

    mixed = ToolResultBlock(
        id="call_2", name="shot", output=[TextBlock(text="here: "), image_block()]
    )
    text = read(await workspace.offload_tool_result("s-1", mixed))
    data = workspace.workdir / "data" / f"{hashlib.sha256(PNG).hexdigest()}.png"
    assert text.startswith("here: ")
    assert f"[data: {data.as_uri()} (image/png)]" in text


async def test_session_ids_cannot_escape_and_sessions_can_be_cleared(
    workspace: LocalWorkspace,
) -> None:
    sessions = workspace.workdir / "sessions"
    path = await workspace.offload_context("../../etc", [UserMsg("u", "hi")])
    assert path == str(sessions / "%2E.%2F..%2Fetc" / "context.jsonl")
    unnamed = await workspace.offload_context("", [UserMsg("u", "hi")])
    assert unnamed == str(sessions / "default" / "context.jsonl")

    await workspace.clear_session("../../etc")
    assert sorted(p.name for p in sessions.iterdir()) == ["default"]
