"""The spec's custom provider of the "API credentials" section (service-and-team.md), importable.

`create_app(extra_credentials=[MyProviderCredential])` sends the class to session processes by
import path, so it lives in a module rather than in a test. `# Port:` marks what the example
needed: the `type` literal every registered credential carries (AgentScope's
`CredentialFactory` requires it too), and a body for the chat model the spec leaves out
(`...`): Chat Completions without streaming, to the credential's `endpoint`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any, Literal

import httpx

from agent_core.credential import CredentialBase
from agent_core.formatter import OpenAIChatFormatter
from agent_core.message import Msg, TextBlock
from agent_core.model import ChatModelBase, ChatResponse
from agent_core.tool import ToolChoice


class MyProviderChatModel(ChatModelBase):
    # Implement the streaming chat interface against the provider's API.
    # Port: the spec's body is `...`; this one answers through the OpenAI wire protocol.
    type: Literal["my_provider_chat"] = "my_provider_chat"

    async def _call_api(
        self,
        model_name: str,
        messages: list[Msg],
        tools: list[dict[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> ChatResponse | AsyncGenerator[ChatResponse, None]:
        assert isinstance(self.credential, MyProviderCredential)
        formatted = await OpenAIChatFormatter().format(messages)
        async with httpx.AsyncClient() as client:
            answer = await client.post(
                f"{self.credential.endpoint}/chat/completions",
                json={"model": model_name, "messages": formatted},
                headers={"Authorization": f"Bearer {self.credential.api_key}"},
            )
        text = answer.json()["choices"][0]["message"]["content"]
        return ChatResponse(content=[TextBlock(text=text)], is_last=True)


class MyProviderCredential(CredentialBase):
    type: Literal["my_provider"] = "my_provider"  # Port: the registry's key
    api_key: str
    endpoint: str = "https://api.my-provider.com"

    @classmethod
    def get_chat_model_class(cls) -> type[ChatModelBase]:  # type: ignore[override]
        return MyProviderChatModel
