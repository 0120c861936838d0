"""numba kernels behind :func:`sumlens.writer.histogram.histogram_proto` for TensorFlow's
default edges: the counts of ``numpy.histogram(values, edges)``, with the sum and sum of
squares in float64 and the minimum and maximum (NaN when a value is, as numpy's) that
torch's writer takes beside them, all in one pass over the array.

A value's bucket is read from a table (:func:`sumlens.writer.histogram.cell_table`) indexed
by the top bits of the value: its sign, its exponent and the first :data:`MANTISSA_BITS`
bits of its mantissa. Such a cell of values is far narrower than a bucket (the edges grow by
1.1), so almost every cell lies within one bucket and its entry is that bucket; an entry of
``-(3 + e)`` says the cell holds edge ``e`` (one comparison places the value); ``-1`` that
the cell lies outside the edges (or holds NaN and infinities): not counted, as numpy
leaves them out; ``-2`` that the cell holds an outer edge, placed by a search. float32
values are looked up by their own bits, the others (float64, integers) as float64. The
array is read a chunk at a time, each chunk counted and then summed while it is still in
the cache (one trip through memory instead of four). Counts are indexed by unsigned
integers: numba checks a signed index for wrap-around, on every count (10% of the kernel).
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
CHUNK = 4096
"""Values per round: a chunk stays in the L1 cache between the counting and the sums."""


@numba.njit(cache=True, nogil=True)
def _count(bits, shift, values, table, edges, counts):  # pragma: no cover - compiled
    """Count each of ``values`` (whose raw ``bits`` give its cell) into its bucket."""
    last = edges.size - 1
    for j in range(values.size):
        code = table[bits[j] >> shift]
        if code >= 0:
            counts[np.uint32(code)] += 1
        elif code <= EDGE:
            edge = EDGE - code
            above = np.float64(values[j]) >= edges[np.uint32(edge)]
            counts[np.uint32(edge - 1 + above)] += 1
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


def _statistics_kernel(key_type, top):
    """Compile :func:`statistics` for floats whose bits fit ``key_type`` (int32/int64, of
    ``top + 1`` bits): the cast back to ``key_type`` keeps the loop in that width (numba
    would widen it), so twice as many float32 keys fit a vector. A closure per width
    because the cast must be a compile-time constant; each is only ever called with its own
    float dtype, so their cached machine code never collides."""
    mask = (1 << top) - 1

    @numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
    def statistics(values, keys, total, squares, lowest, highest):  # pragma: no cover
        """``total`` and ``squares`` plus the float64 sum and sum of squares of
        ``values``; ``lowest`` and ``highest`` widened to the order keys of ``values``
        (``keys``: the same memory as signed integers). ``key ^ ((key >> top) & mask)``
        orders the keys as the floats, a NaN beyond the infinity of its sign."""
        for j in range(values.size):
            v = np.float64(values[j])
            total += v
            squares += v * v
            key = key_type(keys[j] ^ ((keys[j] >> top) & mask))
            lowest = min(lowest, key)
            highest = max(highest, key)
        return total, squares, lowest, highest

    return statistics


_statistics32 = _statistics_kernel(np.int32, 31)
_statistics64 = _statistics_kernel(np.int64, 63)


@numba.njit(cache=True, nogil=True)
def _extremes(floats, keys, lowest, highest):  # pragma: no cover - compiled
    """The minimum and maximum as float64 from their order keys (:func:`_statistics_kernel`),
    both NaN when either is (numpy's ``min`` and ``max`` of an array holding a NaN);
    ``floats`` is two values of the array's type, ``keys`` the same memory as integers."""
    top = keys.itemsize * 8 - 1
    mask = (1 << top) - 1
    keys[0] = lowest ^ ((lowest >> top) & mask)
    keys[1] = highest ^ ((highest >> top) & mask)
    low, high = np.float64(floats[0]), np.float64(floats[1])
    if np.isnan(low) or np.isnan(high):
        return np.nan, np.nan
    return low, high


@numba.njit(cache=True, nogil=True)
def float32_histogram(values, table, edges):  # pragma: no cover - compiled
    """(counts, sum, sum of squares, min, max) of float32 ``values`` (at least one)."""
    counts = np.zeros(edges.size - 1, np.int64)
    bits = values.view(np.uint32)
    keys = values.view(np.int32)
    total, squares = 0.0, 0.0
    lowest, highest = np.int32(2**31 - 1), np.int32(-(2**31))
    for start in range(0, values.size, CHUNK):
        stop = min(start + CHUNK, values.size)
        part = values[start:stop]
        _count(bits[start:stop], FLOAT32_SHIFT, part, table, edges, counts)
        total, squares, lowest, highest = _statistics32(
            part, keys[start:stop], total, squares, lowest, highest
        )
    extremes = np.empty(2, np.float32)
    low, high = _extremes(extremes, extremes.view(np.int32), lowest, highest)
    return counts, total, squares, low, high


@numba.njit(cache=True, nogil=True)
def float64_histogram(values, table, edges):  # pragma: no cover - compiled
    """(counts, sum, sum of squares, min, max) of ``values`` (at least one) of any real
    type, as float64."""
    counts = np.zeros(edges.size - 1, np.int64)
    buffer = np.empty(CHUNK, np.float64)
    bits = buffer.view(np.uint64)
    keys = buffer.view(np.int64)
    total, squares = 0.0, 0.0
    lowest, highest = np.int64(2**63 - 1), np.int64(-(2**63))
    for start in range(0, values.size, CHUNK):
        n = min(CHUNK, values.size - start)
        for j in range(n):
            buffer[j] = np.float64(values[start + j])
        _count(bits[:n], FLOAT64_SHIFT, buffer[:n], table, edges, counts)
        total, squares, lowest, highest = _statistics64(
            buffer[:n], keys[:n], total, squares, lowest, highest
        )
    extremes = np.empty(2, np.float64)
    low, high = _extremes(extremes, extremes.view(np.int64), lowest, highest)
    return counts, total, squares, low, high
