"""numba kernels behind :func:`sumlens.summary.histogram.compute_histogram`.

All compiled with ``nogil``. :func:`bucket_counts` first places each value by arithmetic
in a branch-free loop the compiler vectorises, marking :data:`UNSURE` the values that
lie outside the edges or within a tolerance of a bucket boundary, where only the exactly
rounded edges can decide; it then tallies the marks in four interleaved rows (so
repeated buckets do not wait on each other's stores) and places the few unsure values
against the edges. The counts equal ``numpy.histogram`` with the same edges.
:func:`finite_sum` sums an all-finite array; :func:`census` is the slow statistics pass
for arrays with NaN or infinities.
"""

from __future__ import annotations

import numpy as np

from sumlens._numba import numba

UNSURE = 255
"""The mark of a value left to exact placement (there are at most 90 buckets)."""
_EPS = float(np.finfo(np.float64).eps)


@numba.njit(cache=True, nogil=True)
def census(values):  # pragma: no cover - compiled
    lo = np.inf
    hi = -np.inf
    total = 0.0
    finite = 0
    nan = 0
    pos = 0
    neg = 0
    for i in range(values.size):
        v = np.float64(values[i])
        if v != v:
            nan += 1
        elif v == np.inf:
            pos += 1
        elif v == -np.inf:
            neg += 1
        else:
            finite += 1
            total += v
            if v < lo:
                lo = v
            if v > hi:
                hi = v
    return lo, hi, total, finite, nan, pos, neg


@numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
def finite_sum(values):  # pragma: no cover - compiled
    total = 0.0
    for i in range(values.size):
        total += np.float64(values[i])
    return total


@numba.njit(cache=True, nogil=True)
def boundary_tolerance(edges):  # pragma: no cover - compiled
    """How near a boundary (in bucket widths) arithmetic placement may be wrong.

    The edges are ``linspace`` rounded to the array's dtype, so edge ``j`` lies near, not
    at, ``first + j * width``: the largest measured gap, plus float64 rounding of the
    placement itself.
    """
    bins = edges.size - 1
    first = edges[0]
    last = edges[bins]
    width = (last - first) / bins
    gap = 0.0
    for j in range(bins + 1):
        gap = max(gap, abs(edges[j] - (first + j * width)))
    return (gap + (max(abs(first), abs(last)) + bins * width) * 8 * _EPS) / width


@numba.njit(cache=True, nogil=True, inline="always")
def _exact_bucket(v, edges, k):  # pragma: no cover - compiled
    bins = edges.size - 1
    while k > 0 and v < edges[k]:
        k -= 1
    while k < bins - 1 and v >= edges[k + 1]:
        k += 1
    return k


@numba.njit(cache=True, nogil=True)
def bucket_counts(values, edges):  # pragma: no cover - compiled
    bins = edges.size - 1
    first = edges[0]
    last = edges[bins]
    scale = bins / (last - first)
    tolerance = boundary_tolerance(edges)
    upper = 1.0 - tolerance
    n = values.size
    marks = np.empty(n, dtype=np.uint8)
    for i in range(n):
        position = (np.float64(values[i]) - first) * scale
        whole = np.floor(position)
        fraction = position - whole
        sure = (fraction >= tolerance) & (fraction <= upper) & (whole >= 0.0) & (whole < bins)
        marks[i] = np.uint8(whole) if sure else np.uint8(UNSURE)
    rows = np.zeros((4, 256), dtype=np.int64)
    stop = n - n % 4
    for i in range(0, stop, 4):
        rows[0, marks[i]] += 1
        rows[1, marks[i + 1]] += 1
        rows[2, marks[i + 2]] += 1
        rows[3, marks[i + 3]] += 1
    for i in range(stop, n):
        rows[0, marks[i]] += 1
    counts = rows[0, :bins] + rows[1, :bins] + rows[2, :bins] + rows[3, :bins]
    unsure = rows[0, UNSURE] + rows[1, UNSURE] + rows[2, UNSURE] + rows[3, UNSURE]
    i = 0
    while unsure > 0:
        if marks[i] == UNSURE:
            unsure -= 1
            v = np.float64(values[i])
            if v >= first and v <= last:  # not NaN, not infinite, not outside the edges
                k = min(int((v - first) * scale), bins - 1)
                counts[_exact_bucket(v, edges, k)] += 1
        i += 1
    return counts
