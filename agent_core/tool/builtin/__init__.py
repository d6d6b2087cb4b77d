"""Built-in tools of agent_core's tool layer: shell, files, search and the task list.

Every file and shell tool is bound to a workspace directory (`cwd`) against which relative
paths resolve. Whether a call may run is decided before execution by the permission engine,
through each tool's permission hooks; the tools themselves execute what was allowed.
"""

from agent_core.tool.builtin.bash import Bash
from agent_core.tool.builtin.edit import Edit
from agent_core.tool.builtin.glob import Glob
from agent_core.tool.builtin.grep import Grep
from agent_core.tool.builtin.read import Read
from agent_core.tool.builtin.tasks import TaskCreate, TaskGet, TaskList, TaskUpdate
from agent_core.tool.builtin.write import Write

__all__ = [
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
]
