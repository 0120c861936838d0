"""Training support: checkpoint save/load (Model and the callbacks join here)."""

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

__all__ = [
    "CheckpointError",
    "CheckpointFormatError",
    "CheckpointIntegrityError",
    "CheckpointMismatchError",
    "CheckpointSaveHandle",
    "load_checkpoint",
    "load_param_into_net",
    "save_checkpoint",
    "wait_for_pending_saves",
]
