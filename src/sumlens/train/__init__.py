"""Training: ``Model``, the callback protocol and built-in callbacks, checkpoints."""

from sumlens.train.callback import Callback, CallbackList, RunContext, RunParams
from sumlens.train.callbacks import (
    CheckpointConfig,
    EarlyStopping,
    History,
    LambdaCallback,
    LearningRateScheduler,
    LossMonitor,
    ModelCheckpoint,
    ReduceLROnPlateau,
    TimeMonitor,
)
from sumlens.train.checkpoint import (
    CheckpointSaveHandle,
    load_checkpoint,
    load_param_into_net,
    save_checkpoint,
    wait_for_pending_saves,
)
from sumlens.train.checkpoint_errors import (
    CheckpointError,
    CheckpointFormatError,
    CheckpointIntegrityError,
    CheckpointMismatchError,
)
from sumlens.train.loss_scale import (
    DynamicLossScaleManager,
    FixedLossScaleManager,
    LossScaleManager,
)
from sumlens.train.model import Model
from sumlens.train.summary_collector import SummaryCollector

__all__ = [
    "Callback",
    "CallbackList",
    "CheckpointConfig",
    "CheckpointError",
    "CheckpointFormatError",
    "CheckpointIntegrityError",
    "CheckpointMismatchError",
    "CheckpointSaveHandle",
    "DynamicLossScaleManager",
    "EarlyStopping",
    "FixedLossScaleManager",
    "History",
    "LambdaCallback",
    "LearningRateScheduler",
    "LossMonitor",
    "LossScaleManager",
    "Model",
    "ModelCheckpoint",
    "ReduceLROnPlateau",
    "RunContext",
    "RunParams",
    "SummaryCollector",
    "TimeMonitor",
    "load_checkpoint",
    "load_param_into_net",
    "save_checkpoint",
    "wait_for_pending_saves",
]
