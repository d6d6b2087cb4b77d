"""The service's message bus, where the spec's `agentscope.app.message_bus` names it."""

from actors.client import RedisMessageBus

__all__ = ["RedisMessageBus"]
