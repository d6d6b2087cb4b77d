"""Tools: the tool layer of agent_core (the tool interface, function tools and the toolkit)."""

from agent_core.tool.base import ToolBase, ToolChunk
from agent_core.tool.function import FunctionTool
from agent_core.tool.toolkit import Toolkit

__all__ = ["FunctionTool", "ToolBase", "ToolChunk", "Toolkit"]
