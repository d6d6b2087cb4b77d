"""The same-run reference: a plain FastAPI app on one uvicorn worker, no Troupe, no Redis.

`POST /chat/` validates a JSON body and answers; `GET /stream` is SSE fed from memory;
`POST /emit` fans one event out to every open stream.

Run: python bench/_plain_app.py PORT
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from fastapi import FastAPI
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

app = FastAPI()
_subscribers: set[asyncio.Queue[str]] = set()
_count = 0


class Chat(BaseModel):
    agent_id: str
    session_id: str
    input: Any = None


@app.post("/chat/")
async def chat(body: Chat) -> dict[str, str]:
    return {"session_id": body.session_id}


@app.get("/stream")
async def stream() -> StreamingResponse:
    queue: asyncio.Queue[str] = asyncio.Queue()
    _subscribers.add(queue)

    async def frames() -> AsyncIterator[str]:
        try:
            yield ": open\n\n"
            while True:
                yield await queue.get()
        finally:
            _subscribers.discard(queue)

    return StreamingResponse(frames(), media_type="text/event-stream")


@app.post("/emit")
async def emit(event: dict[str, Any]) -> dict[str, int]:
    global _count
    _count += 1
    frame = f"id: {_count}\ndata: {Chat.model_validate(event).model_dump_json()}\n\n"
    for queue in _subscribers:
        queue.put_nowait(frame)
    return {"subscribers": len(_subscribers)}


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
