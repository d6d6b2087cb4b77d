"""The service's storage, where the spec's `agentscope.app.storage` names it.

Troupe's storage is Redis only: `RedisStorage(host=..., port=..., db=..., password=...)`.
"""

from actors.client import RedisStorage

__all__ = ["RedisStorage"]
