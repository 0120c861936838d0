"""numba kernel behind :func:`sumlens.writer.histogram.histogram_proto` for TensorFlow's
default edges: the counts of ``numpy.histogram(values, edges)`` and the statistics torch's
writer takes (min, max, sum, sum of squares, in float64), in one call.

Values are taken :data:`CHUNK` at a time into a float64 buffer. Loops that the compiler
vectorises gather the statistics and guess each value's bucket from its bits: the
exponent and the mantissa are read back as floats (OR-ed into the bits of a float whose
value is known, so no integer-to-float conversion is needed), and a quadratic in the
mantissa stands for the rest of ``log2`` (within 0.04 of a bucket, the edges growing by
1.1). A last loop places each guess exactly against the edges (rarely a step) and counts
it. Out-of-range values and NaN are not counted, as numpy leaves them out; a NaN makes
every statistic NaN, as numpy's does.
"""

from __future__ import annotations

import math

import numpy as np

from sumlens._numba import numba

CHUNK = 8192
LOG2_SMALLEST = math.log2(1e-12)
"""log2 of the smallest positive edge."""
PER_LOG2 = 1.0 / math.log2(1.1)
"""Buckets per doubling."""
_C1 = 1.3398500028846252
_C2 = 1.0 - _C1
"""``log2(1 + t) ~ t * (C1 + C2 * t)`` on [0, 1): exact at 0, 0.5 and 1."""
_TWO_52_BITS = 0x4330000000000000
"""The bits of 2**52: OR-ing an integer below 2**52 into them gives 2**52 + that integer."""
_ONE_BITS = 0x3FF0000000000000
"""The bits of 1.0: OR-ing a mantissa into them gives 1.mantissa."""
_MANTISSA = 0xFFFFFFFFFFFFF


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def tensorflow_histogram(values, edges, center):  # pragma: no cover - compiled
    buckets = edges.size - 1
    counts = np.zeros(buckets, np.int64)
    buffer = np.empty(CHUNK, np.float64)
    bits = buffer.view(np.int64)
    exponents = np.empty(CHUNK, np.int64)
    mantissas = np.empty(CHUNK, np.int64)
    exponent_values = exponents.view(np.float64)
    mantissa_values = mantissas.view(np.float64)
    guesses = np.empty(CHUNK, np.float64)
    top = np.float64(buckets - 1)
    lo = np.inf
    hi = -np.inf
    total = 0.0
    squares = 0.0
    nan = 0
    first = edges[0]
    last = edges[buckets]
    for start in range(0, values.size, CHUNK):
        n = min(CHUNK, values.size - start)
        for j in range(n):
            buffer[j] = np.float64(values[start + j])
        for j in range(n):
            v = buffer[j]
            lo = min(lo, v)
            hi = max(hi, v)
            total += v
            squares += v * v
            nan += v != v
        for j in range(n):
            b = bits[j]
            exponents[j] = ((b >> 52) & 0x7FF) | _TWO_52_BITS
            mantissas[j] = (b & _MANTISSA) | _ONE_BITS
        for j in range(n):
            t = mantissa_values[j] - 1.0
            log2 = exponent_values[j] - 4503599627370496.0 - 1023.0 + t * (_C1 + _C2 * t)
            k = max(np.floor((log2 - LOG2_SMALLEST) * PER_LOG2), -1.0)
            guess = center + 1.0 + k if buffer[j] >= 0.0 else center - 2.0 - k
            guesses[j] = min(max(guess, 0.0), top)
        for j in range(n):
            v = buffer[j]
            if not (first <= v <= last):  # outside the edges, or NaN
                continue
            g = np.int64(guesses[j])
            while g > 0 and v < edges[g]:
                g -= 1
            while g < buckets - 1 and v >= edges[g + 1]:
                g += 1
            counts[g] += 1
    if nan:
        lo = hi = total = squares = np.nan
    return counts, lo, hi, total, squares
