"""sumlens: record what training does (MindSpore summary or TensorBoard format) and see it.

The public names are imported on first use, so ``import sumlens.io`` (the viewer's and a
reader's entry point) does not pay for the writer's imports (Pillow, the encoders).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from sumlens._log import logger
from sumlens._version import __version__

if TYPE_CHECKING:
    from sumlens.summary import SummaryRecord
    from sumlens.train import load_checkpoint, load_param_into_net, save_checkpoint

_LAZY = {
    "SummaryRecord": "sumlens.summary",
    "load_checkpoint": "sumlens.train",
    "load_param_into_net": "sumlens.train",
    "save_checkpoint": "sumlens.train",
}

__all__ = [
    "SummaryRecord",
    "__version__",
    "load_checkpoint",
    "load_param_into_net",
    "logger",
    "save_checkpoint",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'sumlens' has no attribute {name!r}")
