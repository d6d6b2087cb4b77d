"""`/schedule/`: cron schedules that fire agents into sessions, and the sessions they fired."""

from __future__ import annotations

from fastapi import APIRouter, Response

from actors.schedules.store import ScheduleRecord
from serve.deps import Runtime, UserId
from serve.schedule_schemas import (
    CreateScheduleRequest,
    CreateScheduleResponse,
    ListSchedulesResponse,
    ScheduleSessionsResponse,
    UpdateScheduleRequest,
)

router = APIRouter(prefix="/schedule", tags=["schedule"])


@router.post("/", status_code=201)
async def create_schedule(
    body: CreateScheduleRequest, user: UserId, runtime: Runtime
) -> CreateScheduleResponse:
    """Create a schedule of one of the caller's agents and start timing it."""
    record = await runtime.schedules.create(user, body.agent_id, body.to_data())
    return CreateScheduleResponse(schedule_id=record.id)


@router.get("/")
async def list_schedules(user: UserId, runtime: Runtime) -> ListSchedulesResponse:
    """List the caller's schedules."""
    schedules = await runtime.schedules.list_schedules(user)
    return ListSchedulesResponse(schedules=schedules, total=len(schedules))


@router.patch("/{schedule_id}")
async def update_schedule(
    schedule_id: str, body: UpdateScheduleRequest, user: UserId, runtime: Runtime
) -> ScheduleRecord:
    """Change a schedule; a new cron, zone or `enabled` re-times it at once."""
    return await runtime.schedules.update(user, schedule_id, body.changes())


@router.delete("/{schedule_id}", status_code=204)
async def delete_schedule(schedule_id: str, user: UserId, runtime: Runtime) -> Response:
    """Delete the schedule and the sessions it fired into."""
    await runtime.schedules.delete(user, schedule_id)
    return Response(status_code=204)


@router.get("/{schedule_id}/sessions")
async def list_schedule_sessions(
    schedule_id: str, user: UserId, runtime: Runtime
) -> ScheduleSessionsResponse:
    """The sessions the schedule fired into, newest first."""
    sessions = await runtime.schedules.sessions(user, schedule_id)
    return ScheduleSessionsResponse(sessions=sessions, total=len(sessions))
