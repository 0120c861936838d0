"""Histograms and tensors as MindInsight 2.3.1 computes what it shows of them.

* **Histograms** are re-binned for display: all kept steps of a tag share one range (the
  smallest minimum to the largest maximum of the non-empty ones) and one number of bins
  (from the largest count: one per ten values plus one, 2 or 3 for a handful, at most 30);
  each new bin gets the stored counts in proportion to its overlap with the stored
  buckets, rounded up (:func:`rebin`).
* **Tensors** are read from ``float_data`` as float64 (MindSpore stores every dtype there);
  their statistics count the finite values only and name the counts of negative and
  positive values ``neg_zero_count`` and ``pos_zero_count`` (:func:`statistics`); their
  histogram is binned over the tensor's own range first, then re-binned like histograms.
* A tensor of more than :data:`MAX_TENSOR_COUNT` values is kept without its values.

Nothing is imported from MindInsight; the arithmetic is written to give the same floats.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

MAX_ORIGINAL_BUCKETS = 90
"""A stored histogram with more buckets is not shown at all."""
MAX_TENSOR_COUNT = 10_000_000
MAX_RESPONSE_VALUES = 100_000
"""Values one tensor slice may return."""
MAX_SLICED_DIMS = 2
"""Dimensions a tensor slice may leave whole (``:``)."""

Bucket = tuple[float, float, int]
"""(left edge, width, count)."""


def histogram_bins(count: int) -> int:
    """How many bins MindInsight draws for ``count`` values."""
    if not count:
        return 1
    if count <= 10:
        return 2 if count <= 5 else 3
    return min(math.ceil(count / 10) + 1, 30)  # 30 from 281 values on


@dataclass(frozen=True, slots=True)
class Buckets:
    """A histogram as stored: buckets sorted by left edge, its range and total count.

    ``max``/``min`` of a stored histogram are 0 where the file holds NaN or an infinity.
    """

    buckets: tuple[Bucket, ...]
    max: float
    min: float
    count: int


def stored_histogram(buckets: Sequence[Any], high: float, low: float) -> Buckets | None:
    """A Summary.Histogram's ``buckets``, ``max`` and ``min`` as MindInsight keeps them (None
    for one of more than :data:`MAX_ORIGINAL_BUCKETS` buckets, which it drops); ValueError
    for a negative bucket count (damage: our readers refuse it too)."""
    if len(buckets) > MAX_ORIGINAL_BUCKETS:
        return None
    ordered = sorted(((b.left, b.width, b.count) for b in buckets), key=lambda b: b[0])
    lowest = min((bucket[2] for bucket in ordered), default=0)
    if lowest < 0:
        raise ValueError(f"a histogram with a bucket count of {lowest}")
    count = sum(bucket[2] for bucket in ordered)
    return Buckets(tuple(ordered), _finite_or_zero(high), _finite_or_zero(low), count)


def _finite_or_zero(value: float) -> float:
    return value if math.isfinite(value) else 0.0


def display_range(histograms: Sequence[Buckets]) -> tuple[float, float, int]:
    """(max, min, bins) shared by the kept histograms of one tag (empty ones left out)."""
    high = low = 0.0
    seen = False
    largest = 0
    for histogram in histograms:
        if histogram.count == 0:
            continue
        largest = max(histogram.count, largest)
        if not seen:
            high, low, seen = histogram.max, histogram.min, True
        else:
            high, low = max(high, histogram.max), min(low, histogram.min)
    return high, low, histogram_bins(largest)


def rebin(histogram: Buckets, high: float, low: float, bins: int) -> list[Bucket]:
    """``histogram`` redrawn with ``bins`` equal bins from ``low`` to ``high``."""
    if high == low:
        high, low = high + 0.5, low - 0.5
    width = (high - low) / bins
    if not histogram.count:
        return [(low + width * i, width, 0) for i in range(bins)]
    stored = histogram.buckets
    drawn: list[Bucket] = []
    at = 0
    left_edge, span, count = stored[0]
    for i in range(bins):
        left = low + width * i
        right = left + width
        estimate = 0.0
        if right <= left_edge:
            drawn.append((left, width, math.ceil(estimate)))
            continue
        while left >= left_edge + span:
            at += 1
            if at >= len(stored):
                break
            left_edge, span, count = stored[at]
        while at < len(stored):
            left_edge, span, count = stored[at]
            overlap = _overlap(left, right, left_edge, left_edge + span)
            estimate += count if not span else overlap / span * count
            if right > left_edge + span:
                at += 1
            else:
                break
        drawn.append((left, width, math.ceil(estimate)))
    return drawn


def _overlap(low1: float, high1: float, low2: float, high2: float) -> float:
    """Length of the intersection of [low1, high1] and [low2, high2] (MindInsight's order
    of operations, so equal inputs give equal floats)."""
    if low1 <= low2:
        if high1 <= low2:
            return high1 - high1
        if high1 <= high2:
            return high1 - low2
        return high2 - low2
    if high2 <= low1:
        return high2 - high2
    if high2 <= high1:
        return high2 - low1
    return high1 - low1


# ---------------------------------------------------------------------- tensors


@dataclass(frozen=True, slots=True)
class Statistics:
    """What MindInsight computes of a tensor (finite values only, except the counts)."""

    max: float = 0.0
    min: float = 0.0
    avg: float = 0.0
    count: int = 0
    nan_count: int = 0
    neg_inf_count: int = 0
    pos_inf_count: int = 0
    negative_count: int = 0
    positive_count: int = 0
    zero_count: int = 0

    def as_json(self, overall: Statistics) -> dict[str, Any]:
        """The ``statistics`` object of a tensor route: these, and ``overall`` (the whole
        tensor's) under ``overall_*`` names."""
        return {
            "max": self.max,
            "min": self.min,
            "avg": self.avg,
            "count": self.count,
            "nan_count": self.nan_count,
            "neg_inf_count": self.neg_inf_count,
            "pos_inf_count": self.pos_inf_count,
            "overall_max": overall.max,
            "overall_min": overall.min,
            "overall_avg": overall.avg,
            "overall_count": overall.count,
            "overall_nan_count": overall.nan_count,
            "overall_neg_inf_count": overall.neg_inf_count,
            "overall_pos_inf_count": overall.pos_inf_count,
            "overall_zero_count": float(overall.zero_count),
            "overall_neg_zero_count": float(overall.negative_count),
            "overall_pos_zero_count": float(overall.positive_count),
        }


def statistics(values: np.ndarray) -> Statistics:
    """The statistics of a float64 array (see :class:`Statistics`)."""
    finite = np.isfinite(values)
    valid = int(np.count_nonzero(finite))
    counts = {
        "count": int(values.size),
        "nan_count": int(np.count_nonzero(np.isnan(values))),
        "neg_inf_count": int(np.count_nonzero(np.isneginf(values))),
        "pos_inf_count": int(np.count_nonzero(np.isposinf(values))),
    }
    if not valid:
        return Statistics(**counts)
    # masked values are filled in and the whole array reduced, as numpy.ma does
    total = float(np.where(finite, values, 0.0).sum(dtype=np.float64))
    kept = values[finite]
    return Statistics(
        max=float(np.where(finite, values, -np.inf).max()),
        min=float(np.where(finite, values, np.inf).min()),
        avg=total / valid,
        negative_count=int(np.count_nonzero(kept < 0)),
        positive_count=int(np.count_nonzero(kept > 0)),
        zero_count=int(np.count_nonzero(kept == 0)),
        **counts,
    )


@dataclass(frozen=True, slots=True)
class TensorSummary:
    """What stays in memory of a tensor value: its shape, type, statistics and histogram.

    The values themselves are read again from the file when a slice is asked for.
    """

    dims: tuple[int, ...]
    data_type: int
    stats: Statistics
    histogram: Buckets
    too_large: bool


def tensor_values(dims: Sequence[int], float_data: Sequence[float]) -> np.ndarray:
    """A tensor's values as MindInsight holds them: float64 of ``dims`` (1-D empty when
    ``float_data`` is empty); raises ValueError when they do not fill ``dims``."""
    if not len(float_data):
        return np.zeros(0)
    return np.asarray(float_data, dtype=np.float64).reshape(tuple(dims))


def summarize_tensor(dims: Sequence[int], data_type: int, values: np.ndarray) -> TensorSummary:
    """The :class:`TensorSummary` of a tensor's values."""
    too_large = values.size > MAX_TENSOR_COUNT
    if too_large:
        values = np.zeros(0)
    stats = statistics(values)
    buckets = _tensor_buckets(values, stats)
    count = sum(bucket[2] for bucket in buckets)
    histogram = Buckets(tuple(buckets), stats.max, stats.min, count)
    return TensorSummary(tuple(dims), data_type, stats, histogram, too_large)


def _tensor_buckets(values: np.ndarray, stats: Statistics) -> list[Bucket]:
    valid = stats.count - stats.nan_count - stats.neg_inf_count - stats.pos_inf_count
    if not valid:
        return []
    first, last = stats.min, stats.max
    if not first < last:
        first, last = first - 0.5, last + 0.5
    edges = np.linspace(first, last, histogram_bins(valid) + 1, dtype=values.dtype)
    counts, edges = np.histogram(values, bins=edges)
    return [
        (float(left), float(right - left), int(count))
        for count, left, right in zip(counts, edges, edges[1:], strict=False)
    ]


def tensor_json(values: np.ndarray) -> Any:
    """A slice's values for JSON: nested lists (a 0-d slice: its value); with any NaN or
    infinity, those as the strings ``NAN``, ``INF`` and ``-INF``."""
    if np.isfinite(values).all():
        return values.tolist()
    return _marked(values)


def _marked(values: np.ndarray) -> list[Any]:
    out: list[Any] = []
    for item in values:
        if isinstance(item, np.ndarray):
            out.append(_marked(item))
        elif np.isnan(item):
            out.append("NAN")
        elif np.isneginf(item):
            out.append("-INF")
        elif np.isposinf(item):
            out.append("INF")
        else:
            out.append(float(item))
    return out
