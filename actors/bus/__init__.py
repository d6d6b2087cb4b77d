"""The runtime's Redis layer: connections, the key layout, inboxes and event logs, mailbox delivery.

Internal to the runtime (its public surface is `actors`): import from the modules.
"""

__all__: list[str] = []
