"""`/credential/`: create and list model-provider credentials (secrets masked)."""

from __future__ import annotations

from fastapi import APIRouter

from agent_core.credential import credential_json_schemas
from serve.deps import Runtime, UserId
from serve.schemas import (
    CreateCredentialRequest,
    CreateCredentialResponse,
    CredentialView,
    ListCredentialSchemasResponse,
    ListCredentialsResponse,
)

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
    record = await runtime.create_credential(user, body.data)
    return CreateCredentialResponse(credential_id=record.id)


@router.get("/")
async def list_credentials(user: UserId, runtime: Runtime) -> ListCredentialsResponse:
    """List the caller's credentials with secrets masked."""
    views = [CredentialView.of(c) for c in await runtime.list_credentials(user)]
    return ListCredentialsResponse(credentials=views, total=len(views))
