"""How small a summary file may be: its version record and one whole step.

``max_file_size`` rotates to a new file before one would exceed it, and every file starts
with its version record; a size that cannot also hold one step could never write
anything. ``SummaryRecord`` refuses such a size with :func:`check_max_file_size`, and so
does ``SummaryCollector``, for a step holding what it always collects (its loss), when it
is made rather than when training starts. The sizes are exact: the step is encoded as the
writer encodes it (:mod:`sumlens.summary.encoders`), at a step below 128 (one varint byte).
"""

from __future__ import annotations

import time

from sumlens._checks import check_int
from sumlens.io.framing import encode_record
from sumlens.summary.encoders import ENCODERS, version_payload
from sumlens.summary.items import Item, StepBatch

SMALLEST_STEP = ("x",)
"""The tags of the smallest step a file may have to hold: one scalar, a one-letter tag."""


def header_bytes(file_format: str) -> int:
    """Bytes of the version record every file starts with (the same for every wall time)."""
    return len(encode_record(version_payload(file_format, time.time())))


def smallest_file(file_format: str, tags: tuple[str, ...] = SMALLEST_STEP) -> int:
    """Bytes of the smallest file that holds a step of one scalar per tag in ``tags``
    (by default one scalar with a one-letter tag): its version record and that step."""
    items = [Item("scalar", tag, 0.0) for tag in tags]
    step = ENCODERS[file_format](StepBatch(1, time.time(), items), [0.0] * len(items))
    return header_bytes(file_format) + sum(len(encode_record(p)) for p in step.summary)


def check_max_file_size(
    value: object, owner: str, file_format: str, tags: tuple[str, ...] = SMALLEST_STEP
) -> int | None:
    """``value`` as a ``max_file_size``: None (no limit), or an int of bytes that holds a
    file's version record and a step of the scalars ``tags`` (see :func:`smallest_file`)."""
    size = check_int(value, "max_file_size", owner, allow_none=True)
    if size is None:
        return None
    smallest = smallest_file(file_format, tags)
    if size < smallest:
        scalars = ", ".join(map(repr, tags))
        holding = "one step" if tags == SMALLEST_STEP else f"a step with the scalars {scalars}"
        raise ValueError(
            f"For '{owner}', max_file_size={size} is too small: each file starts with its "
            f"version record and must hold {holding}, so it must be at least {smallest} bytes "
            f"(or None for no limit)"
        )
    return size
