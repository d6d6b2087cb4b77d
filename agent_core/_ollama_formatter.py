"""Formatters for Ollama's native `/api/chat`: `Msg`s as its `messages`.

The conversation is first laid out as OpenAI formats it (`OpenAIChatFormatter` or
`OpenAIMultiAgentFormatter`: reply steps, deferred hints, tool images, `<history>` folding), then
each message is reshaped the way Ollama takes it: content is one string with images beside it
as base64 (`images`), tool-call arguments are JSON objects, and a tool message names its tool
(`tool_name`). Image URLs other than `data:` URLs become a text placeholder: nothing is
downloaded here.
"""

from __future__ import annotations

import json
from typing import Any

from agent_core.formatter import FormatterBase, OpenAIChatFormatter, OpenAIMultiAgentFormatter
from agent_core.message import Msg


def _content(content: Any) -> tuple[str, list[str]]:
    """Chat Completions content as Ollama's text and base64 images."""
    if content is None or isinstance(content, str):
        return content or "", []
    texts: list[str] = []
    images: list[str] = []
    for part in content:
        if part["type"] == "text":
            texts.append(part["text"])
        elif part["type"] == "image_url":
            url = part["image_url"]["url"]
            if url.startswith("data:") and ";base64," in url:
                images.append(url.partition(";base64,")[2])
            else:
                texts.append(f"[image omitted: {url[:100]}]")
    return "\n".join(texts), images


def _arguments(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        # A call cut off mid-stream has unparseable arguments; Ollama requires an object.
        return {}
    return value if isinstance(value, dict) else {}


def to_ollama_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return Chat Completions messages (as `OpenAIChatFormatter` writes them) as Ollama's."""
    out = []
    for message in messages:
        role = message["role"]
        if role == "tool":
            out.append(
                {
                    "role": "tool",
                    "tool_name": message.get("name", ""),
                    "content": message["content"],
                }
            )
            continue
        text, images = _content(message.get("content"))
        converted: dict[str, Any] = {"role": role, "content": text}
        if images:
            converted["images"] = images
        if message.get("tool_calls"):
            converted["tool_calls"] = [
                {
                    "function": {
                        "name": call["function"]["name"],
                        "arguments": _arguments(call["function"]["arguments"]),
                    }
                }
                for call in message["tool_calls"]
            ]
        out.append(converted)
    return out


class OllamaChatFormatter(FormatterBase):
    """Formats a conversation as the `messages` of an Ollama `/api/chat` request.

    Thinking blocks are dropped. Images become base64 `images`; other binary data (and images
    given by remote URL) becomes a short text placeholder.
    """

    def __init__(self) -> None:
        self._layout: FormatterBase = OpenAIChatFormatter()

    async def format(self, msgs: list[Msg]) -> list[dict[str, Any]]:
        """Return `msgs` as Ollama chat messages, in order.

        Args:
            msgs: The conversation, system prompt first.
        """
        return to_ollama_messages(await self._layout.format(msgs))


class OllamaMultiAgentFormatter(OllamaChatFormatter):
    """Formats a conversation among several named speakers for Ollama's `/api/chat`.

    Runs of what speakers said are folded into one user message between `<history>` tags, each
    turn led by its speaker's name (see `OpenAIMultiAgentFormatter`); tool calls and results
    keep their native shape.
    """

    def __init__(self) -> None:
        self._layout = OpenAIMultiAgentFormatter()
