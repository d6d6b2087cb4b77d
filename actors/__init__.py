"""actors: Troupe's runtime — Ray actors, the Redis message bus and storage.

The HTTP layer and embedding applications use `RuntimeClient` (from `actors.client`) and
`RuntimeSettings`; everything else is internal to the runtime. The names below load on first
use, so that a process importing one module of the runtime (a session host, a workspace actor)
does not load the client and everything it reaches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_core._lazy import lazy_names

if TYPE_CHECKING:
    from actors.client import InProcessDispatcher, MessagesPage, RuntimeClient, ray_dispatcher
    from actors.local.embedded_redis import EmbeddedRedis
    from actors.settings import RuntimeSettings
    from actors.teams.store import SubAgentTemplate

_HOMES = {
    "EmbeddedRedis": "actors.local.embedded_redis",
    "InProcessDispatcher": "actors.client",
    "MessagesPage": "actors.client",
    "RuntimeClient": "actors.client",
    "RuntimeSettings": "actors.settings",
    "SubAgentTemplate": "actors.teams.store",
    "ray_dispatcher": "actors.client",
}

__all__ = [
    "EmbeddedRedis",
    "InProcessDispatcher",
    "MessagesPage",
    "RuntimeClient",
    "RuntimeSettings",
    "SubAgentTemplate",
    "ray_dispatcher",
]


__getattr__ = lazy_names(__name__, _HOMES)
