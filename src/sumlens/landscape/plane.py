"""A plane in weight space: the weights at its origin and the two directions spanning it.

The loss at plane coordinates ``(a, b)`` is the loss of ``base + a * v + b * w``, where
``v`` and ``w`` hold only the entries that move (the filtered set); every other entry
of ``base`` (buffers, non-F parameters) is loaded unchanged. A plane is what workers
need besides their own network and data, so it travels as a safetensors file (local
worker processes) or a dict of arrays (Ray); its digest keys the block cache.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Mapping

import numpy as np
from safetensors.numpy import load_file, save_file

_V, _W = "__direction_v__.", "__direction_w__."


@dataclasses.dataclass(frozen=True)
class Plane:
    """``base`` (every entry of a snapshot) and float32 directions ``v``, ``w`` (moving entries)."""

    base: dict[str, np.ndarray]
    v: dict[str, np.ndarray]
    w: dict[str, np.ndarray]

    @classmethod
    def create(
        cls,
        base: Mapping[str, np.ndarray],
        v: Mapping[str, np.ndarray],
        w: Mapping[str, np.ndarray],
    ) -> Plane:
        """A plane with contiguous arrays; the directions cast to float32 (what is evaluated)."""
        if set(v) != set(w) or not set(v) <= set(base):
            raise ValueError("v and w must name the same entries, all of them in base")
        return cls(
            {k: np.asarray(a, order="C") for k, a in base.items()},
            {k: np.asarray(a, np.float32, order="C") for k, a in v.items()},
            {k: np.asarray(a, np.float32, order="C") for k, a in w.items()},
        )

    def digest(self) -> str:
        """SHA-256 over every name, dtype, shape and value."""
        digest = hashlib.sha256()
        for prefix, arrays in (("base.", self.base), (_V, self.v), (_W, self.w)):
            for name, array in arrays.items():
                digest.update(f"{prefix}{name}|{array.dtype.str}|{array.shape}|".encode())
                digest.update(array.tobytes())
        return digest.hexdigest()

    def to_arrays(self) -> dict[str, np.ndarray]:
        """One flat dict (directions under reserved prefixes), e.g. for ``ray.put``."""
        flat = dict(self.base)
        flat.update({_V + k: a for k, a in self.v.items()})
        flat.update({_W + k: a for k, a in self.w.items()})
        return flat

    @classmethod
    def from_arrays(cls, flat: Mapping[str, np.ndarray]) -> Plane:
        """The inverse of :meth:`to_arrays`."""
        base = {k: a for k, a in flat.items() if not k.startswith((_V, _W))}
        v = {k.removeprefix(_V): a for k, a in flat.items() if k.startswith(_V)}
        w = {k.removeprefix(_W): a for k, a in flat.items() if k.startswith(_W)}
        return cls(base, v, w)

    def save(self, path: str) -> None:
        """Write the plane as a safetensors file (atomically: temp file, then rename)."""
        tmp = f"{path}.{os.getpid()}.tmp"
        save_file(self.to_arrays(), tmp)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str) -> Plane:
        return cls.from_arrays(load_file(path))
