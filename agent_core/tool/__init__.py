"""Tools: the tool layer of agent_core.

The tool interface, function tools, the toolkit with its tool groups, and the built-in tools.
The built-in tools (with the shell analysis behind Bash's permission hooks) load on first use:
many processes handle tools or tool results without ever running a built-in one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_core._lazy import lazy_names

# `ToolChoice` belongs to the model interface; the spec imports it from the tool package.
from agent_core.model.base import ToolChoice
from agent_core.tool.base import ToolBase, ToolChunk
from agent_core.tool.function import FunctionTool
from agent_core.tool.group import ToolGroup
from agent_core.tool.toolkit import Toolkit

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


__getattr__ = lazy_names(__name__, dict.fromkeys(_BUILTIN, "agent_core.tool.builtin"))


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
