"""Sessions: the runtime that owns one, its reply writes and recovery, hosts, placement, toolkit.

Internal to the runtime (its public surface is `actors`): import from the modules.
"""

__all__: list[str] = []
