"""`/chat/`: deliver an input to a session; the reply arrives on its stream."""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import APIRouter, Header, Request
from pydantic import AfterValidator

from serve.deps import UserId, app_runtime
from serve.schemas import ChatRequest, ChatTriggerResponse

router = APIRouter(prefix="/chat", tags=["chat"])

_KEY = re.compile(r"[A-Za-z0-9._:~-]{1,128}")


def _check_key(value: str | None) -> str | None:
    if value is not None and not _KEY.fullmatch(value):
        raise ValueError("1 to 128 characters among letters, digits and . _ : ~ -")
    return value


IdempotencyKey = Annotated[
    str | None,
    AfterValidator(_check_key),
    Header(
        description="Makes a retried POST safe: an input already accepted under this key for "
        "the session is not delivered again (the request still answers 200)."
    ),
]


@router.post("/")
async def chat(
    body: ChatRequest,
    user: UserId,
    request: Request,
    idempotency_key: IdempotencyKey = None,
) -> ChatTriggerResponse:
    """Queue the input in the session's inbox and wake the session."""
    # Each dependency costs FastAPI a resolution round; this route is the hot path.
    await app_runtime(request).chat.send(
        user, body.agent_id, body.session_id, body.chat_input(), idempotency_key
    )
    return ChatTriggerResponse(session_id=body.session_id)
