"""Helpers for the AgentScope side of the side-by-side benchmarks.

AgentScope is never a project dependency: it is installed only in the bench environment (see
bench/README.md) and imported only by the bench scripts, through this module.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import uvicorn
from agentscope.app import create_app
from agentscope.app.message_bus import RedisMessageBus
from agentscope.app.storage import RedisStorage
from agentscope.app.workspace_manager import LocalWorkspaceManager
from agentscope.credential import CredentialBase
from agentscope.formatter import OpenAIChatFormatter
from agentscope.message import TextBlock, ToolCallBlock
from agentscope.model import ChatModelBase, ChatResponse, ChatUsage
from pydantic import BaseModel

from actors.local._ports import find_free_port


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


@asynccontextmanager
async def agentscope_service(
    redis_host: str, redis_port: int, workdir: str, startup_timeout: float = 60.0
) -> AsyncIterator[str]:
    """AgentScope's Agent Service app on 127.0.0.1, served by uvicorn in this event loop.

    Storage and message bus are AgentScope's Redis ones (on the given Redis), workspaces are
    local directories under `workdir`; everything else is `create_app`'s defaults. Yields the
    base URL. Agents run in this process, as AgentScope's service runs them.
    """
    app = create_app(
        storage=RedisStorage(host=redis_host, port=redis_port),
        message_bus=RedisMessageBus(host=redis_host, port=redis_port),
        workspace_manager=LocalWorkspaceManager(basedir=workdir),
    )
    port = find_free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
    )
    task = asyncio.create_task(server.serve(), name="agentscope-uvicorn")
    try:
        async with asyncio.timeout(startup_timeout):
            while not server.started:
                if task.done():
                    task.result()  # surfaces the startup error
                    raise RuntimeError("AgentScope's server stopped during start-up")
                await asyncio.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        try:
            async with asyncio.timeout(60):
                await task
        except TimeoutError:
            task.cancel()


async def make_agentscope_session(
    api: httpx.AsyncClient,
    model_base_url: str,
    headers: dict[str, str],
    name: str,
    system_prompt: str,
) -> tuple[str, str]:
    """Create an agent, an OpenAI credential for `model_base_url` and a session; return ids.

    The session is given a name so AgentScope does not spend a model call on titling it.
    """
    agent = await api.post(
        "/agent/", json={"name": name, "system_prompt": system_prompt}, headers=headers
    )
    agent.raise_for_status()
    agent_id = agent.json()["agent_id"]
    cred = {"type": "openai_credential", "api_key": "sk-bench", "base_url": model_base_url}
    credential = await api.post("/credential/", json={"data": cred}, headers=headers)
    credential.raise_for_status()
    model = {
        "type": "openai",
        "credential_id": credential.json()["credential_id"],
        "model": "gpt-4o-mini",
        "parameters": {},
    }
    session = await api.post(
        "/sessions/",
        json={"agent_id": agent_id, "name": f"{name} bench", "chat_model_config": model},
        headers=headers,
    )
    session.raise_for_status()
    return agent_id, session.json()["session_id"]
