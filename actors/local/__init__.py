"""Running the runtime on one machine: the local Ray node and an embedded redis-server.

Internal to the runtime (its public surface is `actors`): import from the modules.
"""

__all__: list[str] = []
