"""Extra middlewares, tools and credential types for every session (`create_app`'s extensions).

A factory is an async callable called once per reply, `(user_id, agent_id, session_id)` —
a middleware factory may take the session's workspace as a fourth argument (a
`WorkspaceHandle`: the workspace lives in its workspace actor, maybe on another node) —
returning the middlewares (appended after Troupe's own) or tools (added to the basic group)
for that reply.

Sessions run in Ray actors, in other processes and on other nodes, so a factory cannot travel
as an object: `RuntimeSettings` carries its import path (`"package.module:qualname"`) and every
process imports it. `import_path` refuses what another process could not import (lambdas,
closures, functions of `__main__`), at configuration time rather than in an actor. Custom
credential classes (`create_app(extra_credentials=...)`) travel the same way: every process
that reads credentials registers them with `register_credential_types`.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from actors.workspaces.session_workspaces import WorkspaceHandle
from agent_core.credential import CredentialBase, register_credential
from agent_core.tool import ToolBase

if TYPE_CHECKING:
    # The middleware interface loads with the agent loop, not where extensions are configured.
    from agent_core.middleware import MiddlewareBase

AgentMiddlewareFactory = Callable[..., Awaitable[list["MiddlewareBase"]]]
"""`async (user_id, agent_id, session_id[, workspace]) -> list[MiddlewareBase]`."""
AgentToolFactory = Callable[[str, str, str], Awaitable[list[ToolBase]]]
"""`async (user_id, agent_id, session_id) -> list[ToolBase]`."""


def import_path(factory: Callable[..., Any]) -> str:
    """Return the `module:qualname` path other processes import `factory` by.

    Raises:
        ValueError: `factory` is not importable by that path (a lambda, a closure, a function
            of `__main__`, a callable instance).
    """
    module = getattr(factory, "__module__", None)
    qualname = getattr(factory, "__qualname__", None)
    if not module or not qualname or module == "__main__" or "<" in qualname:
        raise ValueError(
            f"{factory!r} cannot be imported by another process: sessions run in Ray actors, "
            "so agent factories must be module-level functions of an importable module"
        )
    path = f"{module}:{qualname}"
    if load(path) is not factory:
        raise ValueError(f"{path} does not import back as {factory!r}")
    return path


@functools.cache
def load(path: str) -> Callable[..., Any]:
    """Import the callable at `module:qualname`.

    Raises:
        ValueError: the path is malformed or names nothing callable.
    """
    module_name, _, qualname = path.partition(":")
    if not module_name or not qualname:
        raise ValueError(f"{path!r} is not a 'module:qualname' path")
    try:
        target: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot import {path!r}: {exc}") from exc
    if not callable(target):
        raise ValueError(f"{path!r} is not callable")
    return target  # type: ignore[no-any-return]


def register_credential_types(paths: Sequence[str]) -> None:
    """Import the credential classes at `paths` and register them (idempotent).

    Raises:
        ValueError: a path does not import, names no `CredentialBase` subclass, or its class
            has no `type` literal or takes the `type` of another class.
    """
    for path in paths:
        cls = load(path)
        if not (isinstance(cls, type) and issubclass(cls, CredentialBase)):
            raise ValueError(f"{path!r} is not a CredentialBase subclass")
        register_credential(cls)


@dataclass(frozen=True)
class AgentExtensions:
    """The factories of the runtime, by import path; each process imports them on first use."""

    middlewares: str | None = None
    tools: str | None = None

    async def build(
        self, user_id: str, agent_id: str, session_id: str, workspace: WorkspaceHandle
    ) -> tuple[list[MiddlewareBase], list[ToolBase]]:
        """The extra middlewares and tools of one reply.

        Raises:
            ValueError: a factory cannot be imported.
            Exception: whatever a factory raises.
        """
        middlewares: list[MiddlewareBase] = []
        tools: list[ToolBase] = []
        if self.middlewares:
            factory = load(self.middlewares)
            args: tuple[Any, ...] = (user_id, agent_id, session_id)
            if _positional_count(factory) >= 4:
                args = (*args, workspace)
            middlewares = list(await factory(*args))
        if self.tools:
            tools = list(await load(self.tools)(user_id, agent_id, session_id))
        return middlewares, tools


def _positional_count(func: Callable[..., Any]) -> int:
    parameters = inspect.signature(func).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return 4
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(p.kind in positional for p in parameters)
