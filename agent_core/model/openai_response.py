"""`OpenAIResponseModel`: OpenAI's Responses API (`POST /responses`), streamed over SSE.

Requests are stateless (`store: false`, no `previous_response_id`): the whole conversation is
sent each time. Reasoning arrives as summary text (thinking blocks); its encrypted form is
asked for (`include: ["reasoning.encrypted_content"]`) and kept as the block's `signature`.
"""

from __future__ import annotations

import json
from importlib.resources.abc import Traversable
from typing import Any, ClassVar, Literal

from pydantic import AliasChoices, ConfigDict, Field

from agent_core._ids import new_id
from agent_core.formatter import FormatterBase, OpenAIChatFormatter, OpenAIMultiAgentFormatter
from agent_core.message import Msg, TextBlock, ThinkingBlock, ToolCallBlock
from agent_core.model._http import BodyArgs, ResponseDecoder
from agent_core.model._knobs import ParallelToolCalls, Temperature, TopP, thinking
from agent_core.model._response import ChatUsage, ResponseBlock
from agent_core.model.base import TOOL_CHOICE_MODES, ChatModelBase
from agent_core.model.openai import OpenAIChatModel


def _content(content: Any, role: str) -> str | list[dict[str, Any]]:
    if isinstance(content, str) or content is None:
        return content or ""
    kind = "output_text" if role == "assistant" else "input_text"
    parts: list[dict[str, Any]] = []
    for part in content:
        if part["type"] == "text":
            parts.append({"type": kind, "text": part["text"]})
        elif part["type"] == "image_url":
            parts.append({"type": "input_image", "image_url": part["image_url"]["url"]})
    return parts


def to_response_items(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return Chat Completions messages as Responses API input items."""
    items: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role == "tool":
            output = message["content"]
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message["tool_call_id"],
                    "output": output if isinstance(output, str) else json.dumps(output),
                }
            )
            continue
        if message.get("content"):
            items.append({"role": role, "content": _content(message["content"], role)})
        items.extend(
            {
                "type": "function_call",
                "call_id": call["id"],
                "name": call["function"]["name"],
                "arguments": call["function"]["arguments"],
            }
            for call in message.get("tool_calls") or []
        )
    return items


class OpenAIResponseFormatter(FormatterBase):
    """Formats a conversation as Responses API input items (messages, function calls/outputs)."""

    def __init__(self, chat: FormatterBase | None = None) -> None:
        self._chat = chat or OpenAIChatFormatter()

    async def format(self, msgs: list[Msg]) -> list[dict[str, Any]]:
        """Return `msgs` as input items.

        Args:
            msgs: The conversation, system prompt first.
        """
        return to_response_items(await self._chat.format(msgs))


class OpenAIResponseMultiAgentFormatter(OpenAIResponseFormatter):
    """As `OpenAIResponseFormatter`, speakers' turns folded into `<history>` messages."""

    def __init__(self) -> None:
        super().__init__(OpenAIMultiAgentFormatter())


class _ResponsesDecoder(ResponseDecoder):
    ending = "response.completed"

    def __init__(self) -> None:
        super().__init__()
        self._ids: dict[tuple[str, int], str] = {}
        self._calls: dict[str, tuple[str, str]] = {}  # item id -> (call id, name)
        self._usage: dict[str, Any] | None = None

    def _id(self, item_id: str, index: int) -> str:
        return self._ids.setdefault((item_id, index), new_id())

    def feed(self, payload: Any) -> list[ResponseBlock]:
        if not isinstance(payload, dict):
            raise ValueError("event is not a JSON object")
        kind = payload.get("type", "")
        if kind in ("error", "response.failed", "response.incomplete"):
            detail = payload.get("error") or (payload.get("response") or {}).get("error")
            reason = (payload.get("response") or {}).get("incomplete_details")
            raise ValueError(f"provider error: {json.dumps(detail or reason)[:500]}")
        if kind == "response.created":
            self.response_id = payload["response"].get("id") or self.response_id
        elif kind == "response.output_item.added":
            return self._item_start(payload["item"])
        elif kind == "response.output_text.delta":
            key = self._id(payload["item_id"], payload.get("content_index", 0))
            return [TextBlock(id=key, text=payload["delta"])]
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            index = int(payload.get("summary_index") or payload.get("content_index") or 0)
            key = self._id(payload["item_id"], -1 - index)
            return [ThinkingBlock(id=key, thinking=payload["delta"])]
        elif kind == "response.function_call_arguments.delta":
            call_id, name = self._calls[payload["item_id"]]
            return [ToolCallBlock(id=call_id, name=name, input=payload["delta"])]
        elif kind == "response.output_item.done":
            return self._item_done(payload["item"])
        elif kind == "response.completed":
            self._usage = payload["response"].get("usage")
            self.complete = True
        return []

    def _item_start(self, item: dict[str, Any]) -> list[ResponseBlock]:
        if item.get("type") != "function_call":
            return []
        self._calls[item["id"]] = (item["call_id"], item["name"])
        return [
            ToolCallBlock(id=item["call_id"], name=item["name"], input=item.get("arguments") or "")
        ]

    def _item_done(self, item: dict[str, Any]) -> list[ResponseBlock]:
        if item.get("type") == "reasoning" and item.get("encrypted_content"):
            key = self._id(item["id"], -1)
            return [ThinkingBlock(id=key, thinking="", signature=item["encrypted_content"])]
        return []

    def whole(self, payload: Any) -> list[ResponseBlock]:
        if not isinstance(payload, dict) or not isinstance(payload.get("output"), list):
            raise ValueError("answer is not a response with output")
        if payload.get("error"):
            raise ValueError(f"provider error: {json.dumps(payload['error'])[:500]}")
        self.response_id = payload.get("id") or self.response_id
        self._usage = payload.get("usage")
        out: list[ResponseBlock] = []
        for item in payload["output"]:
            kind = item.get("type")
            if kind == "message":
                for index, part in enumerate(item.get("content") or []):
                    text = part.get("text") or part.get("refusal") or ""
                    if text:
                        out.append(TextBlock(id=self._id(item["id"], index), text=text))
            elif kind == "reasoning":
                parts = item.get("summary") or item.get("content") or []
                for index, part in enumerate(parts):
                    key = self._id(item["id"], -1 - index)
                    out.append(ThinkingBlock(id=key, thinking=part.get("text", "")))
                if item.get("encrypted_content"):
                    out.extend(self._item_done(item))
            elif kind == "function_call":
                out.append(
                    ToolCallBlock(
                        id=item["call_id"], name=item["name"], input=item.get("arguments") or ""
                    )
                )
        self.complete = True
        return out

    def usage(self, seconds: float) -> ChatUsage | None:
        if not self._usage:
            return None
        raw = self._usage
        reasoning = (raw.get("output_tokens_details") or {}).get("reasoning_tokens")
        return ChatUsage(
            input_tokens=int(raw.get("input_tokens") or 0),
            output_tokens=int(raw.get("output_tokens") or 0),
            cache_input_tokens=int(
                (raw.get("input_tokens_details") or {}).get("cached_tokens") or 0
            ),
            time=seconds,
            metadata={"reasoning_tokens": int(reasoning)} if reasoning else None,
        )


class OpenAIResponseModel(OpenAIChatModel):
    """An OpenAI model over the Responses API (constructor as `OpenAIChatModel`'s).

    The default formatter is `OpenAIResponseFormatter`; `OpenAIResponseMultiAgentFormatter`
    suits conversations among several agents.
    """

    class Parameters(ChatModelBase.Parameters):
        """Responses API request parameters; unknown ones pass through as request fields."""

        model_config = ConfigDict(extra="allow")

        temperature: Temperature = None
        top_p: TopP = None
        max_output_tokens: int | None = Field(
            default=None,
            gt=0,
            # The spec's shared name: the Responses API has no `max_tokens` field to pass it to.
            validation_alias=AliasChoices("max_output_tokens", "max_tokens"),
            description="Most tokens to generate, reasoning included.",
        )
        parallel_tool_calls: ParallelToolCalls = None
        thinking_enable: bool = thinking("Reason at `reasoning_effort` first.")
        reasoning_effort: Literal["none", "minimal", "low", "medium", "high", "xhigh"] | None = (
            Field(default=None, description="How hard the model reasons (with thinking enabled).")
        )
        reasoning_summary: Literal["auto", "concise", "detailed"] = Field(
            default="auto", description="How much of the reasoning to summarise back."
        )

    type = "openai_response"
    path = "/responses"
    decoder = _ResponsesDecoder
    # The Chat Completions cards tune `OpenAIChatModel.Parameters`; this class ships none.
    cards_dir: ClassVar[Traversable | None] = None

    def _default_formatter(self) -> FormatterBase:
        return OpenAIResponseFormatter()

    async def _body(self, call: BodyArgs) -> dict[str, Any]:
        fields = self.parameters.model_dump(exclude_none=True)
        parallel = fields.pop("parallel_tool_calls", None)
        thinking = fields.pop("thinking_enable")
        effort = fields.pop("reasoning_effort", None)
        summary = fields.pop("reasoning_summary")
        body: dict[str, Any] = {
            **fields,
            "model": call.model_name,
            "input": await self.formatter.format(call.messages),
            "stream": self.stream,
            "store": False,
        }
        if thinking:
            body["reasoning"] = {"summary": summary, **({"effort": effort} if effort else {})}
            body["include"] = ["reasoning.encrypted_content"]
        if call.tools:
            body["tools"] = [
                {"type": "function", **{k: v for k, v in t["function"].items() if k != "strict"}}
                for t in call.tools
            ]
            if parallel is not None:
                body["parallel_tool_calls"] = parallel
            if call.tool_choice is not None:
                mode = call.tool_choice.mode
                body["tool_choice"] = (
                    mode if mode in TOOL_CHOICE_MODES else {"type": "function", "name": mode}
                )
        body.update(call.extra)
        return body
