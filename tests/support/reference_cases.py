"""Replaying the AgentScope differential fixtures (`tests/reference/data/*.json`) on our models.

A fixture holds cases, each with its inputs and what AgentScope's model made of a scripted
answer (`expected`, as `recorded` writes it); `replay` runs one case on our model against the
same local protocol server and returns the same record.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

from agent_core.message import Msg
from agent_core.model import ChatModelBase, ToolChoice, collect_response
from tests.support.recorded import recorded
from tests.support.scripted_http import RecordedRequest

API_KEY = "test-key"
_DATA = Path(__file__).parents[1] / "reference" / "data"


class _Server(Protocol):
    @property
    def requests(self) -> list[RecordedRequest]: ...


def load_cases(name: str) -> list[dict[str, Any]]:
    """The cases of the fixture `tests/reference/data/<name>.json`."""
    cases: list[dict[str, Any]] = json.loads((_DATA / f"{name}.json").read_text())["cases"]
    return cases


def case_id(case: dict[str, Any]) -> str:
    """A case's test id: provider, name, and whether it streams."""
    return f"{case['provider']}-{case['name']}-{'stream' if case['stream'] else 'whole'}"


async def replay(
    model: ChatModelBase, server: _Server, case: dict[str, Any], **what: tuple[str, ...]
) -> dict[str, Any]:
    """Call `model` with the case's inputs (its one request going to `server`); return the record.

    `what` says what else to keep, as `recorded` takes it.
    """
    messages = [Msg.model_validate(m) for m in case["messages"]]
    choice = case.get("tool_choice")
    if isinstance(choice, dict):
        choice = ToolChoice.model_validate(choice)
    try:
        final = await collect_response(await model(messages, case.get("tools"), choice))
    finally:
        await model.aclose()
    (request,) = server.requests
    return recorded(final, request, **what)
