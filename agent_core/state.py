"""`AgentState`: everything needed to resume an agent where it left off (JSON round-trip)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from agent_core._ids import new_id, now_iso
from agent_core.deferred_model import DeferredModel
from agent_core.message import DataOrText, Msg
from agent_core.permission.types import PermissionContext


class _State(DeferredModel):
    model_config = ConfigDict(extra="forbid")


class ReplyContext(_State):
    """Position of the reply in progress (empty `reply_id` when none is)."""

    reply_id: str = Field(default="", description="Id of the reply in progress.")
    cur_iter: int = Field(default=0, description="Reasoning-acting iterations done so far.")
    structured_schema: dict[str, Any] | None = Field(
        default=None, description="JSON schema the reply's structured output must satisfy."
    )
    structured_output: dict[str, Any] | None = Field(
        default=None, description="The validated structured output, once produced."
    )


class ReadCacheEntry(_State):
    """A file the agent has read (what `Write`/`Edit` check before changing it)."""

    file_path: str
    lines: list[str] = Field(default_factory=list)
    updated_at: float = Field(description="The file's mtime when it was read.")
    bytes: float = Field(description="Size of the cached content.")


class ToolContext(_State):
    """Tool-side state: the read cache and the activated tool groups."""

    max_cache_files: int = Field(default=100, gt=1)
    max_cache_bytes: float = Field(default=25_000, gt=10_000)
    read_file_cache: list[ReadCacheEntry] = Field(default_factory=list)
    activated_groups: list[str] = Field(default_factory=list)


class Task(_State):
    """A task the agent tracks with the Task* tools."""

    id: str = Field(default_factory=lambda: new_id()[:8])
    subject: str
    description: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: str = Field(default_factory=now_iso)
    state: Literal["pending", "in_progress", "completed"] = "pending"
    owner: str | None = None
    blocks: list[str] = Field(default_factory=list)
    blocked_by: list[str] = Field(default_factory=list)


class TaskContext(_State):
    """The agent's task list."""

    tasks: list[Task] = Field(default_factory=list)


class AgentState(_State):
    """The persistent state of one agent in one session."""

    session_id: str = Field(default="", description="Session the state belongs to.")
    summary: str | list[DataOrText] = Field(
        default="", description="Summary of compressed context."
    )
    context: list[Msg] = Field(default_factory=list, description="The conversation so far.")
    reply_context: ReplyContext = Field(default_factory=ReplyContext)
    permission_context: PermissionContext = Field(default_factory=PermissionContext)
    tool_context: ToolContext = Field(default_factory=ToolContext)
    tasks_context: TaskContext = Field(default_factory=TaskContext)
    middle_context: dict[str, Any] = Field(
        default_factory=dict, description="State kept by middlewares, by middleware name."
    )

    def current_reply(self) -> Msg | None:
        """Return the assistant Msg of the reply in progress, if any."""
        if not self.reply_context.reply_id:
            return None
        for msg in reversed(self.context):
            if msg.id == self.reply_context.reply_id:
                return msg
        return None
