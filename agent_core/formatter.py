"""Formatters: turn `Msg`s into a provider's request messages.

An assistant `Msg` holds a whole reply, which may span several reasoning steps: text, tool calls,
their results, hints injected between steps, more calls, final text. Chat Completions wants that
as alternating messages, so `OpenAIChatFormatter` splits a reply, in order, into::

    assistant(text + tool_calls) -> tool(result) ... -> user(hint) -> assistant(...) -> ...

Each message carries its sender's `name` (a tool message, its tool's), as OpenAI's `name` field
lets a model tell speakers apart. `OpenAIMultiAgentFormatter` formats the same way, then folds
what the speakers said (user messages, assistant text outside tool calls) into `<history>` user
messages naming each speaker.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent_core._lazy import lazy_names
from agent_core.message import (
    Base64Source,
    DataBlock,
    HintBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)

if TYPE_CHECKING:
    from agent_core._gemini_formatter import GeminiChatFormatter, GeminiMultiAgentFormatter
    from agent_core._ollama_formatter import OllamaChatFormatter, OllamaMultiAgentFormatter

_TOOL_IMAGES_NOTE = "The following images were returned by the tool call {call_id} ({name})."
_TOOL_IMAGES_SENDER = "system-reminder"
# OpenAI rejects a `name` holding whitespace or any of <|\/>.
_NAME_FORBIDDEN = re.compile(r"[\s<|\\/>]")


def _name(name: str) -> dict[str, str]:
    """The `name` field for a sender, made acceptable to OpenAI (omitted when empty)."""
    cleaned = _NAME_FORBIDDEN.sub("_", name)
    return {"name": cleaned} if cleaned else {}


def _data_url(block: DataBlock) -> str:
    source = block.source
    if isinstance(source, Base64Source):
        return f"data:{source.media_type};base64,{source.data}"
    return source.url


def _is_image(block: DataBlock) -> bool:
    return block.source.media_type.startswith("image/")


def _placeholder(block: DataBlock) -> str:
    # Chat Completions has no part type for arbitrary files; tell the model something was there.
    label = block.name or (block.source.url if block.source.type == "url" else "inline data")
    return f"[attachment omitted: {label} ({block.source.media_type})]"


def _parts(blocks: list[Any]) -> str | list[dict[str, Any]]:
    """Return user-side content: a plain string when text-only, else content parts."""
    if all(isinstance(b, TextBlock) for b in blocks):
        return "\n".join(b.text for b in blocks)
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, DataBlock) and _is_image(block):
            parts.append({"type": "image_url", "image_url": {"url": _data_url(block)}})
        elif isinstance(block, DataBlock):
            parts.append({"type": "text", "text": _placeholder(block)})
    return parts


@dataclass(frozen=True)
class _Layout:
    """What a Chat Completions dialect wants besides the common shape."""

    names: bool = True
    """Send each speaker's `name` (tool messages always name their tool)."""
    reasoning_content: bool = False
    """Send an assistant message's thinking back as `reasoning_content` ("" when none)."""


class _Step:
    """One assistant message plus the tool results (and deferred hints) that follow it."""

    def __init__(self, sender: str, layout: _Layout) -> None:
        self.sender = sender
        self.layout = layout
        self.thinking: list[str] = []
        self.texts: list[str] = []
        self.calls: list[ToolCallBlock] = []
        self.results: list[ToolResultBlock] = []
        self.hints: list[HintBlock] = []

    def is_empty(self) -> bool:
        return not (self.texts or self.calls or self.results or self.hints)

    def all_answered(self) -> bool:
        answered = {r.id for r in self.results}
        return all(c.id in answered for c in self.calls)

    def emit(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self.texts or self.calls:
            message: dict[str, Any] = {
                "role": "assistant",
                **(_name(self.sender) if self.layout.names else {}),
                "content": "\n".join(self.texts) if self.texts else None,
            }
            if self.layout.reasoning_content:
                message["reasoning_content"] = "\n".join(self.thinking)
            if self.calls:
                message["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.input or "{}"},
                    }
                    for call in self.calls
                ]
            out.append(message)
        images: list[dict[str, Any]] = []
        for result in self.results:
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": result.id,
                    **_name(result.name),
                    "content": _tool_text(result),
                }
            )
            images.extend(_tool_images(result))
        # Tool messages carry text only, so returned images follow as one user message.
        if images:
            out.append({"role": "user", "name": _TOOL_IMAGES_SENDER, "content": images})
        out.extend({"role": "user", "content": _parts(_hint_blocks(h))} for h in self.hints)
        return out


def _tool_text(result: ToolResultBlock) -> str:
    if isinstance(result.output, str):
        return result.output
    pieces = []
    for block in result.output:
        if isinstance(block, TextBlock):
            pieces.append(block.text)
        elif _is_image(block):
            pieces.append("[image returned; shown in the next user message]")
        else:
            pieces.append(_placeholder(block))
    return "\n".join(pieces)


def _tool_images(result: ToolResultBlock) -> list[dict[str, Any]]:
    if isinstance(result.output, str):
        return []
    images = [b for b in result.output if isinstance(b, DataBlock) and _is_image(b)]
    if not images:
        return []
    note = _TOOL_IMAGES_NOTE.format(call_id=result.id, name=result.name)
    return [
        {"type": "text", "text": note},
        *({"type": "image_url", "image_url": {"url": _data_url(b)}} for b in images),
    ]


def _hint_blocks(hint: HintBlock) -> list[Any]:
    return [TextBlock(text=hint.hint)] if isinstance(hint.hint, str) else list(hint.hint)


class FormatterBase(ABC):
    """Turns a conversation of `Msg`s into the message list a provider's API expects.

    Subclass it for a provider whose payload follows neither the OpenAI nor another shipped
    shape, and pass an instance as a chat model's `formatter`.
    """

    @abstractmethod
    async def format(self, msgs: list[Msg]) -> list[dict[str, Any]]:
        """Return `msgs` as the provider's JSON-ready message dicts.

        Args:
            msgs: The conversation, system prompt first.
        """


class OpenAIChatFormatter(FormatterBase):
    """Formats a conversation as the `messages` of an OpenAI Chat Completions request.

    Thinking blocks are dropped unless `reasoning_content` asks for them back. Images become
    `image_url` parts (base64 as `data:` URLs); other binary data becomes a short text
    placeholder.

    Args:
        names: Send each speaker's `name` (DeepSeek and DashScope take none).
        reasoning_content: Send an assistant message's thinking back as `reasoning_content`, as
            DeepSeek's and Moonshot's thinking models want within a tool-using turn.
    """

    def __init__(self, *, names: bool = True, reasoning_content: bool = False) -> None:
        self._layout = _Layout(names=names, reasoning_content=reasoning_content)

    async def format(self, msgs: list[Msg]) -> list[dict[str, Any]]:
        """Return `msgs` as Chat Completions messages, preserving the order of every block.

        Args:
            msgs: The conversation, system prompt first.

        Returns:
            JSON-ready message dicts.
        """
        return [message for msg in msgs for message in _format_msg(msg, self._layout)]


class OpenAIMultiAgentFormatter(FormatterBase):
    """Formats a conversation among several named speakers for OpenAI Chat Completions.

    Runs of consecutive conversation messages (user messages, and assistant text outside tool
    calls, from any agent) are folded into one user message that names each speaker::

        <history>
        alice: What time is it?
        bob: Let me check.
        </history>

    Tool call / result sequences keep their native shape (assistant `tool_calls`, `tool`
    messages), and so do system messages and hints; each of them ends the current run.
    Otherwise the blocks are formatted as `OpenAIChatFormatter` formats them.
    """

    async def format(self, msgs: list[Msg]) -> list[dict[str, Any]]:
        """Return `msgs` as Chat Completions messages, speakers' turns folded into histories.

        Args:
            msgs: The conversation, system prompt first.

        Returns:
            JSON-ready message dicts.
        """
        out: list[dict[str, Any]] = []
        run: list[tuple[str, str | list[dict[str, Any]]]] = []
        for msg in msgs:
            for message in _format_msg(msg):
                if _is_turn(msg, message):
                    run.append((msg.name, message["content"]))
                    continue
                if run:
                    out.append(_history(run))
                    run = []
                out.append(message)
        if run:
            out.append(_history(run))
        return out


def _is_turn(msg: Msg, message: dict[str, Any]) -> bool:
    """Whether `message`, formatted from `msg`, is something its sender said."""
    if message["role"] == "assistant":
        return "tool_calls" not in message
    # User-role messages formatted from an assistant Msg are hints or tool images, not speech.
    return message["role"] == "user" and msg.role == "user"


def _history(run: list[tuple[str, str | list[dict[str, Any]]]]) -> dict[str, Any]:
    """One user message holding the (speaker, content) `run`, each turn led by its speaker."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": "<history>"}]
    for name, content in run:
        pieces = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if pieces[0]["type"] == "text":
            pieces = [{"type": "text", "text": f"{name}: {pieces[0]['text']}"}, *pieces[1:]]
        else:
            pieces = [{"type": "text", "text": f"{name}:"}, *pieces]
        parts.extend(pieces)
    parts.append({"type": "text", "text": "</history>"})
    merged: list[dict[str, Any]] = []
    for part in parts:
        if part["type"] == "text" and merged and merged[-1]["type"] == "text":
            merged[-1] = {"type": "text", "text": f"{merged[-1]['text']}\n{part['text']}"}
        else:
            merged.append(part)
    if len(merged) == 1:
        return {"role": "user", "content": merged[0]["text"]}
    return {"role": "user", "content": merged}


def _format_msg(msg: Msg, layout: _Layout = _Layout()) -> list[dict[str, Any]]:
    """Return one `Msg` as Chat Completions messages (an assistant reply may give several)."""
    name = _name(msg.name) if layout.names else {}
    if msg.role == "system":
        text = "\n".join(b.text for b in msg.content if isinstance(b, TextBlock))
        return [{"role": "system", **name, "content": text}]
    if msg.role == "user":
        blocks = [b for b in msg.content if isinstance(b, TextBlock | DataBlock)]
        return [{"role": "user", **name, "content": _parts(blocks)}] if blocks else []
    return _assistant(msg, layout)


def _assistant(msg: Msg, layout: _Layout) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    step = _Step(msg.name, layout)

    def next_step() -> _Step:
        out.extend(step.emit())
        return _Step(msg.name, layout)

    for block in msg.content:
        output = TextBlock | DataBlock | ToolCallBlock | ThinkingBlock
        if isinstance(block, output) and step.results:
            # Output after tool results belongs to the next reasoning step.
            step = next_step()
        if isinstance(block, ThinkingBlock):
            if block.thinking:
                step.thinking.append(block.thinking)
        elif isinstance(block, TextBlock):
            step.texts.append(block.text)
        elif isinstance(block, DataBlock):
            step.texts.append(_placeholder(block))
        elif isinstance(block, ToolCallBlock):
            step.calls.append(block)
        elif isinstance(block, ToolResultBlock):
            step.results.append(block)
        elif isinstance(block, HintBlock):
            # A hint may not sit between tool calls and their results: defer it until the
            # step's calls are all answered.
            step.hints.append(block)
            if step.all_answered():
                step = next_step()
    if not step.is_empty():
        out.extend(step.emit())
    return out


# Provider formatters built on the layout above. They subclass FormatterBase, so they load on
# first use: whichever module is imported first, neither sees the other half-initialised.
_PROVIDER_FORMATTERS = {
    "GeminiChatFormatter": "agent_core._gemini_formatter",
    "GeminiMultiAgentFormatter": "agent_core._gemini_formatter",
    "OllamaChatFormatter": "agent_core._ollama_formatter",
    "OllamaMultiAgentFormatter": "agent_core._ollama_formatter",
}


__getattr__ = lazy_names(__name__, _PROVIDER_FORMATTERS)


__all__ = [
    "FormatterBase",
    "GeminiChatFormatter",
    "GeminiMultiAgentFormatter",
    "OllamaChatFormatter",
    "OllamaMultiAgentFormatter",
    "OpenAIChatFormatter",
    "OpenAIMultiAgentFormatter",
]
