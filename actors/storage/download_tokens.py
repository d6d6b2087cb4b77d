"""`DownloadTokens`: short-lived capabilities to download one file of one session's workspace.

A browser saves a download straight to disk only when it makes the request itself, and then it
sends no custom header, so the credential travels in the URL: a token
`{expires_at}.{user id}.{tag}` (the last two url-safe base64), the tag an HMAC of the expiry,
user, agent, session and path under the deployment's secret key. The agent, session and path
are not read from the token but taken from the download request, so a token for one file
cannot fetch another, nor the same path of another session.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Awaitable, Callable

from actors.errors import InvalidDownloadToken
from actors.storage.crypto import SecretBox

DEFAULT_TTL = 60
"""Seconds a token lives: enough for a click, short enough that a leaked URL is soon dead."""

_PURPOSE = "workspace-download"


class DownloadTokens:
    """Mints and checks download tokens with the deployment's secret key."""

    def __init__(
        self,
        secrets: Callable[[], Awaitable[SecretBox]],
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Sign with the box `secrets` returns; `clock` gives Unix time (replaceable in tests)."""
        self._secrets = secrets
        self._clock = clock

    async def sign(
        self, user_id: str, agent_id: str, session_id: str, path: str, ttl: float = DEFAULT_TTL
    ) -> tuple[str, int]:
        """A token letting its bearer download `path` of the session, and its expiry (Unix s).

        The caller has checked that the session is the user's.
        """
        expires_at = int(self._clock() + ttl)
        message = _message(expires_at, user_id, agent_id, session_id, path)
        tag = (await self._secrets()).sign(_PURPOSE, message)
        return f"{expires_at}.{_b64(user_id.encode())}.{_b64(tag)}", expires_at

    async def verify(self, token: str, agent_id: str, session_id: str, path: str) -> str:
        """The user a token was issued to, if it is valid for this session and path now.

        Raises:
            InvalidDownloadToken: It is malformed, altered, issued for another session or
                path, or expired.
        """
        try:
            raw_expiry, raw_user, raw_tag = token.split(".")
            expires_at = int(raw_expiry)
            user_id = _unb64(raw_user).decode()
            tag = _unb64(raw_tag)
        except (ValueError, UnicodeDecodeError, binascii.Error) as exc:
            raise InvalidDownloadToken("malformed download token") from exc
        message = _message(expires_at, user_id, agent_id, session_id, path)
        if not (await self._secrets()).verify(_PURPOSE, message, tag):
            raise InvalidDownloadToken(
                "invalid download token: it was altered, or issued for another session or path"
            )
        if expires_at < self._clock():
            raise InvalidDownloadToken("expired download token: ask for a new one")
        return user_id


def _message(expires_at: int, user_id: str, agent_id: str, session_id: str, path: str) -> bytes:
    # JSON keeps the fields apart whatever they contain (a path may hold any character).
    return json.dumps([expires_at, user_id, agent_id, session_id, path]).encode()


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
