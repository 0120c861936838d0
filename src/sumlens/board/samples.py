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
same steps. A step that goes back (a resumed run) drops what it replaces, as for scalars.
"""

from __future__ import annotations

import numpy as np

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


class SampleBucket:
    """At most ``cap`` evenly spaced samples of one series, with its first and newest."""

    __slots__ = ("cap", "items", "seen", "stride")

    def __init__(self, cap: int, items: np.ndarray | None = None, stride: int = 1) -> None:
        self.cap = max(2, cap)
        self.items = np.empty(0, dtype=SAMPLE) if items is None else items
        self.stride = stride
        self.seen = int(self.items["pos"].max()) + 1 if self.items.size else 0

    def offer(self, step: int, wall: float, file: int, offset: int, length: int) -> int:
        """Take one value (in arrival order); return how many kept ones a restart dropped."""
        dropped = 0
        if self.items.size and step <= self.items["step"][-1]:
            dropped = self._drop_from(step)
        row = np.array([(self.seen, step, wall, file, offset, length)], dtype=SAMPLE)
        self.seen += 1
        items = self.items
        if items.size and items["pos"][-1] % self.stride:  # the newest was kept only as such
            items = items[:-1]
        items = np.concatenate((items, row))
        while items.size > self.cap:
            self.stride *= 2
            regular = items["pos"] % self.stride == 0
            regular[-1] = True  # the newest stays
            items = items[regular]
        self.items = items
        return dropped

    def _drop_from(self, step: int) -> int:
        keep = self.items["step"] < step
        dropped = int(self.items.size - np.count_nonzero(keep))
        self.items = self.items[keep]
        self.seen = int(self.items["pos"].max()) + 1 if self.items.size else 0
        return dropped
