"""`/health`: liveness and component status."""

from __future__ import annotations

from fastapi import APIRouter, Request

import agent_core
from serve.deps import Runtime
from serve.schemas import HealthResponse

router = APIRouter(tags=["health"])


@router.get("/health")
async def health(request: Request, runtime: Runtime) -> HealthResponse:
    """Report the service version, each component's status and how callers sign in.

    Needs no identity: the console reads `auth` here before it has one.
    """
    components = await runtime.health()
    # "ok (detail)" is healthy; a "warning" (e.g. unsandboxed tools) does not degrade it.
    healthy = all(value.startswith(("ok", "warning")) for value in components.values())
    return HealthResponse(
        status="ok" if healthy else "degraded",
        version=agent_core.__version__,
        components=components,
        auth=request.app.state.auth,
    )
