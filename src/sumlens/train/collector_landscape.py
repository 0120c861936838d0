"""Landscape weights of :class:`sumlens.SummaryCollector`: ``<summary_dir>/ckpt_dir``.

Each file is written once, under an exclusive lock file, so that several processes may
share the directory (spec summary-collector.md section 7).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterator
from typing import Any

from sumlens._log import logger

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


def read_only(path: str) -> None:
    with contextlib.suppress(OSError):
        os.chmod(path, stat.S_IRUSR)


class LandscapeSaver:
    """Saves the backbone's weights at interval steps/epochs; writes ``train_metadata.json``."""

    def __init__(self, ckpt_dir: str, config: dict[str, Any]) -> None:
        self.ckpt_dir = ckpt_dir
        self.config = config
        self.unit: str = config["unit"]
        self.members = {n for interval in config["intervals"] for n in interval}
        self.file_map: dict[str, str] = {}

    def wanted(self, number: int) -> bool:
        return number in self.members

    def save(self, network: Any, number: int) -> None:
        """Save ``network``'s state dict as ``<Class>_<n>_<unit>.ckpt`` (once)."""
        from sumlens.train.checkpoint import save_checkpoint

        name = f"{type(network).__name__}_{number}_{self.unit}.ckpt"
        path = os.path.abspath(os.path.join(self.ckpt_dir, name))
        with file_lock(path):
            if not os.path.exists(path):
                save_checkpoint(network.state_dict(), path)
                read_only(path)
        self.file_map[str(number)] = path

    def write_metadata(self, step_per_epoch: int) -> str:
        """``train_metadata.json`` (written only if it does not exist yet)."""
        path = os.path.join(self.ckpt_dir, "train_metadata.json")
        missing = sorted(self.members - {int(n) for n in self.file_map})
        if missing:
            logger.warning(
                "landscape intervals name %s %s that training never reached; "
                "generating the landscape from train_metadata.json will fail",
                self.unit,
                missing,
            )
        data = {
            "epoch_group": {str(i): list(v) for i, v in enumerate(self.config["intervals"])},
            "model_params_file_map": dict(self.file_map),
            "step_per_epoch": step_per_epoch,
            "unit": self.unit,
            "num_samples": self.config["num_samples"],
            "landscape_size": self.config["landscape_size"],
            "create_landscape": dict(self.config["create_landscape"]),
        }
        with file_lock(path):
            if not os.path.exists(path):
                with open(path, "w", encoding="utf-8") as handle:
                    json.dump(data, handle, indent=2)
                read_only(path)
        return path
