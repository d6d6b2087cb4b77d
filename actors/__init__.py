"""actors: Troupe's runtime — Ray actors, the Redis message bus and storage.

The HTTP layer and embedding applications use `RuntimeClient` (from `actors.client`) and
`RuntimeSettings`; everything else is internal to the runtime.
"""

from actors.client import InProcessDispatcher, MessagesPage, RuntimeClient, ray_dispatcher
from actors.local.embedded_redis import EmbeddedRedis
from actors.settings import RuntimeSettings
from actors.teams.store import SubAgentTemplate

__all__ = [
    "EmbeddedRedis",
    "InProcessDispatcher",
    "MessagesPage",
    "RuntimeClient",
    "RuntimeSettings",
    "SubAgentTemplate",
    "ray_dispatcher",
]
