"""What travels from ``SummaryRecord.record`` to the writer thread.

An :class:`Item` is one validated value with its plugin and tag; a :class:`StepBatch` is
everything one ``record(step)`` call hands over. Arrays in items are private snapshots
(or pending device copies), so the writer may take its time with them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TENSORBOARD_EVENT = "tensorboard_event"
"""The internal plugin of a prepared TensorBoard ``Event`` whose step and time are set when
it is written (``SummaryRecord.record_tensorboard_event``): in TensorBoard's format it goes
to the summary file, in MindSpore's to the record's TensorBoard-format file beside it."""


@dataclass(slots=True)
class Item:
    """One value to write: ``plugin`` (canonical lower-case name), ``tag``, ``value``.

    ``value`` by plugin: scalar -> float or array snapshot; image -> (snapshot, layout);
    tensor/histogram -> snapshot (a histogram may already be a computed
    :class:`~sumlens.io.events.Histogram`); graph/lineage/landscape -> protobuf message;
    :data:`TENSORBOARD_EVENT` -> a TensorBoard ``Event`` message.
    ``nbytes`` estimates the encoded size (for the 2 GiB check); ``held`` is the memory
    the value holds until it is written (its snapshot), which may be far larger (a
    histogram of a big tensor). The queue bound counts the larger of the two. ``export``:
    also saved as a file of its own (``export_options``); ``summary``: written to the
    summary file (False for a value only exported, too large for ``max_file_size``).
    """

    plugin: str
    tag: str
    value: Any
    nbytes: int = 64
    export: bool = False
    held: int = 0
    summary: bool = True


@dataclass(slots=True)
class StepBatch:
    """The items of one ``record(step)`` call, stamped with its step and wall time."""

    step: int
    wall_time: float
    items: list[Item] = field(default_factory=list)

    @property
    def nbytes(self) -> int:
        """Estimated bytes of everything in the batch."""
        return 64 + sum(item.nbytes for item in self.items)

    @property
    def pending_bytes(self) -> int:
        """Estimated memory the batch takes until written (for the queue bound)."""
        return 64 + sum(max(item.nbytes, item.held) for item in self.items)
