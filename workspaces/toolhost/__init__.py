"""The tool host: a process that runs a workspace's built-in tool calls inside its boundary.

`ToolHostProcess` (the workspace side) starts it with a backend's command line (under
bubblewrap, inside a container, ...) and is the `ToolExecutor` the workspace's tools are bound
to; `python -m workspaces.toolhost` is the process itself.
"""

from workspaces.toolhost.client import ToolHostProcess

__all__ = ["ToolHostProcess"]
