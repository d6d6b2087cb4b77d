"""A typed client of Troupe's HTTP API, for programs and the `troupe` CLI.

It depends on httpx and pydantic only (import-linter keeps it so)::

    import asyncio
    from serve.client import ModelChoice, TroupeClient

    async def main() -> None:
        async with TroupeClient("http://127.0.0.1:8000", user="me") as troupe:
            agent = await troupe.create_agent("Friday")
            ...

    asyncio.run(main())
"""

from serve.client._client import DEFAULT_SERVER, USER_HEADER, TroupeClient
from serve.client.errors import APIError, NotFoundError, ServerUnreachableError, TroupeClientError
from serve.client.models import (
    Agent,
    ClusterStatus,
    Credential,
    CredentialCheck,
    Event,
    Health,
    ModelChoice,
    Session,
    SessionStatus,
    Transcript,
)

__all__ = [
    "DEFAULT_SERVER",
    "USER_HEADER",
    "APIError",
    "Agent",
    "ClusterStatus",
    "Credential",
    "CredentialCheck",
    "Event",
    "Health",
    "ModelChoice",
    "NotFoundError",
    "ServerUnreachableError",
    "Session",
    "SessionStatus",
    "Transcript",
    "TroupeClient",
    "TroupeClientError",
]
