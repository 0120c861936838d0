"""numba kernels behind :func:`sumlens.writer.histogram.histogram_proto` for TensorFlow's
default edges: the counts of ``numpy.histogram(values, edges)``, and the sum and sum of
squares in float64 that torch's writer takes beside numpy's min and max.

A value's bucket is read from a table (:func:`sumlens.writer.histogram.cell_table`) indexed
by the top bits of the value: its sign, its exponent and the first :data:`MANTISSA_BITS`
bits of its mantissa. Such a cell of values is far narrower than a bucket (the edges grow by
1.1), so almost every cell lies within one bucket and its entry is that bucket; an entry of
``-(3 + e)`` says the cell holds edge ``e`` (one comparison places the value); ``-1`` that
the cell lies outside the edges (or holds NaN and infinities): not counted, as numpy
leaves them out; ``-2`` that the cell holds an outer edge, placed by a search. float32
values are looked up by their own bits, the others (float64, integers) as float64, a chunk
at a time.
"""

from __future__ import annotations

import numpy as np

from sumlens._numba import numba

MANTISSA_BITS = 8
"""Mantissa bits in a cell's index: cells of 2**-8 relative width, against buckets of 0.1."""
SKIP = -1
SEARCH = -2
EDGE = -3
"""Entries of the cell table below 0: outside, search, and ``EDGE - e`` for a cell holding
edge ``e``."""
FLOAT32_SHIFT = 32 - 1 - 8 - MANTISSA_BITS
FLOAT64_SHIFT = 64 - 1 - 11 - MANTISSA_BITS
CHUNK = 8192


@numba.njit(cache=True, nogil=True)
def _count(bits, shift, values, table, edges, counts):  # pragma: no cover - compiled
    """Count each of ``values`` (whose raw ``bits`` give its cell) into its bucket."""
    last = edges.size - 1
    for j in range(values.size):
        code = table[bits[j] >> shift]
        if code >= 0:
            counts[code] += 1
        elif code <= EDGE:
            edge = EDGE - code
            counts[edge - 1 + (np.float64(values[j]) >= edges[edge])] += 1
        elif code == SEARCH:
            v = np.float64(values[j])
            if edges[0] <= v <= edges[last]:
                lo, hi = 0, last
                while hi - lo > 1:
                    middle = (lo + hi) // 2
                    if v >= edges[middle]:
                        lo = middle
                    else:
                        hi = middle
                counts[lo] += 1


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _sums(values, total, squares):  # pragma: no cover - compiled
    """``total`` and ``squares`` plus the sum and the sum of squares of ``values``, in
    float64 (a loop the compiler vectorises)."""
    for j in range(values.size):
        v = np.float64(values[j])
        total += v
        squares += v * v
    return total, squares


@numba.njit(cache=True, nogil=True)
def float32_histogram(values, table, edges):  # pragma: no cover - compiled
    counts = np.zeros(edges.size - 1, np.int64)
    _count(values.view(np.uint32), FLOAT32_SHIFT, values, table, edges, counts)
    total, squares = _sums(values, 0.0, 0.0)
    return counts, total, squares


@numba.njit(cache=True, nogil=True)
def float64_histogram(values, table, edges):  # pragma: no cover - compiled
    counts = np.zeros(edges.size - 1, np.int64)
    buffer = np.empty(CHUNK, np.float64)
    bits = buffer.view(np.uint64)
    total, squares = 0.0, 0.0
    for start in range(0, values.size, CHUNK):
        n = min(CHUNK, values.size - start)
        for j in range(n):
            buffer[j] = np.float64(values[start + j])
        _count(bits[:n], FLOAT64_SHIFT, buffer[:n], table, edges, counts)
        total, squares = _sums(buffer[:n], total, squares)
    return counts, total, squares
