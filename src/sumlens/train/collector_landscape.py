"""Landscape weights of :class:`sumlens.SummaryCollector`: ``<summary_dir>/ckpt_dir``.

The backbone's weights are saved at every step (or epoch) named in the settings'
``intervals``, as ``<BackboneClass>_<n>_<unit>.ckpt``, and ``train_metadata.json`` at the
end of training (its content and the settings are the contract of
:mod:`sumlens._landscape_settings`). Each file is written once (never again once it
exists), under an exclusive lock file (``<file>.lock``, removed afterwards), so that
several processes may share the directory. The weights are checkpoints, with the
checkpoint rule (:func:`sumlens.train.save_checkpoint`: mode 0400, as MindSpore);
``train_metadata.json`` gets the mode the umask leaves, as the run's event files, or 0400
with ``owner_only``.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from typing import Any

from sumlens._landscape_settings import METADATA_FILE, metadata
from sumlens._log import logger
from sumlens.train.checkpoint import save_checkpoint

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


@contextlib.contextmanager
def file_lock(path: str) -> Iterator[None]:
    """An exclusive lock on ``path + ".lock"`` (the lock file is removed afterwards)."""
    lock_path = path + ".lock"
    handle = open(lock_path, "a")  # noqa: SIM115 - closed below
    try:
        if fcntl is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        yield
    finally:
        if fcntl is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        handle.close()
        with contextlib.suppress(OSError):
            os.remove(lock_path)


class LandscapeSaver:
    """Saves the backbone's weights at interval steps/epochs; writes ``train_metadata.json``."""

    def __init__(self, ckpt_dir: str, config: dict[str, Any], owner_only: bool = False) -> None:
        """``config``: the collector's checked settings
        (:func:`sumlens._landscape_settings.check_collect_landscape`); ``owner_only``: the
        metadata file only its owner's (0400)."""
        self.ckpt_dir = ckpt_dir
        self.config = config
        self.owner_only = owner_only
        self.unit: str = config["unit"]
        self.members = {n for interval in config["intervals"] for n in interval}
        self.files: dict[int, str] = {}

    def wanted(self, number: int) -> bool:
        return number in self.members

    def save(self, network: Any, number: int) -> None:
        """Save ``network``'s state dict as ``<Class>_<n>_<unit>.ckpt`` (once)."""
        name = f"{type(network).__name__}_{number}_{self.unit}.ckpt"
        path = os.path.abspath(os.path.join(self.ckpt_dir, name))
        with file_lock(path):
            if not os.path.exists(path):
                save_checkpoint(network.state_dict(), path)  # mode 0400: a checkpoint
        self.files[number] = path

    def write_metadata(self, step_per_epoch: int) -> str:
        """``train_metadata.json`` (written only if it does not exist yet)."""
        path = os.path.join(self.ckpt_dir, METADATA_FILE)
        missing = sorted(self.members - set(self.files))
        if missing:
            logger.warning(
                "landscape intervals name %s %s that training never reached; "
                "generating the landscape from train_metadata.json will fail",
                self.unit,
                missing,
            )
        data = metadata(self.config, self.files, step_per_epoch)
        with file_lock(path):
            if not os.path.exists(path):
                mode = 0o600 if self.owner_only else 0o666
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(data, handle, indent=2)
                if self.owner_only:
                    os.chmod(path, 0o400)
        return path
