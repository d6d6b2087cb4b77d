"""Agent teams: their records, the team tools, invites and team announcements.

Internal to the runtime (its public surface is `actors`): import from the modules.
"""

__all__: list[str] = []
