"""Helpers for the AgentScope side of the side-by-side benchmarks.

AgentScope is never a project dependency: it is installed only in the bench environment (see
bench/README.md) and imported only by the bench scripts, through this module.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentscope.credential import CredentialBase
from agentscope.formatter import OpenAIChatFormatter
from agentscope.message import TextBlock, ToolCallBlock
from agentscope.model import ChatModelBase, ChatResponse, ChatUsage
from pydantic import BaseModel


@dataclass
class Step:
    """One scripted model answer: text, then at most one tool call (name, JSON arguments)."""

    text: str = ""
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class _NoCredential(CredentialBase):
    """The scripted model talks to nothing, so its credential carries nothing."""


class ScriptedAgentScopeModel(ChatModelBase):
    """AgentScope's `ChatModelBase` replaying a script, streamed like a provider does.

    It yields the same chunks as Troupe's `ScriptedChatModel` (text in `chunk_size` pieces, then
    the tool call's JSON arguments in `chunk_size` fragments, then a usage-only chunk) as
    incremental `ChatResponse` deltas; the base class's `__call__` accumulates them and emits
    the final `is_last` response, exactly as with AgentScope's own OpenAI model.
    """

    class Parameters(BaseModel):
        """No parameters: nothing is sent anywhere."""

    def __init__(self, script: Sequence[Step] = (), chunk_size: int = 8) -> None:
        super().__init__(
            credential=_NoCredential(),
            model="scripted",
            parameters=self.Parameters(),
            stream=True,
            max_retries=0,
        )
        # The agent reads the formatter's supported media types; the scripted model never formats
        # (neither does Troupe's), so the comparison is of the loops, not of provider encoding.
        self.formatter = OpenAIChatFormatter()
        self._script = list(script)
        self._chunk_size = chunk_size
        self._calls = 0

    def push(self, *steps: Step) -> None:
        """Append steps to the script."""
        self._script.extend(steps)

    async def _call_api(
        self,
        model_name: str,
        messages: list[Any],
        tools: list[dict[str, Any]] | None = None,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> AsyncGenerator[ChatResponse, None]:
        step = self._script.pop(0) if self._script else Step(text="done")
        self._calls += 1
        return self._stream(step, tool_choice)

    async def _stream(self, step: Step, tool_choice: Any) -> AsyncGenerator[ChatResponse, None]:
        response_id = f"resp-{self._calls}"
        text_id = f"text-{self._calls}"
        for piece in _pieces(step.text, self._chunk_size):
            yield ChatResponse(
                content=[TextBlock(id=text_id, text=piece)], is_last=False, id=response_id
            )
        forced_none = tool_choice is not None and getattr(tool_choice, "mode", None) == "none"
        if step.tool is not None and not forced_none:
            call_id = f"call-{self._calls}"
            for piece in _pieces(json.dumps(step.arguments), self._chunk_size) or [""]:
                yield ChatResponse(
                    content=[ToolCallBlock(id=call_id, name=step.tool, input=piece)],
                    is_last=False,
                    id=response_id,
                )
        usage = ChatUsage(input_tokens=10, output_tokens=len(step.text) // 4, time=0.0)
        yield ChatResponse(content=[], is_last=False, id=response_id, usage=usage)
