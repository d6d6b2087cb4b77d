"""Who is calling: the two identity schemes behind `serve.deps.user_id`.

- `dev`: the caller says who they are in `X-User-ID` (AgentScope's scheme). Anyone who can reach
  the port is anyone they claim: for a server on the loopback interface only.
- `keys`: the caller presents an API key (`Authorization: Bearer trp_...`), made by the operator
  with `troupe apikey create --user U`; the key names the user. `X-User-ID` is ignored.

`troupe serve` uses `keys` unless it is bound to a loopback address (`--auth` overrides);
`create_app` defaults to `dev`, as AgentScope's service does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fastapi import HTTPException, Request

from actors.client import RuntimeApi
from actors.storage.api_keys import ApiKeyStore

AuthMode = Literal["dev", "keys"]
AUTH_MODES: tuple[AuthMode, ...] = ("dev", "keys")
_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="troupe"'}


@dataclass(frozen=True)
class Principal:
    """The authenticated caller."""

    user_id: str
    admin: bool


def _refuse(message: str) -> HTTPException:
    return HTTPException(status_code=401, detail=message, headers=_CHALLENGE)


async def authenticate(request: Request, x_user_id: str | None, bearer: str | None) -> Principal:
    """Identify the caller by the app's scheme (`app.state.auth`, default `dev`).

    Raises:
        HTTPException: 401 when the request carries no valid identity.
    """
    mode: AuthMode = getattr(request.app.state, "auth", "dev")
    if mode == "dev":
        if x_user_id is None or not x_user_id.strip():
            raise _refuse("X-User-ID is missing or empty")
        # Development: whoever can reach a loopback server is trusted, admin routes included.
        return Principal(user_id=x_user_id, admin=True)
    if not bearer:
        raise _refuse("an API key is required (Authorization: Bearer trp_...)")
    runtime: RuntimeApi = request.app.state.runtime
    key = await ApiKeyStore(runtime.storage.redis, runtime.storage.keys).resolve(bearer)
    if key is None:
        raise _refuse("the API key is not valid (unknown, revoked or mistyped)")
    return Principal(user_id=key.user_id, admin=key.admin)
