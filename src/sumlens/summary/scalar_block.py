"""Scalar-only steps, handed over by the caller as they are and written as one block.

Most ``record`` calls carry a few scalars and nothing else. For those the caller does as
little as it can: it appends one ``(step, wall time, {tag: value})`` row to a deque (after a
training step the caches are cold, and every extra object or call costs microseconds there).
Scalars logged one call each, as torch's ``add_scalar`` logs them, join the newest row of
their step (:meth:`ScalarCollector.add_value`): with a row per value, the writer thread's
work per row (holding the GIL) made ten scalars a step cost the caller 4.4 us each, 0.8
joined (``benchmarks/bench_write.py``, scalar10). The writer thread takes the rows at each
wake-up, packs them into columns and serializes them with one compiled pass
(:mod:`sumlens.summary._scalar_jit`) that releases the GIL. Before a step with other values
the caller cuts the rows it has into a block of their own, so the file keeps recording order
(see :class:`ScalarCollector`).
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque

import numpy as np

BLOCK_STEPS = 8192
"""Rows at which the caller hands them over itself (through the writer's bounded queue)."""
BLOCK_SECONDS = 0.25
"""How old rows may get before the writer takes them (its wake-up period)."""
ROW_BYTES = 64 + 32 + 24 + 8 + 8
"""Memory of one row besides its dict: the tuple, the step, the wall time, two list slots."""
VALUE_BYTES = 24
"""Memory of one scalar value (a Python float) in a row's dict."""
JOIN_SECONDS = 0.1
"""How long after a row began a scalar of the same step given without a wall time may join
it (taking the row's time): the same step's values, logged one after another."""


class TagTable:
    """Tag name <-> small integer id, assigned by the writer thread as it meets new tags."""

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
    """Scalar-only steps in recording order: ``(step, wall time, {tag: value})`` rows.

    ``queued``: handed over through the writer's queue, so counted in its memory bound
    (False for rows the writer took itself).
    """

    __slots__ = ("queued", "rows")

    def __init__(self, rows: list[tuple[int, float, dict[str, float]]]) -> None:
        self.rows = rows
        self.queued = True

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def pending_bytes(self) -> int:
        """Memory the rows hold, for the writer's queue bound (asked of queued blocks only).

        The dicts are measured: a row's size grows with its tags.
        """
        sizes = sum(sys.getsizeof(row[2]) + VALUE_BYTES * len(row[2]) for row in self.rows)
        return 64 + ROW_BYTES * len(self.rows) + sizes


class ScalarCollector:
    """The caller's scalar-only rows not yet handed over, and the rule that keeps order.

    The caller appends a row per step without a lock (``deque.append`` is atomic), and
    joins a value to the newest row under :attr:`lock`. Rows leave only under the lock,
    oldest first, and together with what must be written around them: the caller cuts
    them into a block and queues it, then the step that follows, both under the lock; the
    writer, under the lock too, drains its queue and then takes the rows (newer than
    everything queued). So the file keeps recording order.
    """

    def __init__(self) -> None:
        self.tags = TagTable()
        self.lock = threading.Lock()
        self._rows: deque[tuple[int, float, dict[str, float]]] = deque()

    def add_step(self, step: int, wall: float, scalars: dict[str, float]) -> bool:
        """Append one step's scalars (the dict is kept: do not change it afterwards);
        True once :data:`BLOCK_STEPS` rows wait, for the caller to hand them over."""
        rows = self._rows
        rows.append((step, wall, scalars))
        return len(rows) >= BLOCK_STEPS

    def add_value(self, step: int, wall: float | None, tag: str, value: float) -> bool:
        """One scalar written on its own (torch's style: each call its step and time), joined
        to the newest row when that row is of the same step, does not hold ``tag`` yet and
        has the same wall time (``wall`` None: now, and a row begun up to
        :data:`JOIN_SECONDS` ago has it); else a row of its own. A step's ten scalars so
        become one row, as :meth:`add_step` makes them (one event in MindSpore's format;
        TensorBoard's has an event per scalar either way); the writer takes rows under
        :attr:`lock` (:meth:`take`), so a row is only changed while it waits. True once
        :data:`BLOCK_STEPS` rows wait, for the caller to hand them over."""
        now = time.time() if wall is None else wall
        rows = self._rows
        # Never wait for the lock: the writer holds it for a moment, and a signal handler
        # that interrupted this thread inside this block would wait for itself. Without
        # it the value starts a row of its own (appending needs no lock).
        if self.lock.acquire(blocking=False):
            try:
                if rows:
                    newest_step, newest_wall, scalars = rows[-1]
                    recent = wall is None and 0 <= now - newest_wall <= JOIN_SECONDS
                    joins = recent or now == newest_wall
                    if newest_step == step and joins and tag not in scalars:
                        scalars[tag] = value
                        return False
                rows.append((step, now, {tag: value}))
            finally:
                self.lock.release()
        else:
            rows.append((step, now, {tag: value}))
        return len(rows) >= BLOCK_STEPS

    def take(self) -> ScalarBlock | None:
        """Remove the waiting rows as a block (None if none); the caller holds :attr:`lock`."""
        rows = self._rows
        taken = []
        try:
            while True:
                taken.append(rows.popleft())
        except IndexError:
            pass
        return ScalarBlock(taken) if taken else None

    def reset_after_fork(self) -> None:
        """A forked child's copy: a fresh lock, no rows."""
        self.lock = threading.Lock()
        self._rows = deque()


def encode_scalar_block(
    block: ScalarBlock, tags: TagTable, file_format: str
) -> tuple[np.ndarray, np.ndarray]:
    """Framed events of a block (bytes, and the end offset of each record)."""
    from sumlens.summary import _scalar_jit as jit

    id_of = tags.id_of
    steps = np.fromiter((row[0] for row in block.rows), dtype=np.int64, count=len(block))
    walls = np.fromiter((row[1] for row in block.rows), dtype=np.float64, count=len(block))
    counts = np.fromiter((len(row[2]) for row in block.rows), dtype=np.int32, count=len(block))
    total = int(counts.sum())
    tag_ids = np.fromiter(
        (id_of(name) for row in block.rows for name in row[2]), dtype=np.int32, count=total
    )
    values = np.fromiter(
        (value for row in block.rows for value in row[2].values()), dtype=np.float64, count=total
    )
    with np.errstate(over="ignore"):  # beyond float32's range: infinity, as the format stores
        values = values.astype(np.float32)
    tag_bytes, offsets = tags.encoded(int(tag_ids.max()) + 1 if tag_ids.size else 0)
    longest = int(np.diff(offsets).max()) if offsets.size > 1 else 0
    per_value = jit.MAX_OVERHEAD_PER_VALUE + longest
    tensorboard = file_format == "tensorboard"
    events = tag_ids.size if tensorboard else len(block)
    out = np.empty(events * jit.MAX_OVERHEAD_PER_EVENT + tag_ids.size * per_value, np.uint8)
    ends = np.empty(events, dtype=np.int64)
    count = jit.encode_block(
        steps,
        walls.view(np.uint64),
        counts,
        tag_ids,
        values.view(np.uint32),
        tag_bytes,
        offsets,
        jit.TB_SCALAR_FIELD if tensorboard else jit.MS_SCALAR_FIELD,
        tensorboard,
        out,
        ends,
        jit.CRC_TABLE,
    )
    return out, ends[:count]
