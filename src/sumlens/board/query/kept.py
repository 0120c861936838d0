"""One value of a series, for the routes that serve values (of a given type:
:func:`kept_value`), at a kept step or any other recorded one (:func:`at_step`).

A value its file no longer holds, or one of another type than the route serves, becomes
:class:`~sumlens.board.errors.NotFound` naming it; a damaged one raises
:class:`~sumlens.board.errors.ValueUnreadable` from the read surface (both name the tag).
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import numpy as np

from sumlens.board.data.surface import ReadSurface, Samples
from sumlens.board.errors import NotFound
from sumlens.board.query.lookup import step_index

T = TypeVar("T")


def at_step(samples: Samples, step: int | None) -> tuple[Samples, int]:
    """Where the value at ``step`` of ``samples`` is: ``(series, index)`` for
    :func:`value_at`, the newest kept one when ``step`` is None.

    A step outside the kept sample is looked up in the series' index of every recorded
    step (:attr:`Samples.recorded`): the series handed back then holds that one record, so
    reading it reads that record alone (one ranged read, whatever the storage).
    :class:`NotFound` names a step that was never recorded (or not indexed)."""
    if step is None or samples.recorded is None or bool((samples.items["step"] == step).any()):
        return samples, step_index(samples, step)
    rows = samples.recorded
    at = int(np.searchsorted(rows["step"], step))
    if at == rows.size or int(rows["step"][at]) != step:
        raise NotFound(
            f"step={step} of {samples.tag!r} was never recorded; {_recorded(samples, rows)}"
        )
    row = rows[at]
    item = np.array(
        [(-1, step, row["wall"], row["file"], row["offset"], row["length"])],
        dtype=samples.items.dtype,
    )
    return dataclasses.replace(samples, items=item, recorded=None), 0


def recorded_json(samples: Samples) -> dict[str, Any]:
    """Which steps of ``samples`` a page can ask for besides the kept ones: ``recorded``
    (null when the series has no step index) and the index's ``stride``."""
    steps = None if samples.recorded is None else np.ascontiguousarray(samples.recorded["step"])
    return {"recorded": steps, "stride": samples.stride}


def _recorded(samples: Samples, recorded: np.ndarray) -> str:
    """Which steps can be asked for (``recorded``: the series' index), said briefly (the
    index may hold thousands)."""
    steps = np.union1d(recorded["step"], samples.items["step"])
    if not steps.size:
        return "no step is recorded"
    every = "" if samples.stride == 1 else f"; one step in {samples.stride} is indexed"
    return f"{steps.size} recorded steps from {int(steps[0])} to {int(steps[-1])}{every}"


def value_at(surface: ReadSurface, samples: Samples, index: int) -> Any:
    """The value kept at ``index`` of ``samples``, whatever its type."""
    event = surface.value(samples, index)
    if event is None:
        step = int(samples.items["step"][index])
        raise NotFound(
            f"{samples.tag!r} at step {step} is no longer in its file: the file changed since "
            "it was listed"
        )
    return event.value


def value_at_step(
    surface: ReadSurface, samples: Samples, step: int | None, kind: type[T]
) -> tuple[int, float, T]:
    """The step, wall time and value (a ``kind``) at any recorded ``step`` of ``samples``
    (:func:`at_step`; the newest kept one when None), for the routes of one step."""
    chosen, index = at_step(samples, step)
    value = kept_value(surface, chosen, index, kind)
    item = chosen.items[index]
    return int(item["step"]), float(item["wall"]), value


def kept_value(surface: ReadSurface, samples: Samples, index: int, kind: type[T]) -> T:
    """The value kept at ``index`` of ``samples``, which must be a ``kind``."""
    value = value_at(surface, samples, index)
    if not isinstance(value, kind):
        step = int(samples.items["step"][index])
        raise NotFound(f"{samples.tag!r} at step {step} holds no {samples.plugin} value")
    return value
