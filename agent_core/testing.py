"""Test doubles that are real implementations: a chat model that replays a script.

`ScriptedChatModel` is used by tests, benchmarks and the offline demo. It streams each scripted
response as real `ChatResponse` deltas (text split into pieces, tool-call arguments split into
fragments), so the agent loop runs exactly as it does against a provider.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_core._ids import new_id, now_iso
from agent_core._trusted import trusted
from agent_core.errors import ModelResponseError
from agent_core.message import Msg, TextBlock, ToolCallBlock
from agent_core.model._response import ChatResponse, ChatUsage
from agent_core.model.base import ChatModelBase, ToolChoice, ToolSchema


@dataclass
class ScriptedToolCall:
    """A tool call the scripted model will make."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=lambda: f"call_{new_id()[:8]}")


@dataclass
class ScriptedResponse:
    """One model answer: optional text, then optional tool calls; or an error to raise."""

    text: str = ""
    tool_calls: list[ScriptedToolCall] = field(default_factory=list)
    error: Exception | None = None
    delay: float = 0.0


ScriptStep = ScriptedResponse | str | Callable[[list[Msg]], ScriptedResponse]


class _Seen:
    """What one call was shown, kept cheaply: messages plus how far the open reply had got.

    Finished messages never change; the reply in progress only grows, so remembering its
    length is enough to rebuild what the model saw, on demand.
    """

    def __init__(self, messages: list[Msg]) -> None:
        self._messages = list(messages)
        self._lengths = {
            index: len(msg.content)
            for index, msg in enumerate(messages)
            if msg.finished_at is None and msg.role == "assistant"
        }

    def view(self) -> list[Msg]:
        return [
            msg.model_copy(update={"content": msg.content[: self._lengths[index]]})
            if index in self._lengths
            else msg
            for index, msg in enumerate(self._messages)
        ]


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or []


class ScriptedChatModel(ChatModelBase):
    """A chat model that replays `script`, one step per call.

    A step is a `ScriptedResponse`, a plain string (a text answer) or a function of the
    conversation returning a `ScriptedResponse`. When the script runs out, `default` answers
    (a string), or `ModelResponseError` is raised when `default` is None. It never retries
    (`max_retries=0`): every call consumes exactly one step.
    """

    type = "scripted"

    def __init__(
        self,
        script: Sequence[ScriptStep] = (),
        default: str | None = None,
        model: str = "scripted",
        chunk_size: int = 8,
        context_size: int = 128_000,
        stream: bool = True,
    ) -> None:
        super().__init__(
            credential=None, model=model, stream=stream, max_retries=0, context_size=context_size
        )
        self._script: list[ScriptStep] = list(script)
        self._default = default
        self._chunk_size = chunk_size
        self._seen: list[_Seen] = []
        self.tool_schemas: list[list[ToolSchema]] = []

    @property
    def calls(self) -> list[list[Msg]]:
        """The messages each call was given, oldest call first."""
        return [seen.view() for seen in self._seen]

    def push(self, *steps: ScriptStep) -> None:
        """Append steps to the script."""
        self._script.extend(steps)

    def _next(self, messages: list[Msg]) -> ScriptedResponse:
        if self._script:
            step = self._script.pop(0)
        elif self._default is not None:
            step = self._default
        else:
            raise ModelResponseError("the scripted model's script is exhausted")
        if isinstance(step, str):
            return ScriptedResponse(text=step)
        if isinstance(step, ScriptedResponse):
            return step
        return step(messages)

    async def _call_api(
        self,
        model_name: str,
        messages: list[Msg],
        tools: list[dict[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> ChatResponse | AsyncGenerator[ChatResponse, None]:
        """Answer with the next scripted response: deltas when streaming, else whole."""
        self._seen.append(_Seen(messages))
        self.tool_schemas.append(
            [
                ToolSchema(
                    name=tool["function"]["name"],
                    description=tool["function"].get("description", ""),
                    parameters=tool["function"].get("parameters", {}),
                )
                for tool in tools or []
            ]
        )
        response = self._next(messages)
        if response.delay:
            await asyncio.sleep(response.delay)
        if response.error is not None:
            raise response.error
        calls = response.tool_calls if tool_choice is None or tool_choice.mode != "none" else []
        # A rough count: this model stands in for a provider, it is not a tokenizer.
        usage = ChatUsage(
            input_tokens=sum(len(m.content) for m in messages) * 8,
            output_tokens=len(response.text) // 4,
        )
        if not self.stream:
            content: list[TextBlock | ToolCallBlock] = [TextBlock(text=response.text)]
            content = content if response.text else []
            content += [
                ToolCallBlock(id=call.id, name=call.name, input=json.dumps(call.arguments))
                for call in calls
            ]
            return ChatResponse(content=content, usage=usage)
        return self._deltas(response.text, calls, usage)

    async def _deltas(
        self, text: str, calls: list[ScriptedToolCall], usage: ChatUsage
    ) -> AsyncGenerator[ChatResponse, None]:
        # Built as a provider's parser would, from values already typed: without validation.
        # As with providers, every delta of one answer carries the answer's id and time.
        text_id, response_id, created_at = new_id(), new_id(), now_iso()
        for piece in _pieces(text, self._chunk_size):
            chunk = trusted(TextBlock, id=text_id, text=piece, created_at=created_at)
            yield trusted(
                ChatResponse, content=[chunk], is_last=False, id=response_id, created_at=created_at
            )
        for call in calls:
            for piece in _pieces(json.dumps(call.arguments), self._chunk_size):
                block = trusted(
                    ToolCallBlock, id=call.id, name=call.name, input=piece, created_at=created_at
                )
                yield trusted(
                    ChatResponse,
                    content=[block],
                    is_last=False,
                    id=response_id,
                    created_at=created_at,
                )
        yield trusted(
            ChatResponse,
            content=[],
            is_last=False,
            usage=usage,
            id=response_id,
            created_at=created_at,
        )
