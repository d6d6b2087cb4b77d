"""Request and response bodies of the `/credential/` routes: secrets travel masked."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    field_validator,
    model_validator,
)

from actors.storage.records import CredentialRecord
from agent_core.credential import Credential, CredentialBase


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


MASK = "********"

C = TypeVar("C", bound=CredentialBase)


def keep_masked_secrets(data: C, stored: CredentialBase | None) -> C:
    """Return `data` with each secret sent back as the mask replaced by the `stored` one.

    Raises:
        ValueError: a secret is the mask but there is no stored secret of the same type to keep.
    """
    kept: dict[str, str] = {}
    for name in data.secret_fields():
        if data.secret(name) != MASK:
            continue
        stored_secret = (
            stored.secret(name) if stored is not None and stored.type == data.type else None
        )
        if stored_secret is None:
            raise ValueError(f"{name}: {MASK!r} stands for a stored secret; send the secret")
        kept[name] = stored_secret
    return data.with_secrets(kept)


class _CredentialBody(_Body):
    """A credential body; `data.id` (AgentScope's credential schemas have it) is taken apart."""

    data: Credential = Field(
        description="A credential tagged by `type`; `id` may be sent along (see the route)."
    )
    _sent_id: str | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _take_id(cls, value: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        sent = None
        if isinstance(value, dict) and isinstance(value.get("data"), dict):
            data = dict(value["data"])
            sent = data.pop("id", None)
            if sent is not None and not isinstance(sent, str):
                raise ValueError("data.id must be a string")
            value = {**value, "data": data}
        body = handler(value)
        body._sent_id = sent
        return body

    @property
    def sent_id(self) -> str | None:
        """The `data.id` the client sent, if any."""
        return self._sent_id


class CreateCredentialRequest(_CredentialBody):
    """`POST /credential/`: `data` is a credential tagged by `type`.

    A `data.id` is accepted and ignored: the server assigns the id (`credential_id` of the
    response), so a client can neither choose nor overwrite one.
    """

    @field_validator("data")
    @classmethod
    def _not_masked(cls, value: Credential) -> Credential:
        return keep_masked_secrets(value, None)


class UpdateCredentialRequest(_CredentialBody):
    """`PATCH /credential/{id}`: the new data; a secret sent back masked keeps the stored one.

    A `data.id` must be the id in the path.
    """


class CreateCredentialResponse(BaseModel):
    """Id of the created credential."""

    credential_id: str


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
        for name in record.data.secret_fields():
            if data.get(name):
                data[name] = MASK
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


class CredentialCheckResponse(BaseModel):
    """`POST /credential/{id}/check`: what the provider answered one cheap call."""

    ok: bool = Field(description="The provider answered with a success status.")
    provider: str = Field(description="The credential type checked.")
    url: str = Field(description="The URL called.")
    status: int | None = Field(description="The provider's HTTP status; null if unreachable.")
    message: str = Field(description="What the provider said, or why it could not be reached.")


class ListCredentialSchemasResponse(BaseModel):
    """`GET /credential/schemas`: the JSON schema of each credential type."""

    schemas: list[dict[str, Any]]
