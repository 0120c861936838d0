"""Scalar-only steps, handed over by the caller as they are and written as one block.

Most ``record`` calls carry a few scalars and nothing else. For those the caller does as
little as it can: it appends one ``(step, wall time, {tag: value})`` row to a deque (after a
training step the caches are cold, and every extra object or call costs microseconds there).
Scalars logged one call each, as torch's ``add_scalar`` logs them, join the newest row of
their step (:func:`joined`, the first test of the scalar lane's ``put``): with a row per
value, the writer thread's work per row (holding the GIL) made ten scalars a step cost the
caller 4.4 us each; joined under a lock, 0.7; joined without a lock or a clock, 0.3, less
than ``add_value`` and ``record`` take (``benchmarks/bench_write.py``, scalar10). The
writer thread takes the rows at each wake-up, packs them into columns and serializes them
with one compiled pass (:mod:`sumlens.summary._scalar_jit`) that releases the GIL. Before a
step with other values the caller cuts the rows it has into a block of their own, so the
file keeps recording order (see :class:`ScalarCollector`).
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from typing import Any

import numpy as np

BLOCK_STEPS = 8192
"""Rows at which the caller hands them over itself (through the writer's bounded queue)."""
BLOCK_SECONDS = 0.25
"""How old rows may get before the writer takes them (its wake-up period)."""
ROW_BYTES = 64 + 32 + 24 + 8 + 8
"""Memory of one row besides its dict: the tuple, the step, the wall time, two list slots."""
VALUE_BYTES = 24
"""Memory of one scalar value (a Python float) in a row's dict."""


Row = tuple[int, float, dict[str, float]]
"""A step's scalars: ``(step, wall time, {tag: value})``."""
OpenRow = tuple[int, float, dict[str, float], bool]
"""A row that later values of its step may still join (:meth:`ScalarCollector.add_value`):
the fourth item marks it, for the one who takes it to seal it first. (A dict subclass as
the mark would make every row an object the garbage collector tracks.)"""
SEALED = object()
"""The key a taken open row's values are sealed with: what was added before it is written
with the row, what after it is not (and its caller knows, and starts a row of its own)."""


def joined(values: dict[str, float], tag: str, value: float) -> bool:
    """Add ``value`` to an open row if ``tag`` is new to it, and say whether it counts.

    Each step is one atomic dict operation, so no lock is needed: two threads adding the
    same tag cannot both win (``setdefault``), and the row's insertion order tells whether
    the value came before the seal of the thread that took the row (then it is written with
    the row) or after it (then it is not, and False starts a row of its own).
    """
    if tag in values or values.setdefault(tag, value) is not value:
        return False
    return SEALED not in values or _before_seal(values, tag)


def _before_seal(values: dict[str, float], tag: str) -> bool:
    for key in values.copy():  # a copy: another thread may be adding to the row
        if key is SEALED:
            return False
        if key == tag:
            return True
    return False


def _sealed(values: dict[Any, float]) -> dict[str, float]:
    """Seal a row being taken and return the values added before the seal."""
    count = len(values)
    values.setdefault(SEALED, 0.0)
    kept = values.copy()
    if len(kept) == count + 1:  # nearly always: only the seal came, so it is the last key
        kept.popitem()
        return kept
    before = {}
    for key, value in kept.items():
        if key is SEALED:
            break
        before[key] = value
    return before


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

    def __init__(self, rows: list[Row]) -> None:
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
    joins torch-style values to the row its last one opened (:attr:`open_row`) without a
    lock either (see :func:`joined`). Rows leave only under :attr:`lock`, oldest first,
    and together with what must be written around them: the caller cuts them into a block
    and queues it, then the step that follows, both under the lock; the writer, under the
    lock too, drains its queue and then takes the rows (newer than everything queued). So
    the file keeps recording order.
    """

    def __init__(self) -> None:
        self.tags = TagTable()
        self.lock = threading.Lock()
        self._rows: deque[Row | OpenRow] = deque()
        self.open_row: OpenRow | None = None
        """The newest row, if a value without a wall time opened it: a float of its step
        given without a wall time joins it, with no lock and no clock (the row has the time
        of its first value, and the writer takes it within :data:`BLOCK_SECONDS`, so a value
        given later at the same step starts a row with a time of its own). Read by the
        scalar lane's fast join (:meth:`~sumlens.summary.scalar_lane.ScalarLane.put`)."""
        self._given: OpenRow | None = None
        """The newest row, if a value with a wall time opened it (values of that time join)."""
        self.joinable: set[str] = set()
        """Tags :meth:`add_value` was given (checked by its caller): only these may join
        :attr:`open_row` unchecked."""

    def add_step(self, step: int, wall: float, scalars: dict[str, float]) -> bool:
        """Append one step's scalars (the dict is kept: do not change it afterwards);
        True once :data:`BLOCK_STEPS` rows wait, for the caller to hand them over."""
        rows = self._rows
        self.open_row = self._given = None  # later values come after this row
        rows.append((step, wall, scalars))
        return len(rows) >= BLOCK_STEPS

    def add_value(self, step: int, wall: float | None, tag: str, value: float) -> bool:
        """One scalar written on its own (torch's style: each call its step and time),
        joined to :attr:`open_row` when ``wall`` is None and the row is of ``step`` and has
        no ``tag`` yet, or when ``wall`` is given and a value given that wall time opened the
        newest row; else a row of its own. A step's ten scalars so become one row, as
        :meth:`add_step` makes them (one event in MindSpore's format; TensorBoard's has an
        event per scalar either way). True once :data:`BLOCK_STEPS` rows wait, for the
        caller to hand them over."""
        self.joinable.add(tag)
        row = self.open_row if wall is None else self._given
        if (
            row is not None
            and row[0] == step
            and (wall is None or row[1] == wall)
            and joined(row[2], tag, value)
        ):
            return False
        row = (step, time.time() if wall is None else wall, {tag: value}, True)
        rows = self._rows
        rows.append(row)
        self.open_row, self._given = (row, None) if wall is None else (None, row)
        return len(rows) >= BLOCK_STEPS

    def take(self) -> ScalarBlock | None:
        """Remove the waiting rows as a block (None if none); the caller holds :attr:`lock`.
        Open rows (values may still join them) are sealed first (:func:`_sealed`)."""
        rows = self._rows
        taken: list[Row] = []
        try:
            while True:
                row = rows.popleft()
                if len(row) == 4:
                    row = (row[0], row[1], _sealed(row[2]))
                taken.append(row)
        except IndexError:
            pass
        return ScalarBlock(taken) if taken else None

    def reset_after_fork(self) -> None:
        """A forked child's copy: a fresh lock, no rows."""
        self.lock = threading.Lock()
        self._rows = deque()
        self.open_row = self._given = None


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
