"""sumlens: record what training does (MindSpore summary or TensorBoard format) and see it.

The public names are imported on first use: the training API needs torch and the writer
Pillow, while ``import sumlens`` (and ``sumlens.io``, the readers' entry point) need neither.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from sumlens._log import logger
from sumlens._version import __version__

if TYPE_CHECKING:
    from sumlens.landscape.summary_landscape import SummaryLandscape
    from sumlens.summary import SummaryRecord
    from sumlens.train import (
        Callback,
        CheckpointConfig,
        DynamicLossScaleManager,
        EarlyStopping,
        FixedLossScaleManager,
        History,
        LambdaCallback,
        LearningRateScheduler,
        LossMonitor,
        Model,
        ModelCheckpoint,
        ReduceLROnPlateau,
        RunContext,
        SummaryCollector,
        TimeMonitor,
        load_checkpoint,
        load_param_into_net,
        save_checkpoint,
    )

_LAZY = {
    "SummaryRecord": "sumlens.summary",
    "Callback": "sumlens.train",
    "CheckpointConfig": "sumlens.train",
    "DynamicLossScaleManager": "sumlens.train",
    "EarlyStopping": "sumlens.train",
    "FixedLossScaleManager": "sumlens.train",
    "History": "sumlens.train",
    "LambdaCallback": "sumlens.train",
    "LearningRateScheduler": "sumlens.train",
    "LossMonitor": "sumlens.train",
    "Model": "sumlens.train",
    "ModelCheckpoint": "sumlens.train",
    "ReduceLROnPlateau": "sumlens.train",
    "RunContext": "sumlens.train",
    "SummaryCollector": "sumlens.train",
    "SummaryLandscape": "sumlens.landscape.summary_landscape",
    "TimeMonitor": "sumlens.train",
    "load_checkpoint": "sumlens.train",
    "load_param_into_net": "sumlens.train",
    "save_checkpoint": "sumlens.train",
}

__all__ = [
    "Callback",
    "CheckpointConfig",
    "DynamicLossScaleManager",
    "EarlyStopping",
    "FixedLossScaleManager",
    "History",
    "LambdaCallback",
    "LearningRateScheduler",
    "LossMonitor",
    "Model",
    "ModelCheckpoint",
    "ReduceLROnPlateau",
    "RunContext",
    "SummaryCollector",
    "SummaryLandscape",
    "SummaryRecord",
    "TimeMonitor",
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
