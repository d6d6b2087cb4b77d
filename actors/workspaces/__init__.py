"""Workspaces as the runtime runs them: hosts, the Ray service, backends, the user's library.

Internal to the runtime (its public surface is `actors`): import from the modules.
"""

__all__: list[str] = []
