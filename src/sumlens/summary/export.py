"""``export_options={"tensor_format": "npy"}``: every recorded tensor also as a ``.npy`` file.

Files go to ``<log_dir>/export_<seconds>/tensor/<url-quoted tag>_<step>.npy`` (numpy's
format, original dtype and shape), as MindSpore lays them out, with the modes the umask
leaves as the record's event files (0400 in folders of mode 0700 with ``owner_only``, as
MindSpore). They are not bound by ``max_file_size``; a file the free space cannot hold
(header counted as 128 bytes) is not started.
"""

from __future__ import annotations

import errno
import os
import urllib.parse
from pathlib import Path

import numpy as np

from sumlens.io import storage
from sumlens.io.naming import npy_file_name
from sumlens.summary.items import Item, StepBatch

EXPORT_FORMATS = {"tensor_format": ("npy", None)}
"""The keys ``export_options`` may hold, and their allowed values."""
NPY_HEADER_ESTIMATE = 128


class NpyExporter:
    """Writes exported tensors under ``directory`` (created on first use); ``owner_only``:
    readable by their owner only (folders 0700, files 0400)."""

    def __init__(self, directory: Path, owner_only: bool = False) -> None:
        self.directory = directory
        self.owner_only = owner_only

    def __call__(self, batch: StepBatch, item: Item, value: np.ndarray) -> None:
        folder = self.directory / "tensor"
        mode = storage.dir_mode(self.owner_only)
        self.directory.mkdir(mode=mode, parents=True, exist_ok=True)  # each with the mode
        folder.mkdir(mode=mode, exist_ok=True)
        needed = value.nbytes + NPY_HEADER_ESTIMATE
        free = storage.free_disk_bytes(folder)  # via the module: one seam for tests
        if free < needed:
            raise OSError(
                errno.ENOSPC, f"no space left on the disk for {needed} bytes ({free} free)", folder
            )
        path = folder / npy_file_name(urllib.parse.quote(item.tag, safe=""), batch.step)
        partial = path.with_name(path.name + ".partial")
        try:  # written aside and renamed: a full disk never leaves a half file under the name
            mode = 0o600 if self.owner_only else 0o666
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
            with os.fdopen(os.open(partial, flags, mode), "wb") as handle:
                np.save(handle, value)
            if self.owner_only:
                os.chmod(partial, 0o400)
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)


def check_export_options(export_options: object) -> dict[str, str | None]:
    """Validate ``export_options``; return it as a plain dict (empty for None)."""
    if export_options is None:
        return {}
    if not isinstance(export_options, dict):
        raise TypeError(
            f"export_options must be None or a dict, got {type(export_options).__name__}"
        )
    for key, value in export_options.items():
        if not isinstance(key, str):
            raise TypeError(f"export_options keys must be str, got {type(key).__name__} {key!r}")
        if key not in EXPORT_FORMATS:
            raise ValueError(
                f"export_options key {key!r} is not supported; allowed: {sorted(EXPORT_FORMATS)}"
            )
        if value is not None and not isinstance(value, str):
            raise TypeError(
                f"export_options[{key!r}] must be a str or None, got {type(value).__name__}"
            )
        if value not in EXPORT_FORMATS[key]:
            raise ValueError(
                f"export_options[{key!r}]={value!r} is not supported; "
                f"allowed: {list(EXPORT_FORMATS[key])}"
            )
    return dict(export_options)
