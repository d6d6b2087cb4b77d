"""`/admin/status`: the deployment at a glance (nodes, session hosts, inboxes), for operators."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from actors.ops.cluster_status import ClusterStatus, cluster_status
from serve.auth import Principal
from serve.deps import Runtime, admin

router = APIRouter(prefix="/admin", tags=["admin"])


@router.get("/status")
async def status(runtime: Runtime, _caller: Annotated[Principal, Depends(admin)]) -> ClusterStatus:
    """Ray nodes, the actors hosting sessions (and which), and every non-empty inbox.

    Needs an admin API key (`troupe apikey create --admin`); any caller under `--auth dev`.
    """
    return await cluster_status(runtime.bus, runtime.settings.namespace)
