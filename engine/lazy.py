"""Imports on first use, so that importing a package or a catalogue for one light name does not
import its heavy modules (torch) too: package attributes (PEP 562) and "module:Name" paths."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str, homes: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, whose name `n` lives in module `homes[n]`."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module '{package}' has no attribute '{name}'")
        value = getattr(importlib.import_module(homes[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *homes})

    return __getattr__, __dir__


def load_object(path: str) -> Any:
    """The object a "module:Name" path names, importing its module."""
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)
