"""Formatters for the Gemini API: `Msg`s as `generateContent` `contents`.

The conversation is first laid out as OpenAI formats it (`OpenAIChatFormatter` or
`OpenAIMultiAgentFormatter`: reply steps, deferred hints, tool images, `<history>` folding), then
each message becomes a Gemini content: `system` stays `system` (the model sends it as
`systemInstruction`), `assistant` becomes `model` with `functionCall` parts, and consecutive
`tool` messages become one `user` content of `functionResponse` parts. Images travel as
`inlineData` (base64) or, for `http(s)`/`gs` URLs, as `fileData`; nothing is downloaded or read
from disk here.
"""

from __future__ import annotations

import json
import mimetypes
from typing import Any

from agent_core.formatter import FormatterBase, OpenAIChatFormatter, OpenAIMultiAgentFormatter
from agent_core.message import Msg

SIGNATURE_PREFIX = "gemini_ts:"
"""Prefix of a tool-call id that holds the call's Gemini thought signature."""

_REMOTE_SCHEMES = ("http://", "https://", "gs://")


def _media_part(url: str) -> dict[str, Any]:
    if url.startswith("data:") and ";base64," in url:
        head, _, data = url.partition(";base64,")
        return {"inlineData": {"mimeType": head.removeprefix("data:"), "data": data}}
    if url.startswith(_REMOTE_SCHEMES):
        media_type = mimetypes.guess_type(url)[0] or "image/jpeg"
        return {"fileData": {"mimeType": media_type, "fileUri": url}}
    return {"text": f"[image omitted: {url[:100]}]"}


def _parts(content: Any) -> list[dict[str, Any]]:
    """Chat Completions content (a string or content parts) as Gemini parts."""
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"text": content}]
    parts = []
    for part in content:
        if part["type"] == "text":
            if part["text"]:
                parts.append({"text": part["text"]})
        elif part["type"] == "image_url":
            parts.append(_media_part(part["image_url"]["url"]))
    return parts


def _args(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        # A call cut off mid-stream (or by compression) has unparseable arguments; Gemini
        # requires an object.
        return {}
    return value if isinstance(value, dict) else {}


def _call_part(call: dict[str, Any]) -> dict[str, Any]:
    function = call["function"]
    part: dict[str, Any] = {
        "functionCall": {
            "id": call["id"],
            "name": function["name"],
            "args": _args(function["arguments"]),
        }
    }
    if call["id"].startswith(SIGNATURE_PREFIX):
        part["thoughtSignature"] = call["id"].removeprefix(SIGNATURE_PREFIX)
    return part


def to_gemini_contents(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return Chat Completions messages (as `OpenAIChatFormatter` writes them) as Gemini contents.

    System messages are kept with role `system`, for the model to lift into
    `systemInstruction`.
    """
    contents: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role == "tool":
            response = {
                "functionResponse": {
                    "id": message["tool_call_id"],
                    "name": message.get("name", ""),
                    "response": {"output": message["content"]},
                }
            }
            last = contents[-1] if contents else None
            if (
                last is not None
                and last["role"] == "user"
                and "functionResponse" in last["parts"][0]
            ):
                last["parts"].append(response)
            else:
                contents.append({"role": "user", "parts": [response]})
            continue
        parts = _parts(message.get("content"))
        if role == "assistant":
            parts += [_call_part(call) for call in message.get("tool_calls") or []]
        if parts:
            contents.append({"role": "model" if role == "assistant" else role, "parts": parts})
    return contents


class GeminiChatFormatter(FormatterBase):
    """Formats a conversation as Gemini `contents` (system contents kept with role `system`).

    Thinking blocks are dropped (Gemini needs only the thought signatures, which ride on the
    tool-call ids). Images become `inlineData` or `fileData` parts; other binary data becomes a
    short text placeholder.
    """

    def __init__(self) -> None:
        self._layout: FormatterBase = OpenAIChatFormatter()

    async def format(self, msgs: list[Msg]) -> list[dict[str, Any]]:
        """Return `msgs` as Gemini contents, in order.

        Args:
            msgs: The conversation, system prompt first.
        """
        return to_gemini_contents(await self._layout.format(msgs))


class GeminiMultiAgentFormatter(GeminiChatFormatter):
    """Formats a conversation among several named speakers as Gemini `contents`.

    Runs of what speakers said are folded into one `user` content between `<history>` tags,
    each turn led by its speaker's name (see `OpenAIMultiAgentFormatter`); function calls and
    responses keep their native shape.
    """

    def __init__(self) -> None:
        self._layout = OpenAIMultiAgentFormatter()
