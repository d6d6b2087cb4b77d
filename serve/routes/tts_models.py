"""`/tts-model/`: the text-to-speech model cards of a provider (Troupe synthesizes no speech)."""

from __future__ import annotations

from fastapi import APIRouter

from serve.routes.models import credential_class
from serve.schemas import ListTTSModelsResponse

router = APIRouter(prefix="/tts-model", tags=["tts-model"])


@router.get("/")
def list_tts_models(provider: str) -> ListTTSModelsResponse:
    """The TTS models reachable with a credential of type `provider`: none in Troupe.

    An unknown provider is a 404, as on `/model/`.
    """
    credential_class(provider)
    return ListTTSModelsResponse(models=[], total=0)
