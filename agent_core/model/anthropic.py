"""`AnthropicChatModel`: Claude over Anthropic's Messages API (SSE), and its formatters.

Thinking is adaptive (`thinking: {"type": "adaptive"}`: the model decides when and how much) or
budgeted (`{"type": "enabled", "budget_tokens": n}`), its `display` summarized or omitted; the
effort spent on the whole answer is `output_config.effort`. Thinking blocks come back with their
`signature` (redacted ones with their encrypted data) and are sent back as they came, as
extended thinking with tool use requires. Prompt caching marks the system prompt, the tools and
the latest message with `cache_control`; the usage then reports cache writes
(`cache_creation_input_tokens`) and reads (`cache_read_input_tokens`).
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any, Literal

from pydantic import ConfigDict, Field

from agent_core._ids import new_id
from agent_core.formatter import FormatterBase
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
from agent_core.model._http import BodyArgs, HTTPChatModel, ResponseDecoder
from agent_core.model._knobs import ParallelToolCalls, TopK, TopP, thinking
from agent_core.model._response import ChatUsage, ResponseBlock
from agent_core.model.base import ChatModelBase, ToolChoice

ANTHROPIC_VERSION = "2023-06-01"
_CACHE = {"type": "ephemeral"}


def _media(block: DataBlock) -> dict[str, Any] | None:
    """An image/document content block for `block`, or None when Anthropic takes no such data."""
    source = block.source
    kind = source.media_type
    part = "image" if kind.startswith("image/") else "document" if kind == "application/pdf" else ""
    if not part:
        return None
    if isinstance(source, Base64Source):
        return {"type": part, "source": {"type": "base64", "media_type": kind, "data": source.data}}
    return {"type": part, "source": {"type": "url", "url": source.url}}


def _user_parts(blocks: list[Any]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            if block.text:
                parts.append({"type": "text", "text": block.text})
        elif isinstance(block, DataBlock):
            media = _media(block)
            label = block.name or block.source.media_type
            parts.append(media or {"type": "text", "text": f"[attachment omitted: {label}]"})
    return parts


def _thinking(block: ThinkingBlock) -> dict[str, Any] | None:
    if block.redacted_thinking_data is not None:
        return {"type": "redacted_thinking", "data": block.redacted_thinking_data}
    # Unsigned thinking (another provider's, or cut off) cannot be sent back.
    if block.signature is None:
        return None
    return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}


def _tool_use(block: ToolCallBlock) -> dict[str, Any]:
    try:
        arguments = json.loads(block.input or "{}")
    except ValueError:
        arguments = {"raw_input": block.input}
    if not isinstance(arguments, dict):
        arguments = {"value": arguments}
    return {"type": "tool_use", "id": block.id, "name": block.name, "input": arguments}


def _tool_result(block: ToolResultBlock) -> dict[str, Any]:
    output = block.output
    content: str | list[dict[str, Any]] = (
        output if isinstance(output, str) else _user_parts(list(output))
    )
    return {"type": "tool_result", "tool_use_id": block.id, "content": content}


def _format_msg(msg: Msg) -> list[dict[str, Any]]:
    """One `Msg` as Messages API turns (system turns kept; the model lifts them out)."""
    if msg.role == "system":
        text = "\n".join(b.text for b in msg.content if isinstance(b, TextBlock))
        return [{"role": "system", "content": text}]
    if msg.role == "user":
        parts = _user_parts([b for b in msg.content if isinstance(b, TextBlock | DataBlock)])
        return [{"role": "user", "content": parts}] if parts else []
    out: list[dict[str, Any]] = []
    for block in msg.content:
        role, part = "assistant", None
        if isinstance(block, ThinkingBlock):
            part = _thinking(block)
        elif isinstance(block, TextBlock) and block.text:
            part = {"type": "text", "text": block.text}
        elif isinstance(block, DataBlock):
            part = {
                "type": "text",
                "text": f"[attachment: {block.name or block.source.media_type}]",
            }
        elif isinstance(block, ToolCallBlock):
            part = _tool_use(block)
        elif isinstance(block, ToolResultBlock):
            role, part = "user", _tool_result(block)
        elif isinstance(block, HintBlock):
            hint = [TextBlock(text=block.hint)] if isinstance(block.hint, str) else list(block.hint)
            parts = _user_parts(hint)
            out.extend({"role": "user", "content": [p]} for p in parts)
            continue
        if part is not None:
            out.append({"role": role, "content": [part]})
    return out


def _merge(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Join consecutive turns of one role (the API wants them alternating).

    A hint that came between tool calls and their results moves after the results: every
    `tool_result` must come first in the user turn after its `tool_use`.
    """
    merged: list[dict[str, Any]] = []
    for turn in turns:
        if merged and merged[-1]["role"] == turn["role"] and turn["role"] != "system":
            merged[-1]["content"] = [*merged[-1]["content"], *turn["content"]]
        elif turn["role"] == "system":
            merged.append(dict(turn))
        else:
            merged.append({"role": turn["role"], "content": list(turn["content"])})
    for turn in merged:
        if turn["role"] == "user":
            results = [p for p in turn["content"] if p.get("type") == "tool_result"]
            others = [p for p in turn["content"] if p.get("type") != "tool_result"]
            turn["content"] = results + others
    return merged


class AnthropicChatFormatter(FormatterBase):
    """Formats a conversation as Messages API turns.

    Tool results become `tool_result` blocks of the next user turn, signed thinking is kept,
    images (and PDFs) become image (document) blocks; system messages are left as
    `{"role": "system"}` turns for the model to lift into `system`.
    """

    async def format(self, msgs: list[Msg]) -> list[dict[str, Any]]:
        """Return `msgs` as alternating user/assistant turns (system turns first).

        Args:
            msgs: The conversation, system prompt first.
        """
        return _merge([turn for msg in msgs for turn in _format_msg(msg)])


class AnthropicMultiAgentFormatter(FormatterBase):
    """Formats a conversation among several speakers: their turns fold into `<history>` text.

    User messages and assistant text (outside tool use) become one user turn per run, each
    line led by its speaker's name; tool use, results, thinking and system turns keep their
    native shape and end the run.
    """

    async def format(self, msgs: list[Msg]) -> list[dict[str, Any]]:
        """Return `msgs` as Messages API turns, speakers' turns folded into histories.

        Args:
            msgs: The conversation, system prompt first.
        """
        out: list[dict[str, Any]] = []
        run: list[dict[str, Any]] = []

        def close() -> None:
            if run:
                out.append({"role": "user", "content": _history(run)})
                run.clear()

        for msg in msgs:
            for turn in _format_msg(msg):
                part = turn["content"][0] if turn["role"] != "system" else None
                spoken = part is not None and (
                    (turn["role"] == "user" and msg.role == "user")
                    or (turn["role"] == "assistant" and part["type"] == "text")
                )
                if spoken:
                    run.extend({"name": msg.name, **p} for p in turn["content"])
                    continue
                close()
                out.append(turn)
        close()
        return _merge(out)


def _history(run: list[dict[str, Any]]) -> list[dict[str, Any]]:
    lines = ["<history>"]
    media: list[dict[str, Any]] = []
    for part in run:
        name = part.pop("name")
        if part["type"] == "text":
            lines.append(f"{name}: {part['text']}")
        else:
            lines.append(f"{name}: [attached below]")
            media.append(part)
    lines.append("</history>")
    return [{"type": "text", "text": "\n".join(lines)}, *media]


class _AnthropicDecoder(ResponseDecoder):
    """Decodes Messages API stream events (or a whole `message`) into blocks."""

    ending = "message_stop"

    def __init__(self) -> None:
        super().__init__()
        self._blocks: dict[int, tuple[str, str, str]] = {}  # index -> (kind, block id, name)
        self._usage: dict[str, Any] = {}
        self.stop_reason: str | None = None

    def feed(self, payload: Any) -> list[ResponseBlock]:
        if not isinstance(payload, dict):
            raise ValueError("event is not a JSON object")
        kind = payload.get("type")
        if kind == "error":
            raise ValueError(f"provider error: {json.dumps(payload.get('error'))[:500]}")
        if kind == "message_start":
            message = payload["message"]
            self.response_id = message.get("id") or self.response_id
            self._usage.update(message.get("usage") or {})
        elif kind == "content_block_start":
            return self._start(int(payload["index"]), payload["content_block"])
        elif kind == "content_block_delta":
            return self._delta(int(payload["index"]), payload["delta"])
        elif kind == "message_delta":
            self.stop_reason = (payload.get("delta") or {}).get("stop_reason") or self.stop_reason
            self._usage.update({k: v for k, v in (payload.get("usage") or {}).items() if v})
        elif kind == "message_stop":
            self.complete = True
        return []

    def whole(self, payload: Any) -> list[ResponseBlock]:
        if not isinstance(payload, dict) or not isinstance(payload.get("content"), list):
            raise ValueError("answer is not a message with content")
        self.response_id = payload.get("id") or self.response_id
        self._usage.update(payload.get("usage") or {})
        self.stop_reason = payload.get("stop_reason")
        out: list[ResponseBlock] = []
        for index, block in enumerate(payload["content"]):
            if block.get("type") == "tool_use":
                # Whole answers carry the parsed input (streams send it as JSON fragments).
                arguments = json.dumps(block.get("input") or {})
                out.append(ToolCallBlock(id=block["id"], name=block["name"], input=arguments))
            else:
                out += self._start(index, block)
        self.complete = True
        return out

    def _start(self, index: int, block: dict[str, Any]) -> list[ResponseBlock]:
        kind = block["type"]
        if kind == "tool_use":
            self._blocks[index] = ("tool_use", block["id"], block["name"])
            given = block.get("input")
            # A server may send the input whole in the start event.
            text = json.dumps(given) if given else ""
            return [ToolCallBlock(id=block["id"], name=block["name"], input=text)]
        block_id = new_id()
        self._blocks[index] = (kind, block_id, "")
        if kind == "text":
            return [TextBlock(id=block_id, text=block.get("text", ""))]
        if kind == "thinking":
            return [
                ThinkingBlock(
                    id=block_id,
                    thinking=block.get("thinking", ""),
                    signature=block.get("signature") or None,
                )
            ]
        if kind == "redacted_thinking":
            return [ThinkingBlock(id=block_id, thinking="", redacted_thinking_data=block["data"])]
        return []  # server tool blocks and the like carry nothing for the agent

    def _delta(self, index: int, delta: dict[str, Any]) -> list[ResponseBlock]:
        kind, block_id, name = self._blocks[index]
        match delta["type"]:
            case "text_delta":
                return [TextBlock(id=block_id, text=delta["text"])]
            case "thinking_delta":
                return [ThinkingBlock(id=block_id, thinking=delta["thinking"])]
            case "signature_delta":
                return [ThinkingBlock(id=block_id, thinking="", signature=delta["signature"])]
            case "input_json_delta" if kind == "tool_use":
                return [ToolCallBlock(id=block_id, name=name, input=delta["partial_json"])]
        return []

    def usage(self, seconds: float) -> ChatUsage | None:
        if not self._usage:
            return None
        raw = self._usage
        written = int(raw.get("cache_creation_input_tokens") or 0)
        read = int(raw.get("cache_read_input_tokens") or 0)
        return ChatUsage(
            # Anthropic's input_tokens leave the cached ones out; ours count every prompt token.
            input_tokens=int(raw.get("input_tokens") or 0) + written + read,
            output_tokens=int(raw.get("output_tokens") or 0),
            cache_input_tokens=read,
            cache_creation_input_tokens=written,
            time=seconds,
            metadata={"stop_reason": self.stop_reason} if self.stop_reason else None,
        )


class AnthropicChatModel(HTTPChatModel):
    """A Claude model over Anthropic's Messages API.

    Args:
        credential: API key and base URL (an `AnthropicCredential`).
        model: Model name, e.g. "claude-sonnet-4-5".
        parameters: Request parameters: a `Parameters`, or a dict validated into one.
        stream: Stream the answer over SSE (see `ChatModelBase.__call__`).
        max_retries: Retries of a request failing with 408/409/429/5xx/529 or a network error.
        retry_delay: Seconds before the first retry (doubling; `retry-after` wins).
        context_size: The model's context window in tokens.
        formatter: `AnthropicChatFormatter` by default; `AnthropicMultiAgentFormatter` for
            conversations among several agents.
        timeout: Seconds allowed for connecting and between received bytes.
        client: An httpx client to use (and not close); a private one is created otherwise.
    """

    class Parameters(ChatModelBase.Parameters):
        """Messages API request parameters."""

        model_config = ConfigDict(extra="forbid")

        max_tokens: int = Field(
            default=8192, gt=0, description="Most tokens to generate (thinking included)."
        )
        temperature: float | None = Field(
            default=None, ge=0, le=1, description="Sampling temperature; higher is more random."
        )
        top_p: TopP = None
        top_k: TopK = None
        stop_sequences: list[str] | None = Field(
            default=None, description="Sequences that end the answer."
        )
        thinking_enable: bool = thinking(
            "Extended thinking before answering, within `thinking_budget` "
            "(`thinking_mode`, when set, wins)."
        )
        thinking_budget: int = Field(
            default=4096,
            ge=1024,
            description="Most tokens spent thinking in the `enabled` mode (below max_tokens).",
        )
        thinking_mode: Literal["adaptive", "enabled", "disabled"] | None = Field(
            default=None,
            description="How Claude thinks: `adaptive` (it decides when and how much; the only "
            "mode of Claude Opus 4.7 and later), `enabled` (within `thinking_budget`) or "
            "`disabled`. Unset: `thinking_enable` decides between `enabled` and not sending it.",
        )
        thinking_display: Literal["summarized", "omitted"] | None = Field(
            default=None,
            description="Whether thinking blocks carry summarized thinking or come back empty "
            "(only their signature); unset, the model's default (`omitted` from Opus 4.7).",
        )
        reasoning_effort: Literal["low", "medium", "high", "xhigh", "max"] | None = Field(
            default=None,
            description="Tokens Claude may spend on the whole answer (thinking, tool calls and "
            "text), sent as `output_config.effort`; unset, the API's `high`. Levels vary by "
            "model; Claude Sonnet 4.5 and Haiku 4.5 take none.",
        )
        prompt_caching: bool = Field(
            default=True,
            description="Cache the system prompt, tools and conversation prefix between calls.",
        )
        parallel_tool_calls: ParallelToolCalls = None

    type = "anthropic_chat"
    path = "/messages"
    decoder = _AnthropicDecoder
    default_context_size = 200_000
    cards_dir = files("agent_core.model") / "_cards" / "anthropic"

    def _default_formatter(self) -> FormatterBase:
        return AnthropicChatFormatter()

    def _auth_headers(self) -> dict[str, str]:
        return {
            "x-api-key": self.credential.secret("api_key") or "",
            "anthropic-version": ANTHROPIC_VERSION,
        }

    def _thinking_mode(self) -> str | None:
        """The `thinking.type` sent: `thinking_mode`, else `enabled` if `thinking_enable`."""
        p = self.parameters
        assert isinstance(p, AnthropicChatModel.Parameters)
        return p.thinking_mode or ("enabled" if p.thinking_enable else None)

    def _forces_tool_calls(self) -> bool:
        # Thinking (adaptive or budgeted) allows only an `auto` or `none` tool choice.
        return self._thinking_mode() in (None, "disabled")

    async def _body(self, call: BodyArgs) -> dict[str, Any]:
        p = self.parameters
        assert isinstance(p, AnthropicChatModel.Parameters)
        turns = await self.formatter.format(call.messages)
        system = [t for t in turns if t["role"] == "system"]
        body: dict[str, Any] = {
            "model": call.model_name,
            "max_tokens": p.max_tokens,
            "messages": [t for t in turns if t["role"] != "system"],
            "stream": self.stream,
        }
        if system:
            body["system"] = [{"type": "text", "text": t["content"]} for t in system]
        for name in ("temperature", "top_p", "top_k", "stop_sequences"):
            if (value := getattr(p, name)) is not None:
                body[name] = value
        if mode := self._thinking_mode():
            thinking: dict[str, Any] = {"type": mode}
            if mode == "enabled":
                thinking["budget_tokens"] = p.thinking_budget
            if mode != "disabled" and p.thinking_display:
                thinking["display"] = p.thinking_display
            body["thinking"] = thinking
        if p.reasoning_effort:
            body["output_config"] = {"effort": p.reasoning_effort}
        if call.tools:
            body["tools"] = [
                {
                    "name": t["function"]["name"],
                    "description": t["function"].get("description", ""),
                    "input_schema": t["function"].get("parameters")
                    or {"type": "object", "properties": {}},
                }
                for t in call.tools
            ]
            choice = self._tool_choice(call.tool_choice, p.parallel_tool_calls)
            if choice:
                body["tool_choice"] = choice
        if p.prompt_caching:
            _mark_cache(body)
        body.update(call.extra)
        return body

    @staticmethod
    def _tool_choice(choice: ToolChoice | None, parallel: bool | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if choice is not None:
            mode = choice.mode
            kinds = {"auto": "auto", "none": "none", "required": "any"}
            out = {"type": kinds[mode]} if mode in kinds else {"type": "tool", "name": mode}
        if parallel is False:
            out = {"type": "auto", **out, "disable_parallel_tool_use": True}
        return out


def _mark_cache(body: dict[str, Any]) -> None:
    """Put cache breakpoints on the system prompt, the last tool and the latest message."""
    if body.get("system"):
        body["system"][-1]["cache_control"] = _CACHE
    if body.get("tools"):
        body["tools"][-1]["cache_control"] = _CACHE
    messages = body["messages"]
    if messages and messages[-1]["content"]:
        last = messages[-1]["content"][-1]
        if last.get("type") in ("text", "image", "document", "tool_result", "tool_use"):
            last["cache_control"] = _CACHE
