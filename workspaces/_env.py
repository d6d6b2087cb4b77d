"""The environment of an agent's processes: nothing of the server's, only harmless basics."""

from __future__ import annotations

from collections.abc import Mapping

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"


def agent_environment(home: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A fresh environment for a tool process: no `TROUPE_*`, `RAY_*`, Redis URL or secrets.

    Nothing is inherited from the server process; `extra` (the agent's own settings, e.g. an
    MCP server's declared variables) is laid over the basics.

    Args:
        home: The process's home directory (the workspace).
        extra: Variables to add.
    """
    env = {
        "PATH": SAFE_PATH,
        "HOME": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "TMPDIR": "/tmp",
        "USER": "agent",
        "LOGNAME": "agent",
        "SHELL": "/bin/bash",
    }
    env.update(extra or {})
    return env
