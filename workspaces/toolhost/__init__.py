"""The tool host: a process that runs a workspace's built-in tool calls inside its boundary.

`ToolHost` (the workspace side) starts it through a backend's channel opener and is the
`ToolExecutor` the workspace's tools are bound to: `ToolHostProcess` starts it as a local
subprocess (under bubblewrap, ...), a container backend over `docker exec`;
`python -m workspaces.toolhost` is the process itself.
"""

from workspaces.toolhost.client import (
    ChannelOpener,
    SubprocessChannel,
    ToolHost,
    ToolHostChannel,
    ToolHostProcess,
    toolhost_command,
)

__all__ = [
    "ChannelOpener",
    "SubprocessChannel",
    "ToolHost",
    "ToolHostChannel",
    "ToolHostProcess",
    "toolhost_command",
]
