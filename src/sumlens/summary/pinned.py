"""Reusable page-locked host buffers for asynchronous device-to-host copies.

A copy from the GPU that must not make the host wait needs page-locked ("pinned")
destination memory, and allocating it (``cudaHostAlloc``) costs more than the small copies
a training step makes (a loss, a learning rate, a small parameter for a histogram). So
buffers are taken from a pool by size class (powers of two), and the writer thread gives
each back once it has read the copy out of it. Large copies get a buffer of their own:
their allocation is small next to the copy, and pooling them would hold much memory.
"""

from __future__ import annotations

import threading
from typing import Any

POOLED_BYTES = 1 << 20
"""Copies up to this size use pooled buffers; larger ones allocate their own."""
SMALLEST_CLASS = 512
"""Bytes of the smallest buffer handed out."""
MAX_FREE_BYTES = 64 << 20
"""Bytes of free buffers the pool keeps; beyond, returned buffers are let go."""


def size_class(nbytes: int) -> int:
    """The buffer size serving ``nbytes``: the next power of two, at least the smallest."""
    return max(SMALLEST_CLASS, 1 << max(0, nbytes - 1).bit_length())


class PinnedPool:
    """Free host buffers by size class; ``pin=False`` gives ordinary memory (no CUDA)."""

    def __init__(self, pin: bool = True) -> None:
        self.pin = pin
        self.allocations = 0
        """Buffers allocated so far (what the pool exists to keep low)."""
        self._free: dict[int, list[Any]] = {}
        self._free_bytes = 0
        self._lock = threading.Lock()

    def take(self, nbytes: int) -> Any:
        """A uint8 host tensor of at least ``nbytes`` (``nbytes`` <= :data:`POOLED_BYTES`)."""
        size = size_class(nbytes)
        with self._lock:
            free = self._free.get(size)
            if free:
                self._free_bytes -= size
                return free.pop()
        import torch

        self.allocations += 1
        return torch.empty(size, dtype=torch.uint8, pin_memory=self.pin)

    def give_back(self, buffer: Any) -> None:
        """Return a buffer from :meth:`take` once nothing reads it any more."""
        size = buffer.numel()
        with self._lock:
            if self._free_bytes + size > MAX_FREE_BYTES:
                return
            self._free.setdefault(size, []).append(buffer)
            self._free_bytes += size

    @property
    def free_bytes(self) -> int:
        """Bytes of buffers waiting to be taken again."""
        return self._free_bytes


_pool: PinnedPool | None = None
_pool_lock = threading.Lock()


def pinned_pool() -> PinnedPool:
    """The process's pool of pinned buffers (created at the first device copy)."""
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = PinnedPool()
    return _pool
