"""Request and response bodies of the HTTP API (AgentScope's Agent Service shapes)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator

from actors.records import (
    AgentChatConfig,
    AgentData,
    AgentRecord,
    ChatModelConfig,
    CredentialRecord,
    SessionRecord,
    SessionStatus,
)
from agent_core.agent import ContextConfig, ReActConfig
from agent_core.credential import Credential
from agent_core.event import ExternalExecutionResultEvent, UserConfirmResultEvent
from agent_core.message import Msg
from agent_core.permission import PermissionMode


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreateAgentRequest(_Body):
    """`POST /agent/`."""

    name: str = Field(min_length=1, max_length=200, description="Agent name.")
    system_prompt: str = Field(default="You're a helpful assistant.")
    chat_config: AgentChatConfig | None = None
    context_config: ContextConfig | None = Field(
        default=None, description="Shortcut for chat_config.context_config."
    )
    react_config: ReActConfig | None = Field(
        default=None, description="Shortcut for chat_config.react_config."
    )

    def to_data(self) -> AgentData:
        """The stored form of the agent."""
        chat = self.chat_config or AgentChatConfig()
        if self.context_config is not None:
            chat = chat.model_copy(update={"context_config": self.context_config})
        if self.react_config is not None:
            chat = chat.model_copy(update={"react_config": self.react_config})
        return AgentData(name=self.name, system_prompt=self.system_prompt, chat_config=chat)


class CreateAgentResponse(BaseModel):
    """Id of the created agent."""

    agent_id: str


class AgentView(AgentRecord):
    """An agent as the API shows it."""

    editable: bool = True


class ListAgentsResponse(BaseModel):
    """`GET /agent/`."""

    agents: list[AgentView]
    total: int


class CreateCredentialRequest(_Body):
    """`POST /credential/`: `data` is a credential tagged by `type`."""

    data: Credential


class CreateCredentialResponse(BaseModel):
    """Id of the created credential."""

    credential_id: str


_MASK = "********"


class CredentialView(BaseModel):
    """A credential as the API shows it: secrets masked."""

    id: str
    created_at: str
    updated_at: str
    user_id: str
    data: dict[str, Any]
    editable: bool = True

    @classmethod
    def of(cls, record: CredentialRecord) -> CredentialView:
        """Show `record` with its secret fields masked."""
        data = record.data.model_dump()
        schema = type(record.data).model_json_schema()["properties"]
        for name, prop in schema.items():
            if prop.get("writeOnly") and data.get(name):
                data[name] = _MASK
        return cls(
            id=record.id,
            created_at=record.created_at,
            updated_at=record.updated_at,
            user_id=record.user_id,
            data=data,
        )


class ListCredentialsResponse(BaseModel):
    """`GET /credential/`."""

    credentials: list[CredentialView]
    total: int


class ListCredentialSchemasResponse(BaseModel):
    """`GET /credential/schemas`: the JSON schema of each credential type."""

    schemas: list[dict[str, Any]]


class CreateSessionRequest(_Body):
    """`POST /sessions/`."""

    agent_id: str = Field(min_length=1)
    workspace_id: str | None = None
    name: str | None = None
    chat_model_config: ChatModelConfig | None = None
    fallback_chat_model_config: ChatModelConfig | None = None


class CreateSessionResponse(BaseModel):
    """Id of the created session."""

    session_id: str


class ListSessionsResponse(BaseModel):
    """`GET /sessions/`."""

    sessions: list[SessionRecord]
    total: int


def _input_kind(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, list):
        return "messages"
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return str(kind) if kind in ("USER_CONFIRM_RESULT", "EXTERNAL_EXECUTION_RESULT") else "message"


def _user_only(msgs: list[Msg]) -> list[Msg]:
    for msg in msgs:
        if msg.role != "user":
            raise ValueError(f"chat input messages must have role 'user', not {msg.role!r}")
    return msgs


ChatInputBody = Annotated[
    Annotated[Msg, Tag("message")]
    | Annotated[list[Msg], Tag("messages")]
    | Annotated[UserConfirmResultEvent, Tag("USER_CONFIRM_RESULT")]
    | Annotated[ExternalExecutionResultEvent, Tag("EXTERNAL_EXECUTION_RESULT")]
    | Annotated[None, Tag("none")],
    Discriminator(_input_kind),
]


class ChatRequest(_Body):
    """`POST /chat/`: deliver an input to a session."""

    agent_id: str = Field(min_length=1)
    session_id: str = Field(min_length=1)
    input: ChatInputBody = Field(
        description="A user Msg, a list of them, a confirmation/external result, or null."
    )

    @field_validator("input")
    @classmethod
    def _check_roles(cls, value: Any) -> Any:
        if isinstance(value, Msg):
            _user_only([value])
        elif isinstance(value, list):
            if not value:
                raise ValueError("chat input list must not be empty")
            _user_only(value)
        return value

    def chat_input(
        self,
    ) -> list[Msg] | UserConfirmResultEvent | ExternalExecutionResultEvent | None:
        """The input as the runtime takes it (a single Msg becomes a list)."""
        return [self.input] if isinstance(self.input, Msg) else self.input


class ChatTriggerResponse(BaseModel):
    """`POST /chat/` accepted the input; the reply arrives on the stream."""

    status: Literal["started"] = "started"
    session_id: str


class ListMessagesResponse(BaseModel):
    """`GET /sessions/{id}/messages`."""

    messages: list[Msg]
    event_cursor: str | None
    is_running: bool
    has_more: bool


class HealthResponse(BaseModel):
    """`GET /health`."""

    status: Literal["ok", "degraded"]
    version: str
    components: dict[str, str]


class UpdateSessionRequest(_Body):
    """`PATCH /sessions/{id}`: omitted fields stay unchanged; null clears a model config."""

    name: str | None = Field(default=None, description="New display name.")
    chat_model_config: ChatModelConfig | None = None
    fallback_chat_model_config: ChatModelConfig | None = None
    permission_mode: PermissionMode | None = Field(
        default=None, description="Permission mode for the session's next replies."
    )
    cwd: str | None = Field(default=None, description="New working directory.")

    def changes(self) -> dict[str, Any]:
        """The SessionConfig fields this request sets (a null only clears model configs)."""
        sent = self.model_dump(exclude_unset=True)
        clearable = {"chat_model_config", "fallback_chat_model_config"}
        return {
            key: getattr(self, key)
            for key, value in sent.items()
            if value is not None or key in clearable
        }


class SessionStatusResponse(BaseModel):
    """`GET /sessions/{id}/status`."""

    session_id: str
    status: SessionStatus


class InterruptSessionResponse(BaseModel):
    """`POST /sessions/{id}/interrupt` (202)."""

    session_id: str
