"""`/model/`: the model cards of a provider, for model pickers and parameter forms."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException

from agent_core.credential import CREDENTIAL_TYPES, CredentialBase
from serve.schemas import ListModelsResponse

router = APIRouter(prefix="/model", tags=["model"])


@router.get("/")
def list_models(provider: str) -> ListModelsResponse:
    """The cards of the models reachable with a credential of type `provider`.

    A plain function: FastAPI runs it in a worker thread, off the event loop, while the card
    files are read.
    """
    models = credential_class(provider).list_models()
    return ListModelsResponse(models=models, total=len(models))


def credential_class(provider: str) -> type[CredentialBase]:
    """The credential type named `provider` (404 when there is none)."""
    found = CREDENTIAL_TYPES.get(provider)
    if found is None:
        known = ", ".join(sorted(CREDENTIAL_TYPES))
        raise HTTPException(404, f"unknown provider {provider!r}; known: {known}")
    return found
