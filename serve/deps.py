"""Request dependencies: the caller's identity, the runtime client, and the spec's injectables.

The spec's `agentscope.app.deps` names seven dependencies for custom routers. Troupe runs
sessions in Ray actors, so the app holds one runtime (`RuntimeApi`) and each injectable
returns the part of it doing that job in this process:

| Dependency                    | Troupe returns                                              |
|-------------------------------|-------------------------------------------------------------|
| `get_current_user_id`         | the caller's id: API key or `X-User-ID` (`serve.auth`)      |
| `get_storage`                 | the client's `RedisStorage`                                 |
| `get_message_bus`             | the client's `RedisMessageBus`                              |
| `get_workspace_manager`       | the client's `SessionWorkspaces` (workspaces by session)    |
| `get_background_task_manager` | the `WorkspaceService` running background tool calls        |
| `get_scheduler_manager`       | the client's `ScheduleService`                              |
| `get_chat_service`            | the runtime (its `chat`: `send`, `interrupt`, `events`)     |
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from actors.client import RedisMessageBus, RedisStorage, RuntimeApi
from actors.schedules.service import ScheduleService
from actors.workspaces.session_workspaces import SessionWorkspaces, WorkspaceService
from serve.auth import Principal, authenticate

_bearer = HTTPBearer(
    auto_error=False,
    scheme_name="APIKey",
    description="An API key (`troupe apikey create --user U`), when the server runs --auth keys.",
)


_XUserId = Annotated[
    str | None, Header(description="The caller's user id (servers running --auth dev only).")
]
_Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


async def principal(
    request: Request, x_user_id: _XUserId = None, credentials: _Credentials = None
) -> Principal:
    """The authenticated caller, by the app's scheme (see `serve.auth`); no identity → 401."""
    return await authenticate(request, x_user_id, credentials.credentials if credentials else None)


async def user_id(
    request: Request, x_user_id: _XUserId = None, credentials: _Credentials = None
) -> str:
    """The caller's user id: every route scopes what it reads and writes by it.

    Replace this dependency (`app.dependency_overrides[user_id]`) to plug in another scheme
    (JWT, a gateway's header): everything user-scoped follows it.
    """
    # `principal` called, not depended on: a dependency level costs every request a round.
    return (await principal(request, x_user_id, credentials)).user_id


get_current_user_id = user_id
"""The spec's name of the identity dependency (`agentscope.app.deps.get_current_user_id`)."""


async def request_user_id(request: Request) -> str:
    """What `user_id` (not overridden) resolves for `request`, read without dependency solving.

    Raises:
        HTTPException: 401, as `user_id` does.
    """
    credentials = await _bearer(request)
    return await user_id(request, request.headers.get("x-user-id"), credentials)


async def runtime(request: Request) -> RuntimeApi:
    """The app's runtime client."""
    # `async`, like `user_id`: FastAPI runs a plain `def` dependency on a worker thread.
    return app_runtime(request)


def app_runtime(request: Request) -> RuntimeApi:
    """The app's runtime client, for a hot route that spares itself the `Runtime` dependency."""
    client: RuntimeApi = request.app.state.runtime
    return client


async def admin(caller: Annotated[Principal, Depends(principal)]) -> Principal:
    """The caller, when allowed cluster-wide views (an admin key; anyone under --auth dev)."""
    if not caller.admin:
        raise HTTPException(status_code=403, detail="this route needs an admin API key")
    return caller


UserId = Annotated[str, Depends(user_id)]
Runtime = Annotated[RuntimeApi, Depends(runtime)]


def get_storage(client: Runtime) -> RedisStorage:
    """The app's storage: agents, sessions, credentials and transcripts, in Redis."""
    return client.storage


def get_message_bus(client: Runtime) -> RedisMessageBus:
    """The app's message bus: inboxes, event logs and leases, in the storage's Redis."""
    return client.bus


def get_workspace_manager(client: Runtime) -> SessionWorkspaces:
    """The sessions' workspaces.

    Troupe's workspace managers live where the workspaces run (workspace actors, or this
    process with the in-process dispatcher); this is the app's handle on them, opening a
    session's workspace with `kit(session_record)`.
    """
    return client.workspaces


def get_background_task_manager(client: Runtime) -> WorkspaceService:
    """What runs background tool calls: the workspace service.

    Troupe has no separate task registry: a tool call moved to the background keeps running
    where its workspace runs and reports back through the session's inbox. The service adopts
    (`adopt`) and stops (`stop_background`) such calls.
    """
    return client.workspaces.service


def get_scheduler_manager(client: Runtime) -> ScheduleService:
    """The app's schedules: create, change and delete cron fires of sessions."""
    return client.schedules


def get_chat_service(client: Runtime) -> RuntimeApi:
    """The entry point for running sessions: the runtime (its `chat` sends, interrupts, streams).

    Troupe's counterpart of the spec's ChatService runs each session in its own actor; the
    client delivers input to it and reads its event log.
    """
    return client
