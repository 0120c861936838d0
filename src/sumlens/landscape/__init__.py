"""Loss landscapes: the ``LossLandscape`` value, ``SummaryLandscape`` and ``compute_landscape``.

``LossLandscape`` needs only numpy (SummaryRecord and the readers use it); the rest needs
torch and is imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from sumlens.landscape.builder import LossLandscape

if TYPE_CHECKING:
    from sumlens.landscape.compute import BlockDone, compute_landscape
    from sumlens.landscape.summary_landscape import SummaryLandscape

_LAZY = {
    "BlockDone": "sumlens.landscape.compute",
    "compute_landscape": "sumlens.landscape.compute",
    "SummaryLandscape": "sumlens.landscape.summary_landscape",
}

__all__ = ["BlockDone", "LossLandscape", "SummaryLandscape", "compute_landscape"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'sumlens.landscape' has no attribute {name!r}")
