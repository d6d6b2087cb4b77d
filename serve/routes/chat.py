"""`/chat/`: deliver an input to a session; the reply arrives on its stream."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

from fastapi import APIRouter, Header, Request
from pydantic import AfterValidator

from serve.deps import UserId, app_runtime, request_user_id
from serve.fast_route import fast_path_route
from serve.schemas import ChatRequest, ChatTriggerResponse

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


async def _well_formed(request: Request) -> dict[str, Any] | None:
    """`chat`'s arguments for a well-formed request; `None` leaves the rest to FastAPI."""
    if request.headers.get("content-type") != "application/json":
        return None
    try:
        key = _check_key(request.headers.get("idempotency-key"))
        body = ChatRequest.model_validate(json.loads(await request.body()))
    except ValueError:  # a bad key, bad JSON, or a body that does not validate
        return None
    user = await request_user_id(request)
    return {"body": body, "user": user, "request": request, "idempotency_key": key}


router = APIRouter(prefix="/chat", tags=["chat"], route_class=fast_path_route(_well_formed))


@router.post("/")
async def chat(
    body: ChatRequest,
    user: UserId,
    request: Request,
    idempotency_key: IdempotencyKey = None,
) -> ChatTriggerResponse:
    """Queue the input in the session's inbox and wake the session."""
    await app_runtime(request).chat.send(
        user, body.agent_id, body.session_id, body.chat_input(), idempotency_key
    )
    return ChatTriggerResponse(session_id=body.session_id)
