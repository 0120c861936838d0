"""Block results on disk, so that an interrupted landscape resumes where it stopped.

Each landscape gets a directory named by a key over everything that decides its values:
the plane (origin weights and both directions, hence the snapshots and the
normalisation), the evaluated coordinates (hence the grid and the path), the samples
(a digest of the batches the workers scored), the evaluation mode and seed, and the
block size. A block is one ``.npy`` file of float64 heights, written to a temporary
name and renamed, so a kill leaves either the whole block or none of it. A changed
setting gives a new key; old directories are left for ``SummaryLandscape.clean_ckpt``.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import numpy as np

FORMAT_VERSION = 1


def cache_key(plane_digest: str, points: np.ndarray, settings: dict[str, Any]) -> str:
    """A hex key over the plane, the coordinates and the JSON-able ``settings``."""
    digest = hashlib.sha256(f"sumlens-landscape-v{FORMAT_VERSION}|{plane_digest}|".encode())
    digest.update(np.ascontiguousarray(points, dtype=np.float64).tobytes())
    digest.update(json.dumps(settings, sort_keys=True).encode())
    return digest.hexdigest()


class BlockCache:
    """Heights of one landscape's blocks in ``root/<key[:32]>`` (kept nowhere if root is None)."""

    def __init__(self, root: str | None, key: str, description: dict[str, Any]) -> None:
        self.directory = None if root is None else os.path.join(root, key[:32])
        if self.directory is not None:
            os.makedirs(self.directory, exist_ok=True)
            manifest = os.path.join(self.directory, "manifest.json")
            if not os.path.exists(manifest):
                self._atomic_write(manifest, json.dumps(description, indent=1).encode())

    def _path(self, block: int) -> str:
        assert self.directory is not None
        return os.path.join(self.directory, f"block_{block:06d}.npy")

    @staticmethod
    def _atomic_write(path: str, data: bytes) -> None:
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)

    def get(self, block: int, size: int) -> np.ndarray | None:
        """The saved heights of ``block`` if present and of the right length."""
        if self.directory is None:
            return None
        try:
            heights = np.load(self._path(block), allow_pickle=False)
        except (OSError, ValueError):
            return None
        return heights if heights.shape == (size,) and heights.dtype == np.float64 else None

    def put(self, block: int, heights: np.ndarray) -> None:
        if self.directory is None:
            return
        tmp = f"{self._path(block)}.{os.getpid()}.tmp"
        with open(tmp, "wb") as handle:
            np.save(handle, np.asarray(heights, dtype=np.float64), allow_pickle=False)
        os.replace(tmp, self._path(block))
