"""`/credential/`: model-provider credentials (secrets encrypted at rest, masked in responses)."""

from __future__ import annotations

from fastapi import APIRouter, Response
from fastapi.exceptions import RequestValidationError

from agent_core.credential import credential_json_schemas
from serve import credential_check
from serve.credential_schemas import (
    CreateCredentialRequest,
    CreateCredentialResponse,
    CredentialCheckResponse,
    CredentialView,
    ListCredentialSchemasResponse,
    ListCredentialsResponse,
    UpdateCredentialRequest,
    keep_masked_secrets,
)
from serve.deps import Runtime, UserId

router = APIRouter(prefix="/credential", tags=["credential"])


@router.get("/schemas")
async def credential_schemas() -> ListCredentialSchemasResponse:
    """The JSON schema of every credential type."""
    return ListCredentialSchemasResponse(schemas=credential_json_schemas())


@router.post("/", status_code=201)
async def create_credential(
    body: CreateCredentialRequest, user: UserId, runtime: Runtime
) -> CreateCredentialResponse:
    """Store a credential."""
    record = await runtime.credentials.create(user, body.data)
    return CreateCredentialResponse(credential_id=record.id)


@router.get("/")
async def list_credentials(user: UserId, runtime: Runtime) -> ListCredentialsResponse:
    """List the caller's credentials with secrets masked."""
    views = [CredentialView.of(c) for c in await runtime.credentials.list_credentials(user)]
    return ListCredentialsResponse(credentials=views, total=len(views))


@router.patch("/{credential_id}")
async def update_credential(
    credential_id: str, body: UpdateCredentialRequest, user: UserId, runtime: Runtime
) -> CredentialView:
    """Replace the credential's data; a secret sent back masked keeps the stored secret."""
    if body.sent_id is not None and body.sent_id != credential_id:
        error = {
            "type": "value_error",
            "loc": ("body", "data", "id"),
            "msg": f"data.id {body.sent_id!r} is not the credential in the path",
        }
        raise RequestValidationError([error])
    stored = await runtime.credentials.get(user, credential_id)
    try:
        data = keep_masked_secrets(body.data, stored.data)
    except ValueError as exc:
        error = {"type": "value_error", "loc": ("body", "data"), "msg": str(exc)}
        raise RequestValidationError([error]) from exc
    return CredentialView.of(await runtime.credentials.update(user, credential_id, data))


@router.post("/{credential_id}/check")
async def check_credential(
    credential_id: str, user: UserId, runtime: Runtime
) -> CredentialCheckResponse:
    """Try the credential once against its provider (lists its models: no tokens spent)."""
    stored = await runtime.credentials.get(user, credential_id)
    try:
        return await credential_check.check_credential(stored.data)
    except ValueError as exc:
        error = {"type": "value_error", "loc": ("path", "credential_id"), "msg": str(exc)}
        raise RequestValidationError([error]) from exc


@router.delete("/{credential_id}", status_code=204)
async def delete_credential(credential_id: str, user: UserId, runtime: Runtime) -> Response:
    """Delete the credential."""
    await runtime.credentials.delete(user, credential_id)
    return Response(status_code=204)
