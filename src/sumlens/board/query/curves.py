"""What the scalars view draws: smoothing on full resolution, then a faithful downsample.

TensorBoard smooths what it has drawn, so its curve changes with zoom and with how many
points it kept (tensorflow/tensorboard#1518, #6829). Here the smoothed series is computed
on every point of the series first, and only then are points picked: a smoothed value
shown at a step is the same whatever the zoom or the point budget.

* ``ema``: TensorBoard's de-biased exponential moving average with weight ``w``
  (``last = w * last + (1 - w) * y``, divided by ``1 - w**n`` after ``n`` finite values).
  Non-finite values are shown as they are and do not feed the average.
* ``average``: the mean of the last ``k`` finite values, ``k = round(1 / (1 - w))``.

The downsample keeps, for each of ``points / 2`` equal-width buckets along x, the points
of the lowest and highest value (tsdownsample's min-max, NaN-aware), plus the first and
last point: spikes survive any zoom level, and it is deterministic. Below
:data:`MIN_BUCKETED` points (tsdownsample needs two buckets besides the ends) the points
between the ends are one bucket: its lowest and highest (its first NaN when it holds one),
or with room for one only, the one further outside the ends' range.

The *envelope* (:func:`envelope`) is for a line drawn from fewer points than it has, or
smoothed: the lowest and highest raw value of each bucket, on full resolution, so a spike
shows as a band even where the line passes below it (tensorflow/tensorboard#6830). Its
buckets hold equal counts of consecutive points (``np.array_split``'s), as many as the
downsample's: each is drawn from its first point to its last.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from tsdownsample import NaNMinMaxDownsampler

Method = Literal["ema", "average"]
METHODS = ("ema", "average")
MAX_POINTS = 20_000
"""The most points one series may ask for."""
MIN_POINTS = 2
"""The fewest: the first and the last."""
MIN_BUCKETED = 6
"""The fewest points drawn with two min-max buckets and the ends."""


def smooth(values: np.ndarray, weight: float, method: Method = "ema") -> np.ndarray:
    """The smoothed copy of ``values`` (float64); ``weight`` 0 returns them unchanged."""
    values = np.asarray(values, dtype=np.float64)
    if weight <= 0 or values.size == 0:
        return values.copy()
    finite = np.isfinite(values)
    every = bool(finite.all())
    y = values if every else values[finite]
    if y.size == 0:
        return values.copy()
    if method == "ema":
        smoothed = _exponential(y, weight)
        # 1 - w**n is 1.0 in float64 once w**n < 2**-53: only the first terms need dividing
        terms = min(y.size, int(np.ceil(-53 * np.log(2) / np.log(weight))) + 1)
        smoothed[:terms] /= 1.0 - np.power(weight, np.arange(1, terms + 1, dtype=np.float64))
    else:
        window = max(1, round(1.0 / (1.0 - weight)))
        sums = np.cumsum(y)
        smoothed = sums.copy()
        smoothed[window:] -= sums[:-window]
        smoothed /= np.minimum(np.arange(1, y.size + 1), window)
    if every:
        return smoothed
    out = values.copy()
    out[finite] = smoothed
    return out


def _exponential(y: np.ndarray, weight: float) -> np.ndarray:
    """``s[k] = w * s[k-1] + (1 - w) * y[k]`` (from 0) as a parallel prefix scan.

    Each pass adds the sum of the next lags (1, 2, 4, ...) at once, so the loop runs
    ~log2(lags) vectorised passes instead of one Python step per point; it stops once the
    lags left weigh less than 2**-60 of a value (w=0.9: 9 passes; 0.999: 16).
    """
    smoothed = (1.0 - weight) * y
    needed = -60.0 * np.log(2.0) / np.log(weight)  # lags that still matter
    shift, factor = 1, weight
    while shift < smoothed.size and shift < needed:  # lags below `shift` are summed
        smoothed[shift:] += factor * smoothed[:-shift]  # the right side is computed first
        shift, factor = 2 * shift, factor * factor
    return smoothed


def pick(x: np.ndarray, y: np.ndarray, points: int) -> np.ndarray:
    """Indices (ascending) of at most ``points`` points that keep the curve's extremes."""
    if points < MIN_POINTS:
        raise ValueError(f"points={points!r} is too few: give at least {MIN_POINTS}")
    n = x.size
    if n <= points:
        return np.arange(n)
    if points < MIN_BUCKETED:
        chosen = _one_bucket(np.asarray(y, dtype=np.float64), points - 2)
    else:
        chosen = NaNMinMaxDownsampler().downsample(
            np.ascontiguousarray(x), np.ascontiguousarray(y), n_out=(points - 2) // 2 * 2
        )
    return np.unique(np.concatenate(([0], np.asarray(chosen, dtype=np.int64), [n - 1])))


def _one_bucket(y: np.ndarray, room: int) -> np.ndarray:
    """At most ``room`` indices of the points between the ends of ``y`` (2 or more values)
    that show its extremes, as one NaN-aware min-max bucket would (see the module doc)."""
    inner = y[1:-1]
    if room <= 0 or inner.size == 0:
        return np.empty(0, dtype=np.int64)
    gaps = np.flatnonzero(np.isnan(inner))
    if gaps.size:
        return gaps[:1] + 1
    low, high = int(np.argmin(inner)), int(np.argmax(inner))
    if room >= 2:
        return np.array([low, high], dtype=np.int64) + 1
    below = min(y[0], y[-1]) - inner[low]
    above = inner[high] - max(y[0], y[-1])
    return np.array([low if below > above else high], dtype=np.int64) + 1


def envelope_buckets(count: int, points: int) -> np.ndarray:
    """The first index of each envelope bucket of ``count`` points drawn with ``points``:
    ``np.array_split(np.arange(count), b)``'s, ``b = min(count, max(1, (points - 2) // 2))``."""
    buckets = min(count, max(1, (points - 2) // 2))
    if buckets == 0:
        return np.empty(0, dtype=np.int64)
    size, extra = divmod(count, buckets)
    sizes = np.full(buckets, size, dtype=np.int64)
    sizes[:extra] += 1
    return np.concatenate(([0], np.cumsum(sizes)[:-1]))


def envelope(values: np.ndarray, points: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per envelope bucket of ``values``: its first and last index, then its lowest and
    highest value, each repeated twice (``[first, last, ...]``, ``[lo, lo, ...]``,
    ``[hi, hi, ...]``) so the band is drawn as two lines over the bucket.

    NaN is skipped (a bucket of NaN only gives NaN: a gap in the band).
    """
    values = np.asarray(values, dtype=np.float64)
    starts = envelope_buckets(values.size, points)
    if starts.size == 0:
        empty = np.empty(0)
        return np.empty(0, dtype=np.int64), empty, empty
    ends = np.append(starts[1:], values.size) - 1
    with np.errstate(invalid="ignore"):  # an all-NaN bucket: NaN, said above
        low = np.fmin.reduceat(values, starts)
        high = np.fmax.reduceat(values, starts)
    return (
        np.column_stack((starts, ends)).ravel(),
        np.repeat(low, 2),
        np.repeat(high, 2),
    )
