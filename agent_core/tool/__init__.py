"""Tools: the tool layer of agent_core.

The tool interface, function tools, the toolkit with its tool groups, and the built-in tools.
The interface loads eagerly; function tools, groups, the toolkit (with the skill loaders and
argument validation it reaches) and the built-in tools (with the shell analysis behind Bash's
permission hooks) load on first use: many processes handle tools or tool results without
ever running one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_core._lazy import lazy_names

# `ToolChoice` belongs to the model interface; the spec imports it from the tool package.
from agent_core.model.base import ToolChoice
from agent_core.tool.base import ToolBase, ToolChunk

if TYPE_CHECKING:
    from agent_core.tool.builtin import (
        Bash,
        Edit,
        Glob,
        Grep,
        Read,
        TaskCreate,
        TaskGet,
        TaskList,
        TaskUpdate,
        Write,
    )
    from agent_core.tool.function import FunctionTool
    from agent_core.tool.group import ToolGroup
    from agent_core.tool.toolkit import Toolkit

_BUILTIN = frozenset(
    {
        "Bash",
        "Edit",
        "Glob",
        "Grep",
        "Read",
        "TaskCreate",
        "TaskGet",
        "TaskList",
        "TaskUpdate",
        "Write",
    }
)


__getattr__ = lazy_names(
    __name__,
    {
        "FunctionTool": "agent_core.tool.function",
        "ToolGroup": "agent_core.tool.group",
        "Toolkit": "agent_core.tool.toolkit",
        **dict.fromkeys(_BUILTIN, "agent_core.tool.builtin"),
    },
)


__all__ = [
    "Bash",
    "Edit",
    "FunctionTool",
    "Glob",
    "Grep",
    "Read",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskUpdate",
    "ToolBase",
    "ToolChoice",
    "ToolChunk",
    "ToolGroup",
    "Toolkit",
    "Write",
]
