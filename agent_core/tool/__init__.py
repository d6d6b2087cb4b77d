"""Tools: the tool layer of agent_core.

The tool interface, function tools, the toolkit with its tool groups, and the built-in tools.
"""

# `ToolChoice` belongs to the model interface; the spec imports it from the tool package.
from agent_core.model.base import ToolChoice
from agent_core.tool.base import ToolBase, ToolChunk
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
