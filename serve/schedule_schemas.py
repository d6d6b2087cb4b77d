"""Request and response bodies of `/schedule/` (AgentScope's Agent Service shapes).

`started_at` / `ended_at` on create are Troupe's addition (the activation window AgentScope
keeps on the record); AgentScope clients simply omit them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from actors.schedules.store import ScheduleData, ScheduleRecord, check_timing, to_utc
from actors.storage.records import ChatModelConfig, SessionRecord
from agent_core.permission import PermissionMode


class CreateScheduleRequest(BaseModel):
    """`POST /schedule/`."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="Display name of the schedule.")
    description: str = Field(
        default="", description="The task: what the agent is asked to do at each fire."
    )
    cron_expression: str = Field(description="Standard 5-field cron, e.g. '0 9 * * 1-5'.")
    timezone: str = Field(default="UTC", description="IANA time zone, e.g. 'Asia/Shanghai'.")
    agent_id: str = Field(description="Agent to run when the schedule fires.")
    chat_model_config: ChatModelConfig = Field(description="Model of the sessions it opens.")
    enabled: bool = Field(default=True, description="Whether it is active once created.")
    stateful: bool = Field(default=False, description="Whether every fire reuses one session.")
    permission_mode: PermissionMode = Field(
        default=PermissionMode.DONT_ASK, description="Permission mode during scheduled runs."
    )
    started_at: datetime | None = Field(
        default=None, description="No fire before this time (default: now; naive = UTC)."
    )
    ended_at: datetime | None = Field(
        default=None, description="No fire after this time (naive = UTC)."
    )

    @model_validator(mode="after")
    def _timing(self) -> CreateScheduleRequest:
        start = datetime.now(UTC) if self.started_at is None else to_utc(self.started_at)
        end = None if self.ended_at is None else to_utc(self.ended_at)
        check_timing(self.cron_expression, self.timezone, start, end)
        return self

    def to_data(self) -> ScheduleData:
        """The stored form of the schedule."""
        fields = self.model_dump(exclude={"agent_id"}, exclude_none=True)
        return ScheduleData.model_validate(fields)


class UpdateScheduleRequest(BaseModel):
    """`PATCH /schedule/{id}`: omitted (or null) fields keep their values."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, min_length=1, description="New display name.")
    description: str | None = Field(default=None, description="New task description.")
    cron_expression: str | None = Field(default=None, description="New 5-field cron.")
    timezone: str | None = Field(default=None, description="New IANA time zone.")
    enabled: bool | None = Field(default=None, description="False pauses the schedule.")
    stateful: bool | None = Field(default=None, description="Whether fires share a session.")
    permission_mode: PermissionMode | None = Field(default=None, description="New mode.")

    @field_validator("cron_expression")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        if value is not None:
            check_timing(value, "UTC")
        return value

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str | None) -> str | None:
        if value is not None:
            check_timing("* * * * *", value)
        return value

    def changes(self) -> dict[str, Any]:
        """The ScheduleData fields this request sets."""
        return {key: value for key, value in self if value is not None}


class CreateScheduleResponse(BaseModel):
    """Id of the created schedule."""

    schedule_id: str = Field(description="Server-assigned schedule identifier.")


class ListSchedulesResponse(BaseModel):
    """`GET /schedule/`."""

    schedules: list[ScheduleRecord] = Field(description="Schedule records.")
    total: int = Field(description="Total number of schedules.")


class ScheduleSessionsResponse(BaseModel):
    """`GET /schedule/{id}/sessions`."""

    sessions: list[SessionRecord] = Field(description="Sessions the schedule fired into.")
    total: int = Field(description="Total number of execution sessions.")
