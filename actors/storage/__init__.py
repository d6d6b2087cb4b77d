"""Records in Redis: agents, credentials, sessions, their state and transcripts; secrets and tokens.

Internal to the runtime (its public surface is `actors`): import from the modules.
"""

__all__: list[str] = []
