"""What a differential provider case records of one answer, AgentScope's model's and ours alike.

The final content (timestamps, states and random ids left out), the usage counts, and the
request the local protocol server received.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support.scripted_http import RecordedRequest


def recorded(
    final: Any,
    request: RecordedRequest,
    *,
    call_id_prefixes: tuple[str, ...] = ("",),
    usage_extras: tuple[str, ...] = (),
    unset: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The record of the final response `final` to `request`.

    Args:
        final: The final response (its `content` blocks are pydantic models, `usage` or None).
        request: The one request the server received.
        call_id_prefixes: Tool-call ids kept (those starting so); the others are random.
        usage_extras: Usage fields recorded besides the token counts every model reports.
        unset: Block fields left out where they are None (fields one side's blocks lack).
    """
    return {
        "content": [_block(block, call_id_prefixes, unset) for block in final.content],
        "usage": _usage(final.usage, usage_extras),
        "request": request.body,
        "path": request.path,
    }


def _block(block: Any, call_id_prefixes: tuple[str, ...], unset: tuple[str, ...]) -> dict[str, Any]:
    data: dict[str, Any] = block.model_dump(
        mode="json", exclude={"created_at", "finished_at", "state", "suggested_rules"}
    )
    for name in unset:
        if data.get(name, "") is None:
            del data[name]
    if data["type"] != "tool_call" or not data["id"].startswith(call_id_prefixes):
        data.pop("id", None)
    if data["type"] == "tool_call":
        data["input"] = json.loads(data["input"])
    return data


def _usage(usage: Any, extras: tuple[str, ...]) -> dict[str, int] | None:
    if usage is None:
        return None
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_input_tokens": usage.cache_input_tokens,
        **{name: getattr(usage, name, 0) or 0 for name in extras},
    }
