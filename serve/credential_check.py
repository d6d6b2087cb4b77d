"""`POST /credential/{id}/check`: try a stored credential once against its provider.

The cheapest call an OpenAI-protocol provider answers with authentication is `GET
{base_url}/models`: it costs no tokens, and a wrong key, URL or host shows as its status.
"""

from __future__ import annotations

import logging

import httpx

from agent_core.credential import CredentialBase, DashScopeCredential, OpenAICredential
from serve.credential_schemas import CredentialCheckResponse

log = logging.getLogger(__name__)

CHECK_TIMEOUT = 10.0
_BODY_SHOWN = 300  # characters of a provider's error answer passed on


async def check_credential(
    credential: CredentialBase, client: httpx.AsyncClient | None = None
) -> CredentialCheckResponse:
    """Call the provider once with `credential` and report what it answered.

    Raises:
        ValueError: the credential's type has no check (only OpenAI-protocol ones do).
    """
    if not isinstance(credential, OpenAICredential | DashScopeCredential):
        raise ValueError(f"credentials of type {credential.type!r} cannot be checked")
    url = f"{credential.base_url.rstrip('/')}/models"
    headers = {"Authorization": f"Bearer {credential.api_key.get_secret_value()}"}
    if isinstance(credential, OpenAICredential) and credential.organization:
        headers["OpenAI-Organization"] = credential.organization

    def report(ok: bool, status: int | None, message: str) -> CredentialCheckResponse:
        return CredentialCheckResponse(
            ok=ok, provider=credential.type, url=url, status=status, message=message
        )

    http = client or httpx.AsyncClient()
    try:
        response = await http.get(url, headers=headers, timeout=CHECK_TIMEOUT)
    except httpx.HTTPError as exc:
        log.warning("credential check: %s unreachable: %s", url, exc)
        return report(ok=False, status=None, message=f"{type(exc).__name__}: {exc}")
    finally:
        if client is None:
            await http.aclose()
    if response.is_success:
        return report(ok=True, status=response.status_code, message="the provider accepted it")
    log.warning("credential check: %s answered HTTP %s", url, response.status_code)
    text = response.text[:_BODY_SHOWN]
    return report(ok=False, status=response.status_code, message=text or response.reason_phrase)
