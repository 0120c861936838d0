"""The x of a scalar chart: step, relative or wall time, or another scalar tag of the run.

``axis=tag:<name>`` places each point of a series at the value that the series ``<name>``
of the same run and rank holds at the same step (epoch, tokens seen ...): the two are
joined on step. A point whose step the x tag lacks (or where its value is NaN or
infinite) has no place on that axis: it is left out of the chart and counted, so the page
can say how many. The points stay in step order. An x tag that only grows or only shrinks
with step (epochs, tokens seen; a budget left, a decaying learning rate) is monotonic: each
x has one point and the curve reads left to right by value whichever way it was drawn.
One that goes up and down is not (:attr:`Placed.monotonic`): its curve is drawn in step
order and may double back, and the page says so.

The built-in axes are cut by :class:`~sumlens.board.query.selection.Range` as before; a range
along a tag axis is in that tag's units.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sumlens.board.data.surface import ReadSurface, SeriesRef
from sumlens.board.errors import QueryError
from sumlens.board.query.selection import AXES, Range, cut

TAG_PREFIX = "tag:"


@dataclass(frozen=True, slots=True)
class XAxis:
    """An x-axis as asked (``step``, ``relative``, ``wall`` or ``tag:<name>``) and an
    inclusive range along it (a missing end is open)."""

    name: str
    start: float | None = None
    end: float | None = None

    @classmethod
    def create(cls, axis: str, start: float | None, end: float | None) -> XAxis:
        """A checked axis and range (the ends finite and in order, as for :class:`Range`)."""
        if axis == TAG_PREFIX:
            raise QueryError(f"axis={axis!r} names no tag: give tag:<a scalar tag>")
        if not axis.startswith(TAG_PREFIX) and axis not in AXES:
            raise QueryError(f"axis={axis!r} is not one of {', '.join(AXES)} or tag:<a scalar tag>")
        Range.create("step", start, end)  # the ends: finite and in order, on any axis
        return cls(axis, start, end)

    @property
    def tag(self) -> str | None:
        """The x tag of a tag axis; None for a built-in axis."""
        return self.name[len(TAG_PREFIX) :] if self.name.startswith(TAG_PREFIX) else None

    @property
    def ranged(self) -> bool:
        """Whether the range has an end (else every point is in it)."""
        return self.start is not None or self.end is not None


@dataclass(frozen=True, slots=True)
class Placed:
    """Where the points of one series go on an x-axis."""

    index: np.ndarray
    """Indices of the points shown (in range, with an x), ascending: step order."""
    x: np.ndarray | None
    """Their x along a tag axis; None on a built-in axis (step and wall time give it)."""
    missing: int
    """Points of the whole series left out because the x tag has no value at their step."""
    monotonic: bool
    """Whether x never decreases, or never increases, with step over the points that have
    one (either serves as an x-axis)."""


def place(
    surface: ReadSurface,
    ref: SeriesRef,
    points: np.ndarray,
    axis: XAxis,
    keep_missing: bool = False,
) -> Placed:
    """The points of ``ref`` (``points``, as the surface gave them) in ``axis``'s range.

    ``keep_missing``: on a tag axis without a range, keep the points without an x too (their
    x NaN), as a download does; a chart leaves them out.
    """
    if axis.tag is None:
        span = Range(axis.name, axis.start, axis.end)  # type: ignore[arg-type]
        return Placed(cut(points, ref, span), None, 0, True)
    x = joined(surface, ref, points, axis.tag)
    has_x = np.isfinite(x)
    known = x[has_x]
    inside = np.ones(points.size, dtype=bool) if keep_missing and not axis.ranged else has_x
    if axis.start is not None:
        inside &= x >= axis.start  # NaN compares False: points without x stay out
    if axis.end is not None:
        inside &= x <= axis.end
    index = np.flatnonzero(inside)
    return Placed(
        index=index,
        x=x[index],
        missing=int(points.size - known.size),
        monotonic=_monotonic(known),
    )


def _monotonic(x: np.ndarray) -> bool:
    """Whether ``x`` never decreases or never increases."""
    steps = np.diff(x)
    return bool(np.all(steps >= 0) or np.all(steps <= 0))


def joined(surface: ReadSurface, ref: SeriesRef, points: np.ndarray, tag: str) -> np.ndarray:
    """The value of ``tag`` (same run and rank as ``ref``) at each step of ``points``; NaN
    where that series has no point at the step (or none at all)."""
    out = np.full(points.size, np.nan)
    source = next((s for s in surface.series(ref.run) if s.tag == tag and s.rank == ref.rank), None)
    if source is None or points.size == 0:
        return out
    xs = surface.points(source)
    if xs.size == 0:
        return out
    # steps strictly increase within a series: one binary search per point
    at = np.minimum(np.searchsorted(xs["step"], points["step"]), xs.size - 1)
    found = xs["step"][at] == points["step"]
    out[found] = xs["value"][at[found]]
    return out
