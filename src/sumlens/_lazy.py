"""Names of a package imported on first use (PEP 562's module ``__getattr__``).

A package whose public names live in heavy modules (torch, the writer's compiled
kernels) exposes them this way, so that importing the package, or a light module inside
it, loads none of that until a name is asked for.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``names`` maps each name to its module.

    A name is imported from its module when first asked for, then kept in the package,
    so later lookups do not come here.
    """

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(names[name]), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
