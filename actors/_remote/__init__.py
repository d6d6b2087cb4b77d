"""The Ray side of the runtime: the only package that declares Ray actors or sets their options.

Private to the runtime: `session_actor` (session hosts and the dispatcher that wakes them),
`workspace_actor` (a sandbox node's workspaces), `scheduler_actor` (the deployment's scheduler).
"""

__all__: list[str] = []
