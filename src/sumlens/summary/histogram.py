"""Histograms as MindSpore computes them, exactly, and fast.

MindSpore's rule (what MindInsight expects of a histogram record): over the
finite values, ``bins`` = 2 for n <= 5, 3 for n <= 10, n // 10 + 1 for n <= 880, else 90;
edges = ``linspace(min, max, bins + 1)`` computed in float64 and cast to the array's
dtype (``min - 0.5 .. max + 0.5`` when all finite values are equal); half-open buckets,
the last one closed; NaN and infinities counted apart; min/max/sum over the finite
values, the sum accumulated in float64. No finite value at all: no buckets and zero
statistics.

:func:`reference_histogram` is that rule in plain numpy (the reference for tests).
:func:`compiled_histogram` gets the same counts from numpy's SIMD min/max and a few
branch-free numba passes that release the GIL: ~0.2 ms for 200k float32 values
(``np.histogram`` with explicit edges sorts the data: ~12 ms). :func:`compute_histogram`
takes the compiled path once its kernels are ready (:mod:`sumlens.summary.kernels`), the
reference until then.
"""

from __future__ import annotations

import math

import numpy as np

from sumlens.io.events import Histogram
from sumlens.summary.kernels import histogram_ready

MAX_BUCKETS = 90


def bucket_count(finite: int) -> int:
    """Number of buckets MindSpore uses for ``finite`` finite values (0 for none)."""
    if finite == 0:
        return 0
    if finite <= 5:
        return 2
    if finite <= 10:
        return 3
    if finite <= 880:
        return finite // 10 + 1
    return MAX_BUCKETS


def _as_numeric(array: np.ndarray) -> np.ndarray:
    return array.astype(np.uint8) if array.dtype == np.bool_ else array


def bucket_edges(lo: np.generic, hi: np.generic, bins: int, dtype: np.dtype) -> np.ndarray:
    """Bucket edges as MindSpore computes them: ``linspace`` in float64, cast to ``dtype``.

    (Checked against the golden files: edges and widths match MindSpore's bit for bit.)
    When all finite values are equal the edges are ``min - 0.5 .. max + 0.5`` in float64.
    """
    if lo == hi:
        return np.linspace(float(lo) - 0.5, float(hi) + 0.5, bins + 1)
    return np.linspace(float(lo), float(hi), bins + 1).astype(dtype)


def _empty(count: int, nan: int, pos: int, neg: int) -> Histogram:
    nothing = np.zeros(0)
    return Histogram(nothing, nothing, np.zeros(0, np.int64), 0.0, 0.0, 0.0, count, nan, pos, neg)


def _finish(
    edges: np.ndarray, counts: np.ndarray, stats: tuple[float, float, float], tally: tuple
) -> Histogram:
    lo, hi, total = stats
    count, nan, pos, neg = tally
    edges64 = edges.astype(np.float64)
    widths = (edges[1:] - edges[:-1]).astype(np.float64)
    return Histogram(edges64[:-1], widths, counts, lo, hi, total, count, nan, pos, neg)


def reference_histogram(array: np.ndarray) -> Histogram:
    """The MindSpore histogram of ``array`` with plain numpy (slow; the reference)."""
    array = _as_numeric(np.asarray(array)).reshape(-1)
    nan = pos = neg = 0
    finite = array
    if array.dtype.kind == "f":
        nan = int(np.isnan(array).sum())
        pos = int(np.isposinf(array).sum())
        neg = int(np.isneginf(array).sum())
        finite = array[np.isfinite(array)]
    bins = bucket_count(finite.size)
    if bins == 0:
        return _empty(array.size, nan, pos, neg)
    lo, hi = finite.min(), finite.max()
    edges = bucket_edges(lo, hi, bins, array.dtype)
    counts, _ = np.histogram(finite, bins=edges.astype(np.float64))
    stats = (float(lo), float(hi), float(finite.sum(dtype=np.float64)))
    return _finish(edges, counts.astype(np.int64), stats, (array.size, nan, pos, neg))


def compute_histogram(array: np.ndarray) -> Histogram:
    """The MindSpore histogram of ``array``: compiled when ready, else the reference."""
    array = np.asarray(array)
    if histogram_ready(array.dtype):
        return compiled_histogram(array)
    return reference_histogram(array)


def compiled_histogram(array: np.ndarray) -> Histogram:
    """The MindSpore histogram of ``array``, same result as :func:`reference_histogram`.

    Reads ``array`` without copying it when it is contiguous, so it may be a view of a
    live tensor (which must not change meanwhile). Compiles the kernels at the first call
    for a dtype if they are not ready.
    """
    from sumlens.summary import _histogram_jit as jit

    array = np.ascontiguousarray(_as_numeric(np.asarray(array))).reshape(-1)
    if not array.dtype.isnative:  # the compiled kernels read native byte order only
        array = array.astype(array.dtype.newbyteorder("="))
    if array.dtype.kind not in "fiu" or array.dtype.itemsize > 8:
        return reference_histogram(array)
    if array.size == 0:
        return _empty(0, 0, 0, 0)
    kernel = jit.FLOAT_HISTOGRAM.get(array.dtype)
    if kernel is not None:  # float32/float64, the common case: one compiled call
        finite, lo, hi, total, left, width, counts = kernel(
            array, bucket_count(array.size), array.dtype == np.float32
        )
        if finite:
            return Histogram(left, width, counts, lo, hi, total, array.size)
        non_finite = True  # the kernel saw a NaN or an infinity: no need to look again
    else:
        lo, hi = array.min(), array.max()  # NaN or an infinity here: some are not finite
        non_finite = array.dtype.kind == "f" and not (math.isfinite(lo) and math.isfinite(hi))
    if non_finite:
        lo, hi, total, finite, nan, pos, neg = jit.census(array)
    else:
        total, finite, nan, pos, neg = jit.finite_sum(array), array.size, 0, 0, 0
    bins = bucket_count(finite)
    if bins == 0:
        return _empty(array.size, nan, pos, neg)
    lo, hi = float(array.dtype.type(lo)), float(array.dtype.type(hi))
    left, width, counts = jit.buckets(array, lo, hi, bins, array.dtype == np.float32)
    return Histogram(left, width, counts, lo, hi, total, array.size, nan, pos, neg)
