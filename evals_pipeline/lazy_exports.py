"""A package's public names loaded from their modules when first used (PEP 562 `__getattr__`):
its `__init__` then costs nothing to import for code that needs one light name of it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(package: str, modules: Mapping[str, str]) -> Callable[[str], Any]:
    """The package's module `__getattr__`: each name in `modules` read from the submodule it
    maps to, imported on first use."""

    def __getattr__(name: str) -> Any:
        if name in modules:
            return getattr(import_module(f"{package}.{modules[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
