"""A group's centre line and band, from its members' full-resolution points aligned by step.

Each member (one series: a run, or a rank of it) is smoothed on its own whole series first
(:func:`~sumlens.board.query.curves.smooth`, as the scalars route does), so a group of
smoothed curves is the mean of the curves the user sees, not a smoothed mean. The members
are then put on the union of their steps; at a step some members lack (or hold a NaN or an
infinity there) the statistics are over those that have a finite value, and ``count`` says
how many. A step no member has a finite value at keeps NaN (a gap).

* centre: ``mean`` or ``median``;
* band: ``std`` (centre ± the sample standard deviation of the members, numpy's
  ``ddof=1``: the members are a sample of the runs the script could make, as seeds are; at
  a step only one member has, no spread can be estimated and the band closes on the
  centre, as the other bands do), ``minmax``, or a percentile range ``p<lo>-<hi>``
  (``p25-75``; numpy's linear percentiles).

Along an axis other than step, a step's x is the mean of its members' x there (relative
time from each member's first point, wall time, or the x tag's value joined on step:
:func:`~sumlens.board.query.xaxis.joined`); a step where no member has an x is left out and
counted as ``missing``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from sumlens.board.data.surface import ReadSurface, SeriesRef
from sumlens.board.errors import QueryError
from sumlens.board.query.curves import Method, smooth
from sumlens.board.query.xaxis import XAxis, joined

STATS = ("mean", "median")
BANDS = ("std", "minmax", "p<lo>-<hi>")
"""What ``band`` may be (``p25-75`` for the 25th to the 75th percentile)."""
_PERCENTILES = re.compile(r"p(\d{1,3})-(\d{1,3})")


@dataclass(frozen=True, slots=True)
class Statistic:
    """A checked centre (``mean``/``median``) and band (``std``, ``minmax``, percentiles)."""

    stat: str
    band: str
    percentiles: tuple[float, float] | None = None

    @classmethod
    def create(cls, stat: str, band: str) -> Statistic:
        """The statistic asked for; a :class:`QueryError` naming a parameter not allowed."""
        if stat not in STATS:
            raise QueryError(f"stat={stat!r} is not one of {', '.join(STATS)}")
        if band in ("std", "minmax"):
            return cls(stat, band)
        found = _PERCENTILES.fullmatch(band)
        lo, hi = (int(found[1]), int(found[2])) if found else (0, 0)
        if not found or not 0 <= lo < hi <= 100:
            raise QueryError(
                f"band={band!r} is not one of std, minmax or p<lo>-<hi> "
                "(percentiles, 0 <= lo < hi <= 100, e.g. p25-75)"
            )
        return cls(stat, band, (float(lo), float(hi)))

    @property
    def columns(self) -> tuple[str, str, str]:
        """Names of the centre, low and high columns in a download (``mean``, ``mean-std``,
        ``mean+std``; ``min``, ``max``; ``p25``, ``p75``)."""
        if self.band == "std":
            return self.stat, f"{self.stat}-std", f"{self.stat}+std"
        if self.band == "minmax":
            return self.stat, "min", "max"
        lo, hi = self.percentiles or (0.0, 0.0)
        return self.stat, f"p{lo:g}", f"p{hi:g}"


@dataclass(frozen=True, slots=True)
class Aggregate:
    """One group's statistics at each step any member has (ascending)."""

    step: np.ndarray
    x: np.ndarray | None
    """The x of each step along a non-step axis; None along step."""
    center: np.ndarray
    low: np.ndarray
    high: np.ndarray
    count: np.ndarray
    """Members with a finite value at each step."""
    missing: int
    """Steps left out along a non-step axis: no member has an x there."""


def aggregate(
    surface: ReadSurface,
    members: list[SeriesRef],
    statistic: Statistic,
    axis: XAxis,
    smoothing: float,
    method: Method,
) -> Aggregate | None:
    """The statistics of ``members`` (see the module doc); None when none has a point."""
    columns = [(ref, surface.points(ref)) for ref in members]
    columns = [(ref, points) for ref, points in columns if points.size]
    if not columns:
        return None
    steps = _union_of_steps([points["step"] for _, points in columns])
    grid = np.full((len(columns), steps.size), np.nan)
    xs = None if axis.name == "step" else np.full_like(grid, np.nan)
    for row, (ref, points) in enumerate(columns):
        at = slice(None) if points.size == steps.size else np.searchsorted(steps, points["step"])
        grid[row, at] = smooth(points["value"], smoothing, method)
        if xs is not None:
            xs[row, at] = _member_x(surface, ref, points, axis)
    center, low, high, count = _statistics(grid, statistic)
    x, missing = None, 0
    if xs is not None:
        known = np.isfinite(xs)
        seen = known.sum(axis=0)
        x = np.full(steps.size, np.nan)
        x[seen > 0] = np.where(known, xs, 0.0).sum(axis=0)[seen > 0] / seen[seen > 0]
        missing = int(np.count_nonzero(seen == 0))
    return Aggregate(steps, x, center, low, high, count, missing)


def _union_of_steps(members: list[np.ndarray]) -> np.ndarray:
    """Every step any member has, ascending; members that all log the same steps (seeds of
    one script, the usual case) give theirs without a sort of all of them together."""
    first = members[0]
    if all(steps.size == first.size and np.array_equal(steps, first) for steps in members[1:]):
        return first
    return np.unique(np.concatenate(members))


def _member_x(surface: ReadSurface, ref: SeriesRef, points: np.ndarray, axis: XAxis) -> np.ndarray:
    """Each point's x along a non-step ``axis`` (NaN where a tag axis has none)."""
    if axis.tag is not None:
        return joined(surface, ref, points, axis.tag)
    if axis.name == "wall":
        return points["wall"]
    return points["wall"] - ref.first_wall


def _statistics(
    grid: np.ndarray, statistic: Statistic
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Centre, low, high and count per column of ``grid`` (members x steps, NaN: none).

    Only columns with a finite value are reduced, so numpy never meets an all-NaN slice
    (it would warn, and warnings filters are not safe to change in a threaded server).
    """
    finite = np.isfinite(grid)
    count = finite.sum(axis=0)
    some = count > 0
    values = np.where(finite, grid, np.nan)[:, some]
    held = finite[:, some]
    n = count[some]
    center, low, high = (np.full(grid.shape[1], np.nan) for _ in range(3))
    mean = np.where(held, values, 0.0).sum(axis=0) / n
    # sorted only for a median or a percentile band (the costly part); else never read.
    # NaN last: each column's n finite values first
    sort = statistic.stat != "mean" or statistic.band not in ("std", "minmax")
    ordered = np.sort(values, axis=0) if sort else values
    center[some] = mean if statistic.stat == "mean" else _percentile(ordered, n, 50.0)
    if statistic.band == "std":  # the sample standard deviation (ddof=1); 0 for one member
        squares = np.where(held, (values - mean) ** 2, 0.0).sum(axis=0)
        spread = np.sqrt(squares / np.maximum(n - 1, 1))
        low[some], high[some] = center[some] - spread, center[some] + spread
    elif statistic.band == "minmax":
        low[some], high[some] = np.fmin.reduce(values, axis=0), np.fmax.reduce(values, axis=0)
    else:
        lo, hi = statistic.percentiles or (0.0, 100.0)
        low[some], high[some] = _percentile(ordered, n, lo), _percentile(ordered, n, hi)
    return center, low, high, count


def _percentile(ordered: np.ndarray, n: np.ndarray, q: float) -> np.ndarray:
    """The ``q``-th percentile of each column's first ``n`` values of ``ordered`` (sorted),
    interpolated linearly as ``np.percentile`` does; vectorised over the columns, where
    ``np.nanpercentile`` loops over them in Python (a hundred times slower here)."""
    position = (n - 1) * (q / 100.0)
    below = np.floor(position).astype(np.int64)
    above = np.minimum(below + 1, n - 1)
    columns = np.arange(n.size)
    a, b = ordered[below, columns], ordered[above, columns]
    return a + (b - a) * (position - below)
