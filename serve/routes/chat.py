"""`/chat/`: deliver an input to a session; the reply arrives on its stream."""

from __future__ import annotations

from fastapi import APIRouter

from serve.deps import Runtime, UserId
from serve.schemas import ChatRequest, ChatTriggerResponse

router = APIRouter(prefix="/chat", tags=["chat"])


@router.post("/")
async def chat(body: ChatRequest, user: UserId, runtime: Runtime) -> ChatTriggerResponse:
    """Queue the input in the session's inbox and wake the session."""
    await runtime.chat.send(user, body.agent_id, body.session_id, body.chat_input())
    return ChatTriggerResponse(session_id=body.session_id)
