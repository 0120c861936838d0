"""``max_file_size``'s rule for what a record hands over: what no file can hold is not written.

A file of ``max_file_size`` bytes holds its version record and the rest; a step (or a value
written on its own) whose least size (:mod:`sumlens.summary.step_size`) exceeds that rest
could never be written, so the record says so at once, where the user called, rather than
let the writer thread fail on it: ``record()`` answers False (logged once per record), or
raises with ``raise_exception=True``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from sumlens._log import log_once
from sumlens.summary.eventfile import RecordTooLargeError
from sumlens.summary.file_size import header_bytes
from sumlens.summary.intake import Intake
from sumlens.summary.items import Item, StepBatch
from sumlens.summary.pipeline import WriterPipeline
from sumlens.summary.step_size import oversized, oversized_scalars


class SizeBound:
    """The room of a record's files of ``max_file_size`` bytes, and the refusals it makes."""

    def __init__(self, max_file_size: int, file_format: str, raise_exception: bool) -> None:
        self.max_file_size = max_file_size
        self.room = max_file_size - header_bytes(file_format)
        """Bytes a file holds besides its version record."""
        self._file_format = file_format
        self._raise_exception = raise_exception

    def drop_scalars(self, step: int, scalars: dict[str, float]) -> tuple[list[str], int]:
        """Drop from ``scalars`` (a step's, by tag) those no file can hold; their names for
        :meth:`refuse` and the least bytes of the largest such record."""
        too_large, least = oversized_scalars(step, scalars, self._file_format, self.room)
        for tag in too_large:
            del scalars[tag]
        return [f"{tag}/scalar" for tag in too_large], least

    def items(self, step: int, items: list[Item]) -> tuple[list[Item], int]:
        """The items of one step that no file can hold, and the least bytes of the largest
        such record (see :func:`~sumlens.summary.step_size.oversized`)."""
        return oversized(items, step, self._file_format, self.room)

    def refuse(self, step: int, names: Iterable[str], least: int) -> bool:
        """Say that ``names`` (``tag/plugin``) of ``step``, whose record needs at least
        ``least`` bytes, cannot fit any file: raised with ``raise_exception=True``, else
        logged once per record; False, ``record()``'s answer for that step."""
        names = list(names)
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        message = (
            f"step {step}: the record of {shown} needs at least {least} bytes, more than "
            f"max_file_size={self.max_file_size} holds besides the file's "
            f"{self.max_file_size - self.room}-byte version record; not written "
            "(raise max_file_size, or record fewer or smaller values per step)"
        )
        if self._raise_exception:
            raise RecordTooLargeError(message)
        log_once(
            f"record-too-large:{id(self)}",
            logging.ERROR,
            "%s; record() returns False for such steps (later ones are not logged)",
            message,
        )
        return False


def size_bound(
    max_file_size: int | None, file_format: str, raise_exception: bool
) -> SizeBound | None:
    """The bound of files of ``max_file_size`` bytes (None: no limit, no bound)."""
    if max_file_size is None:
        return None
    return SizeBound(max_file_size, file_format, raise_exception)


def submit_alone(
    batch: StepBatch, pipeline: WriterPipeline, intake: Intake, bound: SizeBound | None
) -> bool:
    """Hand ``batch`` over apart from any pending step, checked as a step is: refused whole
    when no file of ``bound`` can hold it, raised when an event would pass protobuf's limit.
    What ``record()`` returns (``record_value``'s values, a device scalar's copy)."""
    if bound is not None:
        oversize, least = bound.items(batch.step, batch.items)
        if oversize:
            return bound.refuse(batch.step, (f"{o.tag}/{o.plugin}" for o in oversize), least)
    intake.check_step_bytes(batch)
    pipeline.submit(batch)
    return not pipeline.failed
