"""The built-in callbacks, one per module (the protocol is in :mod:`sumlens.train.callback`)."""

from sumlens.train.callbacks.checkpoint_config import CheckpointConfig
from sumlens.train.callbacks.early_stopping import EarlyStopping
from sumlens.train.callbacks.history import History
from sumlens.train.callbacks.lambda_callback import LambdaCallback
from sumlens.train.callbacks.loss_monitor import LossMonitor
from sumlens.train.callbacks.lr_scheduler import LearningRateScheduler
from sumlens.train.callbacks.model_checkpoint import ModelCheckpoint
from sumlens.train.callbacks.monitor import MonitorCallback
from sumlens.train.callbacks.reduce_lr import ReduceLROnPlateau
from sumlens.train.callbacks.time_monitor import TimeMonitor

__all__ = [
    "CheckpointConfig",
    "EarlyStopping",
    "History",
    "LambdaCallback",
    "LearningRateScheduler",
    "LossMonitor",
    "ModelCheckpoint",
    "MonitorCallback",
    "ReduceLROnPlateau",
    "TimeMonitor",
]
