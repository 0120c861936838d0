"""numba kernels behind :func:`sumlens.summary.histogram.compute_histogram`.

All compiled with ``nogil``; one call, :func:`buckets` (or :func:`counts_within`, for
integers, whose edges the caller computes), does the work after numpy's min and max
(few code paths: in a training step's cold caches each extra numpy call costs tens of
microseconds). :func:`bucket_counts` first places each value by arithmetic
in a branch-free loop the compiler vectorises, marking :data:`UNSURE` the values that
lie outside the edges or within a tolerance of a bucket boundary, where only the exactly
rounded edges can decide; chunk by chunk, it then tallies the marks in four interleaved rows (so
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
CHUNK = 16384
"""Values placed per round: their marks stay in the L1 cache and need no large allocation
(a fresh large buffer per call costs page faults that outweigh the work)."""
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


def _float_histogram_kernel(key_type, shift, mask):
    """Compile :func:`float_histogram` for floats whose bits fit ``key_type`` (int32/int64).

    ``key ^ ((key >> shift) & mask)`` maps a float's bits, read as a signed integer, to an
    integer ordered as the floats are; the cast back to ``key_type`` keeps the loop in
    that width (numba would widen it), so the integer min/max vectorise. A closure per
    width because the cast must be a compile-time constant; each is only ever called with
    its own float dtype, so their cached machine code never collides.
    """

    @numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
    def float_histogram(values, bins, single):  # pragma: no cover - compiled
        keys = values.view(key_type)
        lo = key_type(keys[0] ^ ((keys[0] >> shift) & mask))
        hi = lo
        total = 0.0
        for i in range(values.size):  # extremes and the float64 sum (reassociated) in one pass
            key = key_type(keys[i] ^ ((keys[i] >> shift) & mask))
            lo = min(lo, key)
            hi = max(hi, key)
            total += np.float64(values[i])
        extremes = np.empty(2, dtype=key_type)
        extremes[0] = lo ^ ((lo >> shift) & mask)
        extremes[1] = hi ^ ((hi >> shift) & mask)
        low = np.float64(extremes.view(values.dtype)[0])
        high = np.float64(extremes.view(values.dtype)[1])
        if not (np.isfinite(low) and np.isfinite(high)):  # a NaN orders beyond the infinities
            nothing = np.empty(0)
            return False, low, high, total, nothing, nothing, np.empty(0, dtype=np.int64)
        left, width, counts = buckets(values, low, high, bins, single)
        return True, low, high, total, left, width, counts

    return float_histogram


@numba.njit(cache=True, nogil=True)
def _numpy_linspace(start, stop, bins):  # pragma: no cover - compiled
    """``numpy.linspace(start, stop, bins + 1)``, operation for operation (same bits)."""
    edges = np.empty(bins + 1)
    delta = stop - start
    step = delta / bins
    for j in range(bins + 1):
        edges[j] = (j / bins) * delta + start if step == 0 else j * step + start
    edges[bins] = stop
    return edges


@numba.njit(cache=True, nogil=True)
def linspace(start, stop, bins):  # pragma: no cover - compiled
    """:func:`sumlens.summary.histogram.float_edges`: ``numpy.linspace`` (same bits), or
    when ``stop - start`` overflows float64, that of the halved ends, doubled (exact)."""
    if np.isfinite(stop - start):
        return _numpy_linspace(start, stop, bins)
    edges = _numpy_linspace(start * 0.5, stop * 0.5, bins)
    for j in range(bins + 1):
        edges[j] *= 2.0
    return edges


@numba.njit(cache=True, nogil=True)
def buckets(values, lo, hi, bins, single):  # pragma: no cover - compiled
    """(left edges, widths, counts) of MindSpore's ``bins`` buckets over ``lo .. hi``;
    ``single``: the values are float32 (placed in float32 arithmetic when it is exact).

    Edges: ``linspace`` in float64 rounded to the array's dtype and widths taken in that
    dtype, as MindSpore does; all equal values: ``lo - 0.5 .. hi + 0.5`` in float64.
    """
    if lo == hi:
        edges = linspace(lo - 0.5, hi + 0.5, bins)
        widths = edges[1:] - edges[:-1]
    else:
        edges = linspace(lo, hi, bins)
        rounded = np.empty(bins + 1, dtype=values.dtype)
        for j in range(bins + 1):
            rounded[j] = edges[j]
        widths = np.empty(bins)
        for j in range(bins):
            widths[j] = rounded[j + 1] - rounded[j]
            edges[j] = rounded[j]
        edges[bins] = rounded[bins]
    return edges[:bins].copy(), widths, counts_within(values, edges, single)


@numba.njit(cache=True, nogil=True)
def counts_within(values, edges, single):  # pragma: no cover - compiled
    """Counts of ``values`` in the buckets of the float64 ``edges`` (as ``numpy.histogram``);
    ``single``: the values are float32 (placed in float32 arithmetic when it is exact)."""
    bins = edges.size - 1
    spread = edges[bins] - edges[0]
    if not (np.isfinite(spread) and spread / bins > 0.0 and np.isfinite(bins / spread)):
        # Placement by arithmetic needs a representable bucket width: not so for a range
        # wider than the largest float64, one of subnormals, or lo == hi beyond 2**53
        # (where +-0.5 rounds away and every edge is the same).
        return exact_counts(values, edges)
    single = single and np.float32(edges[0]) == edges[0]
    return bucket_counts(values, edges, single)


@numba.njit(cache=True, nogil=True)
def exact_counts(values, edges):  # pragma: no cover - compiled
    """Counts of ``values`` in the buckets of ``edges`` by comparison alone (slow, exact):
    the largest ``k`` with ``edges[k] <= v``, the last bucket closed, as ``numpy.histogram``."""
    bins = edges.size - 1
    counts = np.zeros(bins, dtype=np.int64)
    for i in range(values.size):
        v = np.float64(values[i])
        if v >= edges[0] and v <= edges[bins]:
            counts[_exact_bucket(v, edges, 0)] += 1
    return counts


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


@numba.njit(cache=True, nogil=True, inline="always")
def _place64(chunk, marks, first, scale, tolerance, bins):  # pragma: no cover - compiled
    upper = 1.0 - tolerance
    for i in range(chunk.size):
        position = (np.float64(chunk[i]) - first) * scale
        whole = np.floor(position)
        fraction = position - whole
        sure = (fraction >= tolerance) & (fraction <= upper) & (whole >= 0.0) & (whole < bins)
        marks[i] = np.uint8(whole) if sure else np.uint8(UNSURE)


@numba.njit(cache=True, nogil=True, inline="always")
def _place32(chunk, marks, first, scale, tolerance, bins):  # pragma: no cover - compiled
    # float32 lanes are twice as many: each of the three roundings (difference, scale,
    # product) moves the position by at most 2**-24 relative, which ``tolerance`` covers.
    origin = np.float32(first)
    factor = np.float32(scale)
    lower = np.float32(tolerance)
    upper = np.float32(1.0) - lower
    count = np.float32(bins)
    for i in range(chunk.size):
        position = (np.float32(chunk[i]) - origin) * factor
        whole = np.floor(position)
        fraction = position - whole
        sure = (fraction >= lower) & (fraction <= upper)
        sure = sure & (whole >= np.float32(0.0)) & (whole < count)
        marks[i] = np.uint8(whole) if sure else np.uint8(UNSURE)


@numba.njit(cache=True, nogil=True)
def bucket_counts(values, edges, single):  # pragma: no cover - compiled
    """Counts of ``values`` in the buckets of float64 ``edges``; ``single``: place in
    float32 arithmetic (only for float32 values and a float32 ``edges[0]``)."""
    bins = edges.size - 1
    first = edges[0]
    last = edges[bins]
    scale = bins / (last - first)
    tolerance = boundary_tolerance(edges)
    if single:
        tolerance = tolerance * 1.01 + bins * 4.0 * 2.0**-24
    rows = np.zeros((4, 256), dtype=np.int64)
    marks = np.empty(min(values.size, CHUNK), dtype=np.uint8)
    for start in range(0, values.size, CHUNK):
        chunk = values[start : start + CHUNK]
        n = chunk.size
        if single:
            _place32(chunk, marks, first, scale, tolerance, bins)
        else:
            _place64(chunk, marks, first, scale, tolerance, bins)
        before = rows[0, UNSURE] + rows[1, UNSURE] + rows[2, UNSURE] + rows[3, UNSURE]
        stop = n - n % 4
        for i in range(0, stop, 4):
            rows[0, marks[i]] += 1
            rows[1, marks[i + 1]] += 1
            rows[2, marks[i + 2]] += 1
            rows[3, marks[i + 3]] += 1
        for i in range(stop, n):
            rows[0, marks[i]] += 1
        unsure = rows[0, UNSURE] + rows[1, UNSURE] + rows[2, UNSURE] + rows[3, UNSURE] - before
        i = 0
        while unsure > 0:
            if marks[i] == UNSURE:
                unsure -= 1
                v = np.float64(chunk[i])
                if v >= first and v <= last:  # not NaN, not infinite, not outside the edges
                    k = _exact_bucket(v, edges, min(int((v - first) * scale), bins - 1))
                    rows[0, k] += 1
            i += 1
    return rows[0, :bins] + rows[1, :bins] + rows[2, :bins] + rows[3, :bins]


FLOAT_HISTOGRAM = {
    np.dtype(np.float32): _float_histogram_kernel(np.int32, 31, 0x7FFF_FFFF),
    np.dtype(np.float64): _float_histogram_kernel(np.int64, 63, 0x7FFF_FFFF_FFFF_FFFF),
}
"""The whole histogram of an all-finite native float32 or float64 array in one
call: ``(all finite, min, max, sum, left edges, widths, counts)`` given the bucket count
for that many finite values; when some value is not finite only the first item holds
(False) and the caller takes the :func:`census` path."""
