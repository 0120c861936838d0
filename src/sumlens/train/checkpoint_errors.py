"""Errors raised when a checkpoint file can't be read back as what was saved."""

from __future__ import annotations

__all__ = [
    "CheckpointError",
    "CheckpointFormatError",
    "CheckpointIntegrityError",
    "CheckpointMismatchError",
]


class CheckpointError(ValueError):
    """A checkpoint file can't be loaded; the message names the file."""


class CheckpointFormatError(CheckpointError):
    """The file is not a sumlens/safetensors checkpoint (e.g. a pickle), or its header is bad."""


class CheckpointIntegrityError(CheckpointError):
    """Decryption or verification failed: the key is wrong or the file is damaged/tampered."""


class CheckpointMismatchError(RuntimeError, ValueError):
    """A checkpoint value does not fit the network parameter (shape or dtype)."""
