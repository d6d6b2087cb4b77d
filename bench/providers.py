"""Decode overhead per streamed chunk, per provider: how long Troupe spends turning one SSE
event into a `ChatResponse` delta (SSE framing, JSON, block decoding, accumulation).

The body is served from memory through an httpx mock transport, so no network time is counted.

Usage: `python -m bench.providers [--events N] [--rounds R]` (prints CPU and wall µs per chunk,
the best of R rounds).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import httpx

from agent_core.credential import (
    AnthropicCredential,
    DashScopeCredential,
    DeepSeekCredential,
    GeminiCredential,
    MoonshotCredential,
    OpenAICredential,
    XAICredential,
)
from agent_core.message import SystemMsg, UserMsg
from agent_core.model import (
    AnthropicChatModel,
    DashScopeChatModel,
    DeepSeekChatModel,
    GeminiChatModel,
    MoonshotChatModel,
    OllamaChatModel,
    OpenAIChatModel,
    OpenAIResponseModel,
    XAIChatModel,
)
from agent_core.model.base import ChatModelBase
from tests.support.gemini_server import GeminiReply, Text, Thought, sse_events
from tests.support.ollama_server import OllamaReply, stream_lines
from tests.support.openai_server import ScriptedReply, stream_frames
from tests.support.wire_server import anthropic_events, responses_events, sse

HELLO = [SystemMsg("system", "Be terse."), UserMsg("user", "Hello?")]
WORD = "token "


def chat_body(n: int, reasoning: bool = False) -> tuple[bytes, int]:
    reply = ScriptedReply(text=WORD * n, reasoning=WORD * n if reasoning else "")
    frames = stream_frames(reply, "m", include_usage=True)
    data = "".join(f"data: {json.dumps(f)}\n\n" for f in frames) + "data: [DONE]\n\n"
    return data.encode(), len(frames)


def anthropic_body(n: int) -> tuple[bytes, int]:
    events = anthropic_events(text=WORD * n, thinking=WORD * n)
    return sse(events), len(events)


def responses_body(n: int) -> tuple[bytes, int]:
    events = responses_events(text=WORD * n, summary=WORD * n)
    return sse(events), len(events)


def gemini_body(n: int) -> tuple[bytes, int]:
    events = sse_events(GeminiReply([Thought(WORD * n), Text(WORD * n)], piece=len(WORD)), "m")
    return b"".join(events), len(events)


def ollama_body(n: int) -> tuple[bytes, int]:
    lines = stream_lines(OllamaReply(thinking=WORD * n, content=WORD * n, piece=len(WORD)), "m")
    return "".join(json.dumps(line) + "\n" for line in lines).encode(), len(lines)


def client(body: bytes) -> httpx.AsyncClient:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


CASES: dict[str, tuple[Callable[[int], tuple[bytes, int]], Callable[[httpx.AsyncClient], Any]]] = {
    "openai_chat": (
        chat_body,
        lambda c: OpenAIChatModel(OpenAICredential(api_key="k"), "m", client=c),
    ),
    "deepseek_chat (reasoning)": (
        lambda n: chat_body(n, reasoning=True),
        lambda c: DeepSeekChatModel(DeepSeekCredential(api_key="k"), "m", client=c),
    ),
    "moonshot_chat (reasoning)": (
        lambda n: chat_body(n, reasoning=True),
        lambda c: MoonshotChatModel(MoonshotCredential(api_key="k"), "m", client=c),
    ),
    "dashscope_chat (reasoning)": (
        lambda n: chat_body(n, reasoning=True),
        lambda c: DashScopeChatModel(DashScopeCredential(api_key="k"), "m", client=c),
    ),
    "xai_chat": (
        chat_body,
        lambda c: XAIChatModel(XAICredential(api_key="k"), "m", client=c),
    ),
    "anthropic_chat (thinking)": (
        anthropic_body,
        lambda c: AnthropicChatModel(AnthropicCredential(api_key="k"), "m", client=c),
    ),
    "openai_response (reasoning)": (
        responses_body,
        lambda c: OpenAIResponseModel(OpenAICredential(api_key="k"), "m", client=c),
    ),
    "gemini_chat (thoughts)": (
        gemini_body,
        lambda c: GeminiChatModel(GeminiCredential(api_key="k"), "m", client=c),
    ),
    "ollama_chat (thinking, NDJSON)": (
        ollama_body,
        lambda c: OllamaChatModel(None, "m", client=c),
    ),
}


async def measure(events: int, rounds: int) -> None:
    # CPU time is the figure to read on a shared box; wall time shows what contention adds.
    print(f"{'provider':30} {'events':>7} {'cpu µs/chunk':>13} {'wall µs/chunk':>14}")
    for name, (make_body, make_model) in CASES.items():
        body, count = make_body(events)
        async with client(body) as http:
            model: ChatModelBase = make_model(http)
            best_cpu = best_wall = float("inf")
            for _ in range(rounds):
                cpu, wall = time.process_time(), time.perf_counter()
                stream = await model(HELLO)
                assert not hasattr(stream, "content")
                async for _chunk in stream:  # type: ignore[union-attr]
                    pass
                best_cpu = min(best_cpu, time.process_time() - cpu)
                best_wall = min(best_wall, time.perf_counter() - wall)
        print(
            f"{name:30} {count:7d} {best_cpu / count * 1e6:13.1f} {best_wall / count * 1e6:14.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=500, help="text pieces per answer")
    parser.add_argument("--rounds", type=int, default=5, help="runs per provider (best kept)")
    args = parser.parse_args()
    asyncio.run(measure(args.events, args.rounds))


if __name__ == "__main__":
    main()
