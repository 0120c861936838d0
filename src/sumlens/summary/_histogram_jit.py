"""numba kernels behind :func:`sumlens.summary.histogram.compute_histogram`.

Two passes, both compiled with ``nogil`` so a writer thread running them does not hold
the interpreter lock the training thread needs: one for the statistics (finite min,
max, float64 sum, NaN/inf counts), one that places each finite value in its bucket by
arithmetic and then corrects the guess against the exact edges, so the counts equal
``numpy.histogram`` with the same edges.
"""

from __future__ import annotations

import numpy as np

from sumlens._numba import numba


@numba.njit(cache=True, nogil=True)
def statistics(values):  # pragma: no cover - compiled
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


@numba.njit(cache=True, nogil=True)
def bucket_counts(values, edges):  # pragma: no cover - compiled
    bins = edges.size - 1
    counts = np.zeros(bins, dtype=np.int64)
    first = edges[0]
    last = edges[bins]
    scale = bins / (last - first)
    for i in range(values.size):
        v = np.float64(values[i])
        if not (v >= first and v <= last):  # NaN, infinities, and values outside the edges
            continue
        k = int((v - first) * scale)
        if k >= bins:
            k = bins - 1
        while k > 0 and v < edges[k]:
            k -= 1
        while k < bins - 1 and v >= edges[k + 1]:
            k += 1
        counts[k] += 1
    return counts
