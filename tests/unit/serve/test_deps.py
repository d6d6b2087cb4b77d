"""The spec's standard injectables (`serve.deps`, AgentScope's `agentscope.app.deps`) in a router.

Spec text (service-and-team.md, "Dependencies"):

    Routers receive application state through FastAPI's Depends(). The standard injectables
    (in agentscope.app.deps) are: get_current_user_id, get_storage, get_message_bus,
    get_workspace_manager, get_background_task_manager, get_scheduler_manager,
    get_chat_service.

What each returns on Troupe is tabled in `serve.deps`; this router reads through every one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any

import httpx
import pytest
from fastapi import APIRouter, Depends

from actors.client import InProcessDispatcher, RuntimeClient
from actors.schedules.service import ScheduleService
from actors.storage.redis_storage import RedisStorage
from actors.workspaces.session_workspaces import SessionWorkspaces, WorkspaceService
from serve import create_app
from serve.deps import (
    get_background_task_manager,
    get_chat_service,
    get_current_user_id,
    get_message_bus,
    get_scheduler_manager,
    get_storage,
    get_workspace_manager,
)
from serve.message_bus import RedisMessageBus
from tests.support.api import USER
from workspaces import LocalWorkspaceManager

pytestmark = [pytest.mark.redis]

router = APIRouter(prefix="/mine")


@router.get("/overview")
async def overview(
    user_id: Annotated[str, Depends(get_current_user_id)],
    storage: Annotated[RedisStorage, Depends(get_storage)],
    bus: Annotated[RedisMessageBus, Depends(get_message_bus)],
    workspaces: Annotated[SessionWorkspaces, Depends(get_workspace_manager)],
    background: Annotated[WorkspaceService, Depends(get_background_task_manager)],
    scheduler: Annotated[ScheduleService, Depends(get_scheduler_manager)],
    chat: Annotated[RuntimeClient, Depends(get_chat_service)],
) -> dict[str, Any]:
    agents = await storage.list_agents(user_id)
    return {
        "user": user_id,
        "agents": [agent.data.name for agent in agents],
        "inbox_sessions": await bus.sessions_with_inbox(),
        "schedules": len(await scheduler.list_schedules(user_id)),
        "same_runtime": storage is chat.storage
        and bus is chat.bus
        and workspaces is chat.workspaces
        and background is workspaces.service
        and scheduler is chat.schedules,
    }


@pytest.fixture
async def api(redis_url: str, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(
        storage=redis_url,
        workspace_manager=LocalWorkspaceManager(tmp_path / "ws", ttl=60),
        dispatcher=InProcessDispatcher,
    )
    app.include_router(router)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            yield client


async def test_a_custom_router_reads_the_app_state_through_the_injectables(
    api: httpx.AsyncClient,
) -> None:
    created = await api.post("/agent/", json={"name": "Friday"}, headers=USER)
    assert created.status_code == 201, created.text

    response = await api.get("/mine/overview", headers=USER)

    assert response.status_code == 200, response.text
    assert response.json() == {
        "user": "alice",
        "agents": ["Friday"],
        "inbox_sessions": [],
        "schedules": 0,
        "same_runtime": True,
    }


async def test_the_identity_dependency_guards_the_custom_router(api: httpx.AsyncClient) -> None:
    assert (await api.get("/mine/overview")).status_code == 401
    assert (await api.get("/mine/overview", headers={"X-User-ID": " "})).status_code == 401
