"""`/sessions/`: create and list sessions, read transcripts, stream events."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query, Response
from fastapi.responses import StreamingResponse

from actors.client import SessionAudit, StreamId
from actors.storage.records import SessionConfig, SessionNaming, SessionRecord
from serve.deps import Runtime, UserId
from serve.schemas import (
    CreateSessionRequest,
    CreateSessionResponse,
    InterruptSessionResponse,
    ListMessagesResponse,
    SessionStatusResponse,
    UpdateSessionRequest,
)
from serve.session_views import (
    ListSessionsResponse,
    TeamStatusResponse,
    session_view,
    team_status_view,
)
from serve.sse import Cursor, event_frames

router = APIRouter(prefix="/sessions", tags=["sessions"])


async def _check_agent(
    session_id: str,
    user: UserId,
    runtime: Runtime,
    agent_id: Annotated[
        str | None,
        Query(
            description="The session's agent, as AgentScope's clients send it; a session of "
            "another agent is a 404. Optional: the session id alone names the session."
        ),
    ] = None,
) -> None:
    if agent_id is not None:
        await runtime.sessions.check(user, session_id, agent_id)


# Session sub-routes take AgentScope's `agent_id` query parameter and check it.
_OF_AGENT = [Depends(_check_agent)]


@router.post("/", status_code=201)
async def create_session(
    body: CreateSessionRequest, user: UserId, runtime: Runtime
) -> CreateSessionResponse:
    """Create a session of one of the caller's agents."""
    # A caller that names the session owns the name; otherwise it starts as the creation time
    # and the server titles it after its first reply.
    named = {} if body.name is None else {"name": body.name}
    config = SessionConfig(
        workspace_id=body.workspace_id or "",
        naming=SessionNaming(auto=body.name is None),
        chat_model_config=body.chat_model_config,
        fallback_chat_model_config=body.fallback_chat_model_config,
        **named,
    )
    record = await runtime.sessions.create(user, body.agent_id, config)
    return CreateSessionResponse(session_id=record.id)


@router.get("/")
async def list_sessions(
    user: UserId, runtime: Runtime, agent_id: str | None = None
) -> ListSessionsResponse:
    """List the caller's sessions (of one agent when given) with their status and team.

    Each record's state keeps its permission and task contexts only; read a transcript from
    `GET /sessions/{id}/messages`.
    """
    overviews = await runtime.sessions.overviews(user, agent_id)
    agents = {agent.id: agent for agent in await runtime.agents.list_agents(user)}
    views = [session_view(o, agents.get(o.session.agent_id)) for o in overviews]
    return ListSessionsResponse(sessions=views, total=len(views))


@router.get("/{session_id}/messages", dependencies=_OF_AGENT)
async def list_messages(
    session_id: str,
    user: UserId,
    runtime: Runtime,
    before: Annotated[
        str | None,
        Query(
            description="A message id: the page holds the messages before it. Omit for the "
            "newest page."
        ),
    ] = None,
    offset: Annotated[
        int,
        Query(
            ge=0,
            description="Skip this many of the newest messages (before `before`, when "
            "given) first. Prefer `before`: an offset shifts when messages are added.",
        ),
    ] = 0,
    limit: Annotated[int, Query(ge=1, le=200, description="Max messages.")] = 50,
) -> ListMessagesResponse:
    """A page of the transcript, newest page first; `event_cursor` resumes the stream."""
    page = await runtime.chat.messages(user, session_id, before, limit, offset)
    return ListMessagesResponse(
        messages=page.messages,
        event_cursor=page.event_cursor,
        is_running=page.is_running,
        has_more=page.has_more,
    )


@router.get("/{session_id}/stream", response_class=StreamingResponse, dependencies=_OF_AGENT)
async def stream(
    session_id: str,
    user: UserId,
    runtime: Runtime,
    after: Annotated[Cursor, Query(description="Replay the events after this stream id.")] = None,
    last_event_id: Annotated[
        Cursor, Header(description="The EventSource reconnect cursor; wins over `after`.")
    ] = None,
) -> StreamingResponse:
    """Server-Sent Events of the session: replay after `Last-Event-ID`/`after`, then live.

    Without either, the stream starts at the reply in progress (or with the next event). A
    cursor older than what the log still holds gets a `CUSTOM events_dropped` event first; one
    past the newest event waits for the next.
    """
    await runtime.sessions.check(user, session_id)
    cursor = last_event_id or after or await runtime.chat.live_cursor(session_id)
    return StreamingResponse(
        await event_frames(runtime, session_id, StreamId.parse(cursor)),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.patch("/{session_id}", dependencies=_OF_AGENT)
async def update_session(
    session_id: str, body: UpdateSessionRequest, user: UserId, runtime: Runtime
) -> SessionRecord:
    """Change an idle session's name, model config, permission mode or cwd (409 while running)."""
    return await runtime.sessions.update(user, session_id, body.changes())


@router.delete("/{session_id}", status_code=204, dependencies=_OF_AGENT)
async def delete_session(session_id: str, user: UserId, runtime: Runtime) -> Response:
    """Delete the session, its transcript, logs and inbox, and stop its actor."""
    await runtime.sessions.delete(user, session_id)
    return Response(status_code=204)


@router.get("/{session_id}/status", dependencies=_OF_AGENT)
async def session_status(session_id: str, user: UserId, runtime: Runtime) -> SessionStatusResponse:
    """Whether the session is running, idle, or parked awaiting permission / an external result."""
    return SessionStatusResponse(
        session_id=session_id, status=await runtime.sessions.status(user, session_id)
    )


@router.get("/{session_id}/doctor")
async def session_doctor(session_id: str, user: UserId, runtime: Runtime) -> SessionAudit:
    """Check the session's durable invariants (one end per reply, inputs and hints once, ...).

    An operator's route (`troupe doctor SESSION`): an empty `violations` list means healthy.
    """
    return await runtime.sessions.audit(user, session_id)


@router.get("/{session_id}/team", dependencies=_OF_AGENT)
async def session_team(session_id: str, user: UserId, runtime: Runtime) -> TeamStatusResponse:
    """The team the session leads or works in: each session's status and inbox depth (404: none).

    Poll it, or re-read it on the leader stream's `team_updated` events.
    """
    return team_status_view(await runtime.sessions.team_status(user, session_id))


@router.post("/{session_id}/interrupt", status_code=202, dependencies=_OF_AGENT)
async def interrupt_session(
    session_id: str, user: UserId, runtime: Runtime
) -> InterruptSessionResponse:
    """Interrupt the running reply (idempotent: a no-op when nothing runs)."""
    await runtime.chat.interrupt(user, session_id)
    return InterruptSessionResponse(session_id=session_id)
