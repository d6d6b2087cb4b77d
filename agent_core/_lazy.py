"""Package names that load their module on first use (PEP 562 module `__getattr__`)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A `__getattr__` for `package` that imports each name of `homes` from its home module.

    Packages use it for names whose modules are heavy or import the package back: importing
    the package stays cheap, and the name resolves (and is cached by its module) when used.
    """

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(home), name)

    return __getattr__
