"""`OllamaChatModel`: models served by Ollama, over its native `/api/chat`.

Streamed answers are newline-delimited JSON: each line a `message` fragment (`content`,
`thinking`, whole `tool_calls`), the last one `done: true` with the token counts. Ollama has no
tool choice: "none" offers no tools, a tool name offers only that tool, "required" offers them
all. Structured output uses Ollama's native JSON-schema mode (`format`), since a tool call
cannot be forced.
"""

from __future__ import annotations

import json
import uuid
from importlib.resources import files
from typing import Any, Literal

import httpx
from pydantic import BaseModel, Field

from agent_core._ollama_formatter import OllamaChatFormatter
from agent_core.credential import OllamaCredential
from agent_core.formatter import FormatterBase
from agent_core.message import Msg, TextBlock, ThinkingBlock, ToolCallBlock
from agent_core.model._http import BodyArgs, HTTPChatModel, ResponseDecoder, present
from agent_core.model._knobs import Temperature, TopK, TopP, thinking
from agent_core.model._response import ChatUsage, ResponseBlock
from agent_core.model._structured import StructuredModel, StructuredResponse, json_structured_output
from agent_core.model.base import ChatModelBase, ToolChoice


class OllamaDecoder(ResponseDecoder):
    """Turns `/api/chat` lines (or a whole answer) into blocks; complete at `done: true`."""

    ending = "its done line"

    def __init__(self) -> None:
        super().__init__()
        self._done: dict[str, Any] | None = None

    def feed(self, payload: Any) -> list[ResponseBlock]:
        """Decode one line (or the whole answer): thinking, text, then whole tool calls."""
        if not isinstance(payload, dict):
            raise ValueError("line is not a JSON object")
        if payload.get("error") is not None:
            raise ValueError(f"provider error: {str(payload['error'])[:500]}")
        message = payload.get("message") or {}
        if not isinstance(message, dict):
            raise ValueError("`message` is not an object")
        out: list[ResponseBlock] = []
        if message.get("thinking"):
            out.append(
                ThinkingBlock(id=self._block_id("thinking"), thinking=str(message["thinking"]))
            )
        if message.get("content"):
            out.append(TextBlock(id=self._block_id("text"), text=str(message["content"])))
        out.extend(self._call(call) for call in message.get("tool_calls") or [])
        if payload.get("done"):
            self._done = payload
            self.complete = True
        return out

    def usage(self, seconds: float) -> ChatUsage | None:
        """The counts of the done line (durations and `done_reason` as metadata)."""
        if self._done is None or (
            "prompt_eval_count" not in self._done and "eval_count" not in self._done
        ):
            return None
        done = self._done
        details = {
            k: done[k]
            for k in (
                "done_reason",
                "total_duration",
                "load_duration",
                "prompt_eval_duration",
                "eval_duration",
            )
            if k in done
        }
        return ChatUsage(
            input_tokens=int(done.get("prompt_eval_count") or 0),
            output_tokens=int(done.get("eval_count") or 0),
            time=seconds,
            metadata=details or None,
        )

    def _call(self, call: Any) -> ToolCallBlock:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ValueError("a tool call needs a `function.name` string")
        arguments = function.get("arguments") or {}
        text = (
            arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        )
        self._last_kind = "tool_call"
        call_id = call.get("id") or f"call_{uuid.uuid4().hex[:24]}"
        return ToolCallBlock(id=str(call_id), name=function["name"], input=text)


class OllamaChatModel(HTTPChatModel):
    """A model served by an Ollama server (local, or one asking for a key such as ollama.com).

    Args:
        credential: Where the server listens (and its key, if it wants one); the local default
            server (http://localhost:11434) when None.
        model: Model name, e.g. "qwen3:8b".
        parameters: Request parameters: a `Parameters`, or a dict validated into one.
        stream: Stream the answer as NDJSON (see `ChatModelBase.__call__`).
        max_retries: Retries of a request failing with 408/409/429/5xx or a network error.
        retry_delay: Seconds before the first retry, doubling.
        context_size: The model's context window in tokens.
        formatter: Turns messages into `messages` (`OllamaChatFormatter` by default;
            `OllamaMultiAgentFormatter` for conversations among several agents).
        timeout: Seconds allowed for connecting and between received bytes (a local model
            may take long to load).
        client: An httpx client to use (and not close); a private one is created otherwise.
    """

    class Parameters(ChatModelBase.Parameters):
        """Ollama request knobs: `think`, `keep_alive`, and the model `options`."""

        max_tokens: int | None = Field(
            default=None, gt=0, description="Most tokens to generate (`num_predict`)."
        )
        thinking_enable: bool = thinking(
            "Let a thinking model (qwen3, deepseek-r1, gpt-oss, ...) think first."
        )
        thinking_level: Literal["low", "medium", "high"] | None = Field(
            default=None, description="How hard a model with levels (gpt-oss) thinks, if enabled."
        )
        temperature: Temperature = None
        top_p: TopP = None
        top_k: TopK = None
        min_p: float | None = Field(
            default=None,
            ge=0,
            le=1,
            description="Drop tokens less likely than this share of the top one.",
        )
        repeat_penalty: float | None = Field(
            default=None, ge=0, description="Penalty on repeated tokens (1 is none)."
        )
        seed: int | None = Field(default=None, description="Seed for reproducible sampling.")
        stop: list[str] | None = Field(default=None, description="Sequences that end the answer.")
        num_ctx: int | None = Field(
            default=None, gt=0, description="The context window the server loads the model with."
        )
        keep_alive: str | None = Field(
            default=None,
            description='How long the server keeps the model loaded after the call, e.g. "5m".',
        )

    type = "ollama_chat"
    path = "/api/chat"
    decoder = OllamaDecoder
    cards_dir = files("agent_core.model") / "_cards" / "ollama"
    framing = "ndjson"

    def __init__(
        self,
        credential: OllamaCredential | None = None,
        model: str = "",
        parameters: BaseModel | dict[str, Any] | None = None,
        stream: bool = True,
        max_retries: int = 3,
        retry_delay: float = 1.0,
        context_size: int = 32_768,
        formatter: FormatterBase | None = None,
        timeout: float = 300.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        if not model:
            raise ValueError("model must name an Ollama model, e.g. 'qwen3:8b'")
        credential = credential or OllamaCredential()
        super().__init__(
            credential,
            model,
            parameters,
            stream=stream,
            max_retries=max_retries,
            retry_delay=retry_delay,
            context_size=context_size,
            formatter=formatter,
            timeout=timeout,
            client=client,
        )
        self.credential: OllamaCredential = credential

    def _default_formatter(self) -> FormatterBase:
        return OllamaChatFormatter()

    def _base_url(self) -> str:
        return self.credential.base_url

    def _auth_headers(self) -> dict[str, str]:
        key = self.credential.secret("api_key")
        return {"Authorization": f"Bearer {key}"} if key else {}

    async def _body(self, call: BodyArgs) -> dict[str, Any]:
        assert isinstance(self.parameters, OllamaChatModel.Parameters)  # set by the base
        p = self.parameters
        body: dict[str, Any] = {
            "model": call.model_name,
            "messages": await self.formatter.format(call.messages),
            "stream": self.stream,
            "think": (p.thinking_level or True) if p.thinking_enable else False,
        }
        options = present(
            num_predict=p.max_tokens,
            temperature=p.temperature,
            top_p=p.top_p,
            top_k=p.top_k,
            min_p=p.min_p,
            repeat_penalty=p.repeat_penalty,
            seed=p.seed,
            stop=p.stop,
            num_ctx=p.num_ctx,
        )
        if options:
            body["options"] = options
        if p.keep_alive is not None:
            body["keep_alive"] = p.keep_alive
        offered = _offered(call.tools or [], call.tool_choice)
        if offered:
            body["tools"] = offered
        body.update(call.extra)
        return body

    async def generate_structured_output(
        self,
        messages: list[Msg],
        structured_model: StructuredModel,
        *,
        max_repairs: int = 1,
    ) -> StructuredResponse:
        """Answer `messages` with a JSON object matching `structured_model`.

        Uses Ollama's JSON-schema mode (`format`): the answer's text is the object. Invalid
        output gets a repair round telling the model what was wrong.

        Raises:
            StructuredOutputError: the output is still invalid after `max_repairs` repairs.
        """
        return await json_structured_output(
            self,
            messages,
            structured_model,
            lambda schema: {"format": schema},
            max_repairs=max_repairs,
        )


def _offered(tools: list[dict[str, Any]], tool_choice: ToolChoice | None) -> list[dict[str, Any]]:
    """The tools to send: Ollama cannot be told to call one, only offered fewer."""
    if tool_choice is None or tool_choice.mode in ("auto", "required"):
        return tools
    if tool_choice.mode == "none":
        return []
    return [tool for tool in tools if tool["function"]["name"] == tool_choice.mode]
