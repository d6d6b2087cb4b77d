"""Request and response bodies of the HTTP API (AgentScope's Agent Service shapes)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    field_validator,
)

from actors.storage.records import (
    AgentChatConfig,
    AgentData,
    AgentRecord,
    ChatModelConfig,
    InviteConfig,
    SessionNaming,
    SessionStatus,
)
from agent_core.agent import ContextConfig, ReActConfig
from agent_core.event import ExternalExecutionResultEvent, UserConfirmResultEvent
from agent_core.message import Msg
from agent_core.model.card import ModelCard
from agent_core.permission import PermissionMode
from serve.auth import AuthMode

_DEPRECATED: dict[str, Any] = {"deprecated": True}


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _FlatChatConfigs(_Body):
    """The sub-configs of `chat_config` a client may still send at the top level (deprecated)."""

    context_config: ContextConfig | None = Field(
        default=None,
        description="Deprecated: use chat_config.context_config (this one wins if both are sent).",
        json_schema_extra=_DEPRECATED,
    )
    react_config: ReActConfig | None = Field(
        default=None,
        description="Deprecated: use chat_config.react_config (this one wins if both are sent).",
        json_schema_extra=_DEPRECATED,
    )
    invite_config: InviteConfig | None = Field(
        default=None,
        description="Deprecated: use chat_config.invite_config (this one wins if both are sent).",
        json_schema_extra=_DEPRECATED,
    )

    def fold_flat(self, chat: AgentChatConfig) -> AgentChatConfig:
        """Put the top-level sub-configs that were sent on top of `chat`."""
        flat = {
            "context_config": self.context_config,
            "react_config": self.react_config,
            "invite_config": self.invite_config,
        }
        return chat.model_copy(update={k: v for k, v in flat.items() if v is not None})


class CreateAgentRequest(_FlatChatConfigs):
    """`POST /agent/`."""

    name: str = Field(min_length=1, max_length=200, description="Agent name.")
    system_prompt: str = Field(default="You're a helpful assistant.")
    chat_config: AgentChatConfig | None = None
    dedicated_process: bool = Field(
        default=False, description=AgentData.model_fields["dedicated_process"].description
    )

    def to_data(self) -> AgentData:
        """The stored form of the agent."""
        chat = self.fold_flat(self.chat_config or AgentChatConfig())
        return AgentData(
            name=self.name,
            system_prompt=self.system_prompt,
            chat_config=chat,
            dedicated_process=self.dedicated_process,
        )


class UpdateAgentRequest(_FlatChatConfigs):
    """`PATCH /agent/{id}`: omitted (or null) fields keep their current values."""

    name: str | None = Field(
        default=None, min_length=1, max_length=200, description="New display name."
    )
    system_prompt: str | None = Field(default=None, description="New system prompt.")
    chat_config: AgentChatConfig | None = Field(
        default=None,
        description="New text-conversation settings. Only supplied sub-configs are replaced; "
        "omitted sub-configs keep their current values.",
    )
    dedicated_process: bool | None = Field(
        default=None,
        description="Whether each session runs in an actor of its own. Sessions already "
        "placed keep their placement; new ones, and those a shared host closed when idle, "
        "follow the new value.",
    )

    def apply_to(self, data: AgentData) -> AgentData:
        """Return `data` with this request's changes."""
        chat = data.chat_config
        if self.chat_config is not None:
            sent = self.chat_config.model_fields_set
            chat = chat.model_copy(update={k: getattr(self.chat_config, k) for k in sent})
        chat = self.fold_flat(chat)
        top = {
            "name": self.name,
            "system_prompt": self.system_prompt,
            "dedicated_process": self.dedicated_process,
        }
        changes = {k: v for k, v in top.items() if v is not None}
        return data.model_copy(update={**changes, "chat_config": chat})


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


class AgentSchemaResponse(BaseModel):
    """`GET /agent/schema` (deprecated): the agent form in three self-contained sections."""

    identity: dict[str, Any] = Field(description="Schema of `name` and `system_prompt`.")
    context_config: dict[str, Any] = Field(description="Schema of ContextConfig.")
    react_config: dict[str, Any] = Field(description="Schema of ReActConfig.")


class AgentSchemaV2Response(BaseModel):
    """`GET /agent/schema/v2`: the whole agent form in one self-contained schema."""

    # `schema` would shadow a BaseModel attribute; the alias keeps the wire name.
    agent_schema: dict[str, Any] = Field(
        alias="schema", description="JSON schema of AgentData with every $ref inlined."
    )


class ListModelsResponse(BaseModel):
    """`GET /model/?provider=`: the model cards of one credential type."""

    models: list[ModelCard] = Field(description="The candidate models.")
    total: int = Field(description="The total number of candidates.")


class ListTTSModelsResponse(BaseModel):
    """`GET /tts-model/?provider=`: the TTS model cards of one credential type."""

    models: list[dict[str, Any]] = Field(
        description="The candidate TTS models (none: Troupe synthesizes no speech)."
    )
    total: int = Field(description="The total number of candidates.")


class ListKnowledgeBasesResponse(BaseModel):
    """`GET /knowledge_bases/`: a page of the caller's knowledge bases."""

    knowledge_bases: list[dict[str, Any]] = Field(
        description="The requested page (always empty: Troupe has no knowledge bases)."
    )
    total: int = Field(description="Knowledge bases matching the filters, across all pages.")
    page: int = Field(default=1, description="The 1-based page served.")
    page_size: int = Field(default=30, description="The page size used.")


class KbMiddlewareParametersSchemaResponse(BaseModel):
    """`GET /knowledge_bases/middleware/parameters_schema`."""

    parameter_schema: dict[str, Any] = Field(
        description="JSON schema of the retrieval parameters a session may tune."
    )


_UNSUPPORTED_SESSION_FIELDS = {
    "tts_model_config": "text-to-speech",
    "realtime_model_config": "realtime voice",
    "knowledge_config": "knowledge bases",
}


def _unsupported(description: str) -> Any:
    return Field(
        default=None,
        description=f"AgentScope's {description} settings; Troupe has none: omit or send null.",
    )


class _SessionModels(_Body):
    """The model settings a session request may carry (AgentScope's set)."""

    chat_model_config: ChatModelConfig | None = None
    fallback_chat_model_config: ChatModelConfig | None = None
    tts_model_config: dict[str, Any] | None = _unsupported("text-to-speech model")
    realtime_model_config: dict[str, Any] | None = _unsupported("realtime voice model")
    knowledge_config: dict[str, Any] | None = _unsupported("knowledge base")

    @field_validator(*_UNSUPPORTED_SESSION_FIELDS)
    @classmethod
    def _refuse(cls, value: Any, info: ValidationInfo) -> Any:
        if value is not None:
            feature = _UNSUPPORTED_SESSION_FIELDS[str(info.field_name)]
            raise ValueError(
                f"Troupe does not support {feature}; omit {info.field_name} or send null"
            )
        return value


class CreateSessionRequest(_SessionModels):
    """`POST /sessions/`."""

    agent_id: str = Field(min_length=1)
    workspace_id: str | None = None
    name: str | None = None


class CreateSessionResponse(BaseModel):
    """Id of the created session."""

    session_id: str


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
    auth: AuthMode = Field(
        default="dev",
        description="How callers identify themselves: `dev` (the X-User-ID header) or `keys` "
        "(`Authorization: Bearer trp_...`, an API key). Lets clients such as the console "
        "ask for the right credential.",
    )


class UpdateSessionRequest(_SessionModels):
    """`PATCH /sessions/{id}`: omitted fields stay unchanged; null clears a model config."""

    name: str | None = Field(default=None, description="New display name.")
    permission_mode: PermissionMode | None = Field(
        default=None, description="Permission mode for the session's next replies."
    )
    cwd: str | None = Field(default=None, description="New working directory.")

    def changes(self) -> dict[str, Any]:
        """The SessionConfig fields this request sets (a null only clears model configs).

        A new name settles the name for good: the server stops titling the session.
        """
        sent = self.model_dump(exclude_unset=True, exclude=set(_UNSUPPORTED_SESSION_FIELDS))
        clearable = {"chat_model_config", "fallback_chat_model_config"}
        changes = {
            key: getattr(self, key)
            for key, value in sent.items()
            if value is not None or key in clearable
        }
        if "name" in changes:
            changes["naming"] = SessionNaming(auto=False)
        return changes


class SessionStatusResponse(BaseModel):
    """`GET /sessions/{id}/status`."""

    session_id: str
    status: SessionStatus


class InterruptSessionResponse(BaseModel):
    """`POST /sessions/{id}/interrupt` (202)."""

    session_id: str
