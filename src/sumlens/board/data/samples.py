"""Which values of a non-scalar series the dashboard keeps, and where they are.

Images, histograms, tensors, graphs, lineage and landscapes are too large to copy into
the workspace and too many to keep all of: for each (rank, plugin, tag) a
:class:`SampleBucket` keeps at most ``cap`` *references* - step, wall time and where the
value's record lies in its file - and the value is read back from the event file when a
page asks for it (:func:`sumlens.io.read_events_at`).

Which ones: evenly spaced over the steps seen, always with the first and the newest.
Values are numbered as they arrive; a bucket keeps those whose number is a multiple of its
stride, and when they no longer fit it doubles the stride (dropping every other one), so
the kept steps stay evenly spread however long the run grows; the newest value is kept
besides. Deterministic (no random reservoir), so two servers over the same files keep the
same steps. A step that goes back (a resumed run) drops what it replaces, as for scalars;
the loader leaves out a value written again unchanged at the newest step before it gets
here (:func:`same_value` tells).

Besides the sample, a bucket keeps a :class:`StepIndex`: where the record of *every* step
lies (32 bytes a step), so a page can ask for a step outside the sample and have that one
record read back. It is bounded by :data:`INDEX_CAP` steps; past it the index thins out
the same way (every other step dropped, its stride doubled), and says its stride so a page
can tell the user which steps it offers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sumlens.io import Histogram

SAMPLE = np.dtype(
    [
        ("pos", "<i8"),
        ("step", "<i8"),
        ("wall", "<f8"),
        ("file", "<i4"),
        ("offset", "<i8"),
        ("length", "<i8"),
    ]
)
"""One kept value: its arrival number, step, wall time, file (index into the run's file
list) and its record's payload offset and length in that file."""


INDEX_CAP = 16_384
"""The most steps a :class:`StepIndex` holds (512 KiB); past it every other one goes."""
RECORD = np.dtype(
    [("step", "<i8"), ("wall", "<f8"), ("offset", "<i8"), ("file", "<i4"), ("length", "<i4")]
)
"""Where one recorded step's value lies: its step, wall time, and its record's file (index
into the run's file list), payload offset and length (under 2 GiB: protobuf's bound)."""


class StepIndex:
    """Where the record of each step of one series lies, steps strictly increasing.

    Numbered as they arrive, a step is indexed when its number is a multiple of
    :attr:`stride`; when more than ``cap`` are indexed the stride doubles and every other
    one is dropped, so at most ``cap`` are held however long the run grows. A step that
    goes back drops the indexed steps at and after it (as the sample does).
    """

    __slots__ = ("_rows", "_size", "_view", "cap", "seen", "stride")

    def __init__(self, cap: int = INDEX_CAP, rows: np.ndarray | None = None, stride: int = 1):
        self.cap = max(2, cap)
        self._rows = np.empty(16, RECORD) if rows is None or not rows.size else rows.copy()
        self._size = 0 if rows is None else int(rows.size)
        self._view: np.ndarray | None = None
        self.stride = max(1, stride)
        self.seen = self._size * self.stride

    @property
    def rows(self) -> np.ndarray:
        """The indexed steps (:data:`RECORD` records, a read-only snapshot), ascending."""
        if self._view is None:
            self._view = self._rows[: self._size].copy()
            self._view.flags.writeable = False
        return self._view

    def add(self, step: int, wall: float, file: int, offset: int, length: int) -> None:
        """Index one value (in arrival order)."""
        if self._size and step <= int(self._rows["step"][self._size - 1]):
            self._size = int(np.searchsorted(self._rows["step"][: self._size], step))
            self.seen = self._size * self.stride  # the next one is indexed
        number, self.seen = self.seen, self.seen + 1
        if number % self.stride:
            return
        if self._size == self._rows.size:
            grown = np.empty(min(2 * self._rows.size, self.cap + 1), RECORD)
            grown[: self._size] = self._rows[: self._size]
            self._rows = grown
        self._rows[self._size] = (step, wall, offset, file, length)
        self._size += 1
        self._view = None
        if self._size > self.cap:
            self.stride *= 2
            kept = self._rows[: self._size : 2].copy()
            self._size = kept.size
            self._rows[: self._size] = kept

    def find(self, step: int) -> np.ndarray | None:
        """The :data:`RECORD` of ``step`` (a one-row array), or None when it is not indexed."""
        rows = self._rows[: self._size]
        at = int(np.searchsorted(rows["step"], step))
        if at < self._size and int(rows["step"][at]) == step:
            return rows[at : at + 1].copy()
        return None


class SampleBucket:
    """At most ``cap`` evenly spaced samples of one series, with its first and newest.

    Offers arrive by the hundred thousand while a large run loads, so they go to a plain
    list of rows (a few microseconds each); :attr:`items` is the numpy view of them,
    built when asked for after a change.
    """

    __slots__ = ("_items", "_rows", "cap", "index", "seen", "stride")

    def __init__(
        self,
        cap: int,
        items: np.ndarray | None = None,
        stride: int = 1,
        index: StepIndex | None = None,
    ) -> None:
        self.cap = max(2, cap)
        self.index = StepIndex() if index is None else index
        """Where every step's record lies (bounded: :data:`INDEX_CAP`)."""
        self._rows: list[tuple[int, int, float, int, int, int]] = (
            [] if items is None else [tuple(row) for row in items.tolist()]
        )
        self._items: np.ndarray | None = None
        self.stride = stride
        self.seen = max(row[0] for row in self._rows) + 1 if self._rows else 0

    @property
    def items(self) -> np.ndarray:
        """The kept samples (:data:`SAMPLE` records) in arrival order."""
        if self._items is None:
            self._items = np.array(self._rows, dtype=SAMPLE)
        return self._items

    def newest(self) -> dict[str, Any] | None:
        """The newest sample offered (its :data:`SAMPLE` fields), or None before any."""
        if not self._rows:
            return None
        names = SAMPLE.names
        assert names is not None  # a structured dtype's fields
        return dict(zip(names, self._rows[-1], strict=True))

    def offer(self, step: int, wall: float, file: int, offset: int, length: int) -> int:
        """Take one value (in arrival order); return how many kept ones a restart dropped."""
        self.index.add(step, wall, file, offset, length)
        rows = self._rows
        dropped = 0
        if rows and step <= rows[-1][1]:
            dropped = self._drop_from(step)
        if rows and rows[-1][0] % self.stride:  # the newest was kept only as such
            rows.pop()
        rows.append((self.seen, step, wall, file, offset, length))
        self.seen += 1
        while len(rows) > self.cap:
            self.stride *= 2
            stride = self.stride
            newest = rows[-1]
            rows[:] = [row for row in rows[:-1] if row[0] % stride == 0]
            rows.append(newest)
        self._items = None
        return dropped

    def _drop_from(self, step: int) -> int:
        rows = self._rows
        before = len(rows)
        rows[:] = [row for row in rows if row[1] < step]
        self.seen = max(row[0] for row in rows) + 1 if rows else 0
        return before - len(rows)


def same_value(a: Any, b: Any) -> bool:
    """Whether two values read back are the same: arrays and histograms by content (NaN
    equal to NaN, dtype and shape included), everything else (images, messages) by ``==``."""
    if isinstance(a, Histogram) and isinstance(b, Histogram):
        return all(
            same_value(getattr(a, name), getattr(b, name))
            for name in Histogram.__dataclass_fields__
        )
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        )
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:  # both NaN
        return True
    return bool(a == b)
