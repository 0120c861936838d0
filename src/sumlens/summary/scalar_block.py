"""Scalar-only steps, gathered on the caller's thread and written as one block.

Most ``record`` calls carry a few scalars and nothing else. For those the caller does
not build per-step objects at all (each would cost allocation, garbage-collector work
and a queue hand-off); it appends the step, wall time, tag ids and float32 values to
typed ``array.array`` columns. The writer takes a whole block at once and serializes it
with one compiled pass (:mod:`sumlens.summary._scalar_jit`) that releases the GIL.
"""

from __future__ import annotations

import threading
from array import array

import numpy as np

BLOCK_STEPS = 8192
"""A block is handed to the writer once it holds this many steps."""
BLOCK_SECONDS = 0.25
"""... or once its first step is this old, so data reaches the disk promptly."""


class TagTable:
    """Tag name <-> small integer id; grows only, so the writer can read it without a lock."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.names: list[str] = []
        self._encoded = bytearray()
        self._offsets = [0]

    def id_of(self, name: str) -> int:
        """The id of ``name``, assigning the next one to a new name."""
        tag_id = self.ids.get(name)
        if tag_id is None:
            tag_id = self.ids[name] = len(self.names)
            self.names.append(name)
        return tag_id

    def encoded(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        """UTF-8 bytes of the first ``count`` tags and their offsets (writer thread)."""
        for name in self.names[len(self._offsets) - 1 : count]:
            self._encoded += name.encode("utf-8")
            self._offsets.append(len(self._encoded))
        data = np.frombuffer(bytes(self._encoded) or b"\0", dtype=np.uint8)
        return data, np.asarray(self._offsets[: count + 1], dtype=np.int64)


class ScalarBlock:
    """Columns of scalar-only steps: per step (step, wall time, count), per value (tag, value)."""

    __slots__ = ("counts", "started", "steps", "tags", "values", "walls")

    def __init__(self, started: float) -> None:
        self.started = started
        self.steps = array("q")
        self.walls = array("d")
        self.counts = array("i")
        self.tags = array("i")
        self.values = array("f")

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def pending_bytes(self) -> int:
        """Memory held by the block (for the writer's queue bound)."""
        return 64 + 20 * len(self.steps) + 8 * len(self.tags)


class ScalarCollector:
    """The caller-side open block of one record, and its hand-off rules.

    ``add_step`` appends a step; it returns a full (or old) block for the caller to
    submit. ``take`` empties the open block (at flush/close, or when the writer finds it
    idle), under a lock the caller holds only while appending.
    """

    def __init__(self) -> None:
        self.tags = TagTable()
        self._lock = threading.Lock()
        self._block: ScalarBlock | None = None

    def add_step(self, step: int, wall: float, scalars: dict[str, float]) -> ScalarBlock | None:
        """Append one step's scalars; return the block if it is due for writing."""
        id_of = self.tags.id_of
        with self._lock:
            block = self._block
            if block is None:
                block = self._block = ScalarBlock(wall)
            block.steps.append(step)
            block.walls.append(wall)
            block.counts.append(len(scalars))
            for name, value in scalars.items():
                block.tags.append(id_of(name))
                block.values.append(value)
            if len(block) < BLOCK_STEPS and wall - block.started < BLOCK_SECONDS:
                return None
            self._block = None
            return block

    def take(self, timeout: float = 1.0) -> ScalarBlock | None:
        """Remove and return the open block (None if empty).

        Gives up after ``timeout`` seconds: a signal handler that interrupted this thread
        inside :meth:`add_step` must not wait for itself (that block's last step is lost).
        """
        if not self._lock.acquire(timeout=timeout):
            return None
        try:
            block, self._block = self._block, None
            return block
        finally:
            self._lock.release()

    def reset_after_fork(self) -> None:
        """A forked child's copy: fresh lock, no block."""
        self._lock = threading.Lock()
        self._block = None


def encode_scalar_block(
    block: ScalarBlock, tags: TagTable, file_format: str
) -> tuple[np.ndarray, np.ndarray]:
    """Framed events of a block (bytes, and the end offset of each record)."""
    from sumlens.summary import _scalar_jit as jit

    tag_ids = np.frombuffer(block.tags, dtype=np.int32)
    tag_bytes, offsets = tags.encoded(int(tag_ids.max()) + 1 if tag_ids.size else 0)
    longest = int(np.diff(offsets).max()) if offsets.size > 1 else 0
    per_value = jit.MAX_OVERHEAD_PER_VALUE + longest
    tensorboard = file_format == "tensorboard"
    events = tag_ids.size if tensorboard else len(block.steps)
    out = np.empty(events * jit.MAX_OVERHEAD_PER_EVENT + tag_ids.size * per_value, np.uint8)
    ends = np.empty(events, dtype=np.int64)
    count = jit.encode_block(
        np.frombuffer(block.steps, dtype=np.int64),
        np.frombuffer(block.walls, dtype=np.float64).view(np.uint64),
        np.frombuffer(block.counts, dtype=np.int32),
        tag_ids,
        np.frombuffer(block.values, dtype=np.float32).view(np.uint32),
        tag_bytes,
        offsets,
        jit.TB_SCALAR_FIELD if tensorboard else jit.MS_SCALAR_FIELD,
        tensorboard,
        out,
        ends,
        jit.CRC_TABLE,
    )
    return out, ends[:count]
