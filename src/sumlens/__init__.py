"""sumlens: record what training does (MindSpore summary or TensorBoard format) and see it.

The public names are imported on first use: the training API needs torch and the writer
Pillow, while ``import sumlens`` (and ``sumlens.io``, the readers' entry point) need neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sumlens._lazy import lazy_names
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
    from sumlens.writer import SummaryWriter, finish, init, log

__all__ = ["SummaryLandscape", "SummaryRecord", "__version__", "logger"]
__all__ += ["SummaryWriter", "finish", "init", "log"]  # torch's writer API, wandb's style
__all__ += [  # training
    "Callback",
    "DynamicLossScaleManager",
    "FixedLossScaleManager",
    "Model",
    "RunContext",
    "SummaryCollector",
]
__all__ += [  # built-in callbacks
    "EarlyStopping",
    "History",
    "LambdaCallback",
    "LearningRateScheduler",
    "LossMonitor",
    "ReduceLROnPlateau",
    "TimeMonitor",
]
__all__ += [  # checkpoints
    "CheckpointConfig",
    "ModelCheckpoint",
    "load_checkpoint",
    "load_param_into_net",
    "save_checkpoint",
]

# The public names but ``__version__`` and ``logger`` come from ``sumlens.train`` on first
# use, except these.
_NOT_FROM_TRAIN = {
    "SummaryLandscape": "sumlens.landscape.summary_landscape",
    "SummaryRecord": "sumlens.summary",
    "SummaryWriter": "sumlens.writer",
    "finish": "sumlens.writer",
    "init": "sumlens.writer",
    "log": "sumlens.writer",
}

__getattr__ = lazy_names(
    __name__,
    {
        name: _NOT_FROM_TRAIN.get(name, "sumlens.train")
        for name in __all__
        if name not in ("__version__", "logger")
    },
)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext sumlens``: register the ``%sumlens`` line magic, which shows the dashboard
    under the cell (:mod:`sumlens.notebook`, imported only now: ``import sumlens`` stays
    light)."""
    from sumlens.notebook import load_magic

    load_magic(ipython)
