"""``export_options={"tensor_format": "npy"}``: every recorded tensor also as a ``.npy`` file.

Files go to ``<log_dir>/export_<seconds>/tensor/<url-quoted tag>_<step>.npy`` (numpy's
format, original dtype and shape, mode 0400), as MindSpore lays them out. They are not
bound by ``max_file_size``; a file the free space cannot hold (header counted as 128
bytes) is not started.
"""

from __future__ import annotations

import errno
import os
import urllib.parse
from pathlib import Path

import numpy as np

from sumlens.io import storage
from sumlens.summary.items import Item, StepBatch

EXPORT_FORMATS = {"tensor_format": ("npy", None)}
"""The keys ``export_options`` may hold, and their allowed values."""
NPY_HEADER_ESTIMATE = 128


class NpyExporter:
    """Writes exported tensors under ``directory`` (created on first use)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def __call__(self, batch: StepBatch, item: Item, value: np.ndarray) -> None:
        folder = self.directory / "tensor"
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        needed = value.nbytes + NPY_HEADER_ESTIMATE
        free = storage.free_disk_bytes(folder)  # via the module: one seam for tests
        if free < needed:
            raise OSError(
                errno.ENOSPC, f"no space left on the disk for {needed} bytes ({free} free)", folder
            )
        path = folder / f"{urllib.parse.quote(item.tag, safe='')}_{batch.step}.npy"
        partial = path.with_name(path.name + ".partial")
        try:  # written aside and renamed: a full disk never leaves a half file under the name
            with open(partial, "wb") as handle:
                np.save(handle, value)
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
