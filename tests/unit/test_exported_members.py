"""Every package re-exports its public names through an explicit, importable `__all__`."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

ROOTS = ["agent_core", "workspaces", "actors", "serve"]


def _packages() -> list[str]:
    names = []
    for root in ROOTS:
        module = importlib.import_module(root)
        names.append(root)
        names += [
            info.name
            for info in pkgutil.walk_packages(module.__path__, prefix=f"{root}.")
            if info.ispkg and not info.name.rsplit(".", 1)[-1].startswith("_")
        ]
    return names


@pytest.mark.parametrize("package", _packages())
def test_package_declares_importable_all(package: str) -> None:
    module = importlib.import_module(package)
    if package == "serve.routes":  # a namespace of route modules, nothing to re-export
        return
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{package} has no __all__"
    assert len(set(exported)) == len(exported)
    for name in exported:
        assert hasattr(module, name), f"{package}.__all__ names missing {name!r}"
