"""Slicing a tensor as MindInsight's tensor view asks for it: ``[0, :, 2:5]``.

One entry per dimension: an index (negative counts from the end), ``:`` (the whole
dimension) or ``start:stop[:step]``. Fewer entries than dimensions leave the rest whole.
The result is capped (:data:`MAX_ELEMENTS`) so a request can never make the server build
a response larger than the page could show.
"""

from __future__ import annotations

import numpy as np

MAX_ELEMENTS = 100_000
"""Values one slice may return."""


class SliceError(ValueError):
    """A slice that is not allowed; the message names it and what is allowed."""


def parse_slice(text: str, shape: tuple[int, ...]) -> tuple[int | slice, ...]:
    """The index tuple ``text`` stands for on an array of ``shape`` (checked, in range)."""
    body = text.strip()
    if body.startswith("[") and body.endswith("]"):
        body = body[1:-1]
    parts = [part.strip() for part in body.split(",")] if body.strip() else []
    if len(parts) > len(shape):
        raise SliceError(
            f"slice={text!r} has {len(parts)} entries but the tensor has {len(shape)} "
            f"dimensions {list(shape)}"
        )
    index: list[int | slice] = []
    for axis, (part, size) in enumerate(zip(parts, shape, strict=False)):
        if ":" in part:
            fields = part.split(":")
            if len(fields) > 3:
                raise SliceError(f"slice={text!r}: entry {part!r} has more than two ':'")
            try:
                numbers = [int(f) if f.strip() else None for f in fields]
            except ValueError:
                raise SliceError(
                    f"slice={text!r}: entry {part!r} must be start:stop[:step] of integers"
                ) from None
            if len(numbers) == 3 and numbers[2] is not None and numbers[2] <= 0:
                raise SliceError(f"slice={text!r}: the step of {part!r} must be > 0")
            index.append(slice(*numbers))
        else:
            try:
                position = int(part)
            except ValueError:
                raise SliceError(
                    f"slice={text!r}: entry {part!r} must be an integer, ':' or start:stop"
                ) from None
            if not -size <= position < size:
                raise SliceError(
                    f"slice={text!r}: index {position} is out of range for dimension {axis} "
                    f"of size {size}"
                )
            index.append(position)
    return tuple(index)


def take(array: np.ndarray, text: str | None) -> np.ndarray:
    """The slice ``text`` of ``array`` (all of it when None), at most :data:`MAX_ELEMENTS`."""
    view = array if text is None else array[parse_slice(text, array.shape)]
    if view.size > MAX_ELEMENTS:
        raise SliceError(
            f"the slice holds {view.size:,} values; at most {MAX_ELEMENTS:,} are sent: "
            "fix more dimensions, e.g. slice=[0,:,:]"
        )
    return view


def statistics(array: np.ndarray) -> dict[str, float | int | None]:
    """Min, max, mean and the counts of NaN and infinite values (finite values only)."""
    values = np.asarray(array)
    if values.dtype.kind not in "fiub":
        return {"count": int(values.size)}
    as_float = values.astype(np.float64, copy=False)
    finite = np.isfinite(as_float)
    chosen = as_float[finite]
    return {
        "count": int(values.size),
        "min": float(chosen.min()) if chosen.size else None,
        "max": float(chosen.max()) if chosen.size else None,
        "mean": float(chosen.mean()) if chosen.size else None,
        "nan": int(np.isnan(as_float).sum()),
        "pos_inf": int(np.isposinf(as_float).sum()),
        "neg_inf": int(np.isneginf(as_float).sum()),
    }
