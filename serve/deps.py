"""Request dependencies: the caller's identity and the runtime client."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, HTTPException, Request

from actors.client import RuntimeClient


def user_id(x_user_id: Annotated[str, Header(description="The caller's user id.")]) -> str:
    """Identify the caller from `X-User-ID` (missing → 422, empty → 401).

    Replace this dependency (`app.dependency_overrides[user_id]`) to plug in real auth.
    """
    if not x_user_id.strip():
        raise HTTPException(status_code=401, detail="X-User-ID is empty")
    return x_user_id


get_current_user_id = user_id
"""The spec's name of the identity dependency (`agentscope.app.deps.get_current_user_id`)."""


def runtime(request: Request) -> RuntimeClient:
    """The app's runtime client."""
    client: RuntimeClient = request.app.state.runtime
    return client


UserId = Annotated[str, Depends(user_id)]
Runtime = Annotated[RuntimeClient, Depends(runtime)]
