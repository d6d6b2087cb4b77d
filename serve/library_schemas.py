"""Bodies of the `/mcp` and `/skill` library routes and the workspace routes using the library.

AgentScope's shapes. The library views leave out an MCP server's configuration on purpose: it
may carry API keys, and nothing a library screen shows needs it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from actors.client import AddResult, MCPRecord, SkillRecord

_MAX_IDS = 100


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _LibraryView(_Body):
    id: str = Field(description="The library record id.")
    enabled: bool = Field(description="Whether the user has it turned on.")
    display_name: str | None = Field(default=None, description="The user-facing name.")
    description: str = Field(default="", description="What it does.")
    tags: list[str] = Field(default_factory=list, description="Its tags.")
    author: str | None = Field(default=None, description="Who published it.")
    icon_url: str | None = Field(default=None, description="Its icon.")
    url: str | None = Field(default=None, description="Its page on the hub's website.")
    hub_id: str | None = Field(
        default=None, description="The hub it came from, or null when added by hand."
    )
    card_id: str | None = Field(default=None, description="The card's id on that hub.")
    version: str | None = Field(default=None, description="The card version installed.")


class MCPView(_LibraryView):
    """One MCP server in the user's library (its configuration is never shown)."""

    name: str = Field(description="The MCP name, unique for this user.")
    is_stateful: bool = Field(description="Whether it keeps one connection open.")

    @classmethod
    def of(cls, record: MCPRecord) -> MCPView:
        """The view of a library record."""
        shown = record.model_dump(include=set(_LibraryView.model_fields))
        return cls(**shown, name=record.name, is_stateful=record.config.is_stateful)


class SkillView(_LibraryView):
    """One skill in the user's library."""

    name: str = Field(description="The skill name, unique for this user.")

    @classmethod
    def of(cls, record: SkillRecord) -> SkillView:
        """The view of a library record."""
        return cls(**record.model_dump(include=set(cls.model_fields)))


class UpdateMCPRequest(_Body):
    """`PATCH /mcp/{mcp_id}`: a library edit; omitted fields are left alone."""

    name: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9_-]+$",
        description="A new name, made of [A-Za-z0-9_-] and unique for this user.",
    )
    values: dict[str, Any] | None = Field(
        default=None,
        description="New answers to a hub card's inputs. Troupe has no hubs, so no library "
        "MCP has a card to re-render from: any value is refused (400).",
    )
    enabled: bool | None = Field(default=None, description="Whether the MCP is turned on.")


class AddFromLibraryRequest(_Body):
    """`POST /workspace/mcp/from-library`: library MCP servers to put into the workspace."""

    mcp_ids: list[str] = Field(
        max_length=_MAX_IDS, description="The library record ids of the MCP servers to add."
    )


class AddSkillsFromLibraryRequest(_Body):
    """`POST /workspace/skill/from-library`: library skills to put into the workspace."""

    skill_ids: list[str] = Field(
        max_length=_MAX_IDS, description="The library record ids of the skills to add."
    )


class AddFromLibraryResponse(_Body):
    """What landed, and what did not: items are added one at a time."""

    added: list[str] = Field(
        default_factory=list,
        description="The names now in the workspace. MCP servers it already held are skipped, "
        "not listed.",
    )
    failed: dict[str, str] = Field(
        default_factory=dict,
        description="Whatever could not be added (by name, or by id when not in the library), "
        "mapped to why.",
    )

    @classmethod
    def of(cls, result: AddResult) -> AddFromLibraryResponse:
        """The body reporting a library addition."""
        return cls(added=result.added, failed=result.failed)


class DownloadTokenResponse(_Body):
    """A capability authorizing the download of one path of one session's workspace."""

    token: str = Field(
        description="Pass as the `token` query parameter of `GET /workspace/files`, in place "
        "of the X-User-ID header, with the same agent_id, session_id and path."
    )
    expires_at: float = Field(description="Unix timestamp after which the token is refused.")
