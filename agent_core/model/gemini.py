"""`GeminiChatModel`: Google Gemini models over the Gemini API's `generateContent`.

A whole answer comes from `POST {base_url}/models/{model}:generateContent`; a streamed one from
`:streamGenerateContent?alt=sse`, as Server-Sent Events each holding a partial
`GenerateContentResponse`. The key travels in the `x-goog-api-key` header.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from importlib.resources import files
from typing import Any, Literal

from pydantic import Field

from agent_core._gemini_formatter import GeminiChatFormatter
from agent_core.credential import GeminiCredential
from agent_core.errors import ModelHTTPError
from agent_core.formatter import FormatterBase
from agent_core.message import Msg
from agent_core.model._gemini_wire import GeminiDecoder, function_declarations, retry_delay
from agent_core.model._http import BodyArgs, HTTPChatModel, present
from agent_core.model._knobs import Seed, Temperature, TopK, TopP, thinking
from agent_core.model._response import ChatResponse
from agent_core.model.base import ChatModelBase, ToolChoice

_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY"}
_DEFAULT_THINKING_BUDGET = 1024


class GeminiChatModel(HTTPChatModel):
    """A Gemini model served by the Gemini API.

    Args:
        credential: API key and base URL.
        model: Model name, e.g. "gemini-2.5-flash".
        parameters: Request parameters: a `Parameters`, or a dict validated into one.
        stream: Stream the answer over SSE (see `ChatModelBase.__call__`).
        max_retries: Retries of a request failing with 408/409/429/5xx or a network error.
        retry_delay: Seconds before the first retry, doubling (a 429's `retryDelay` wins).
        context_size: The model's context window in tokens.
        formatter: Turns messages into `contents` (`GeminiChatFormatter` by default;
            `GeminiMultiAgentFormatter` for conversations among several agents). Contents with
            role `system` are sent as `systemInstruction`.
        timeout: Seconds allowed for connecting and between received bytes.
        client: An httpx client to use (and not close); a private one is created otherwise.
    """

    class Parameters(ChatModelBase.Parameters):
        """Gemini `generationConfig` knobs.

        With thinking disabled the model is asked not to think (`thinkingBudget` 0, or the
        `thinking_level` given for Gemini 3 models, which cannot stop thinking).
        """

        max_tokens: int | None = Field(
            default=None, gt=0, description="Most tokens to generate (`maxOutputTokens`)."
        )
        thinking_enable: bool = thinking("Think, and show thought summaries.")
        thinking_budget: int | None = Field(
            default=None,
            ge=-1,
            description="Most tokens to think with (-1: the model decides; 1024 by default).",
        )
        thinking_level: Literal["minimal", "low", "medium", "high"] | None = Field(
            default=None, description="How hard a Gemini 3 model thinks (instead of a budget)."
        )
        temperature: Temperature = None
        top_p: TopP = None
        top_k: TopK = None
        stop: list[str] | None = Field(
            default=None, max_length=5, description="Sequences that end the answer."
        )
        seed: Seed = None
        presence_penalty: float | None = Field(
            default=None, ge=-2, lt=2, description="Penalty on tokens that appeared at all."
        )
        frequency_penalty: float | None = Field(
            default=None, ge=-2, lt=2, description="Penalty on tokens by their frequency so far."
        )

    type = "gemini_chat"
    decoder = GeminiDecoder
    default_context_size = 1_048_576
    credential: GeminiCredential
    cards_dir = files("agent_core.model") / "_cards" / "gemini"

    def _default_formatter(self) -> FormatterBase:
        return GeminiChatFormatter()

    def _auth_headers(self) -> dict[str, str]:
        return {"x-goog-api-key": self.credential.api_key.get_secret_value()}

    def _path(self, model_name: str) -> str:
        name = model_name.removeprefix("models/")
        if self.stream:
            return f"/models/{name}:streamGenerateContent?alt=sse"
        return f"/models/{name}:generateContent"

    async def _body(self, call: BodyArgs) -> dict[str, Any]:
        contents = await self.formatter.format(call.messages)
        system = [part for c in contents if c["role"] == "system" for part in c["parts"]]
        body: dict[str, Any] = {
            "contents": [c for c in contents if c["role"] != "system"],
            "generationConfig": self._generation_config(),
        }
        if system:
            body["systemInstruction"] = {"parts": system}
        if call.tools:
            body["tools"] = [{"functionDeclarations": function_declarations(call.tools)}]
            if call.tool_choice is not None:
                body["toolConfig"] = {"functionCallingConfig": _calling_config(call.tool_choice)}
        body.update(call.extra)
        return body

    def _generation_config(self) -> dict[str, Any]:
        assert isinstance(self.parameters, GeminiChatModel.Parameters)  # set by the base
        p = self.parameters
        config = present(
            maxOutputTokens=p.max_tokens,
            temperature=p.temperature,
            topP=p.top_p,
            topK=p.top_k,
            stopSequences=p.stop,
            seed=p.seed,
            presencePenalty=p.presence_penalty,
            frequencyPenalty=p.frequency_penalty,
        )
        thinking: dict[str, Any] = {"includeThoughts": p.thinking_enable}
        if p.thinking_level is not None:
            thinking["thinkingLevel"] = p.thinking_level
        elif p.thinking_enable:
            thinking["thinkingBudget"] = (
                _DEFAULT_THINKING_BUDGET if p.thinking_budget is None else p.thinking_budget
            )
        else:
            thinking["thinkingBudget"] = 0
        config["thinkingConfig"] = thinking
        return config

    async def _call_api(
        self,
        model_name: str,
        messages: list[Msg],
        tools: list[dict[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> ChatResponse | AsyncGenerator[ChatResponse, None]:
        """POST one request; a 429's `RetryInfo.retryDelay` becomes the error's `retry_after`."""
        try:
            return await super()._call_api(model_name, messages, tools, tool_choice, **kwargs)
        except ModelHTTPError as exc:
            if exc.retry_after is None:
                exc.retry_after = retry_delay(exc.body)
            raise


def _calling_config(tool_choice: ToolChoice) -> dict[str, Any]:
    mode = tool_choice.mode
    if mode in _MODES:
        return {"mode": _MODES[mode]}
    return {"mode": "ANY", "allowedFunctionNames": [mode]}
