"""The scalar lane: the way every scalar of a ``SummaryRecord`` goes in.

:meth:`ScalarLane.put` takes one scalar at its own step and wall time, torch's
``add_scalar`` (``SummaryWriter.add_scalar`` and ``SummaryRecord.record_value`` call it);
:meth:`ScalarLane.put_step` takes the plain scalars of a ``record(step)`` call as one row.
Rows wait in the pipeline's :class:`~sumlens.summary.scalar_block.ScalarCollector` until
the writer takes them, or until :data:`~sumlens.summary.scalar_block.BLOCK_STEPS` wait and
the lane hands them over itself.

``put``'s first test is the fast join, the hot path of a training loop that logs several
scalars a step: a float given without a wall time, under a tag the lane has checked before,
joins the row its step opened, with no lock, no clock and no other check
(:func:`~sumlens.summary.scalar_block.joined`). Anything else takes the checked path, in
the same call (a call more costs the caller a tenth of a join): the intake's checks and
conversion (:mod:`sumlens.summary.intake`), ``max_file_size``'s bound
(:mod:`sumlens.summary.size_bound`), the record's state (closed, a pending write error).
"""

from __future__ import annotations

import time
from typing import Any

from sumlens.summary.intake import (
    INT64_MAX,
    INT64_MIN,
    Intake,
    checked_step,
    checked_wall,
    plain_scalar,
)
from sumlens.summary.items import Item, StepBatch
from sumlens.summary.pipeline import WriterPipeline
from sumlens.summary.record_state import RecordState
from sumlens.summary.scalar_block import joined
from sumlens.summary.size_bound import SizeBound, submit_alone


class ScalarLane:
    """The scalars of one record, on their way to its pipeline (see the module docstring)."""

    def __init__(
        self,
        pipeline: WriterPipeline,
        state: RecordState,
        intake: Intake,
        bound: SizeBound | None,
    ) -> None:
        self._rows = pipeline.scalar_rows
        self._pipeline = pipeline
        self._state = state
        self._intake = intake
        self._bound = bound

    def put(self, step: int, wall_time: float | None, tag: str, value: Any) -> bool:
        """Write scalar ``tag`` at ``step`` and ``wall_time`` (None: now); what
        ``record()`` returns (False once the record is closed, or a write failed).

        ``value`` may be a number or a one-element array or tensor; a CUDA tensor is
        copied without waiting for the device. A step's scalars given one after another
        share one row, as ``record()`` gives them
        (:meth:`~sumlens.summary.scalar_block.ScalarCollector.add_value`); with
        ``max_file_size`` each is a row of its own, checked against the bound.
        """
        rows = self._rows
        row = rows.open_row
        try:
            if (  # the fast join: as few steps as can be, each a test (see the module docstring)
                row is not None
                and type(step) is int
                and row[0] == step
                and wall_time is None
                and type(value) is float
                and tag in rows.joinable
                and not self._pipeline.failed  # a write error is raised by the checked path
                and joined(row[2], tag, value)
            ):
                return True
        except TypeError:  # an unhashable tag: the checked path refuses it in the intake's words
            pass
        # The checked path (an int step in range needs no call to be checked).
        owner = "SummaryRecord.record_value"
        if type(step) is not int or not INT64_MIN <= step <= INT64_MAX:
            step = checked_step(step, owner)
        given = None if wall_time is None else checked_wall(wall_time, owner)
        if not self._state.writable("record_value('scalar', %r)", tag):
            return False
        if type(value) is float and type(tag) is str and tag in rows.joinable:
            number: float | None = value  # a tag checked before (as the fast join trusts it)
        else:
            number = plain_scalar("scalar", tag, value)
        if number is None:
            item = self._intake.item("scalar", tag, value)
            if not isinstance(item.value, float):  # a CUDA tensor's copy, on its way
                return self._put_alone(step, given, item)
            number = item.value
        if self._bound is None:
            if rows.add_value(step, given, tag, number):
                self._pipeline.submit()
            return not self._pipeline.failed
        # Bound files: a row of its own (a row that later values join could outgrow the bound).
        return self.put_step(step, time.time() if given is None else given, {tag: number})

    def put_step(self, step: int, wall: float, scalars: dict[str, float]) -> bool:
        """Write ``scalars`` (checked floats by tag; the dict is kept) as the row of
        ``step``; those too large for ``max_file_size`` are said and dropped. What
        ``record()`` returns."""
        bound = self._bound
        refused, least = ([], 0) if bound is None else bound.drop_scalars(step, scalars)
        if scalars and self._rows.add_step(step, wall, scalars):
            self._pipeline.submit()
        if bound is not None and refused:
            return bound.refuse(step, refused, least)
        return not self._pipeline.failed

    def _put_alone(self, step: int, wall: float | None, item: Item) -> bool:
        """A scalar read only on the writer thread, as a batch of its own."""
        batch = StepBatch(step, time.time() if wall is None else wall, [item])
        return submit_alone(batch, self._pipeline, self._intake, self._bound)
