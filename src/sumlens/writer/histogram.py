"""Histograms binned as ``torch.utils.tensorboard.SummaryWriter.add_histogram`` bins them.

A user switching writers must see the same buckets in TensorBoard. The default edges
(``bins="tensorflow"``) are TensorFlow's: 0, and +-1e-12 growing by a factor of 1.1 up to
1e20. Any other ``bins`` is handed to ``numpy.histogram`` (a count, a numpy rule name, or
the edges). The counts are then merged ``max_bins`` at a time when there are more
buckets than that, and trimmed to the span of non-empty buckets, keeping one empty
bucket on the left, so that each ``bucket_limit`` is the right edge of its bucket.

With the default edges, real numbers are binned by a compiled kernel
(:mod:`sumlens.writer._histogram_jit`, about 20x numpy's ``histogram``) once
:data:`HISTOGRAM_KERNELS` is ready (compiled in the background, as the writer's other
kernels: :mod:`sumlens._numba`), by numpy until then; both give the same buckets.
The kernels release the GIL, so a large array is binned in two parts at once, one on the
caller's thread (a little more than half: :data:`CALLER_SHARE`) and one on a helper thread
kept off the caller's CPU (:mod:`sumlens.writer.split_helper`), where a second core exists:
the same two cores SummaryRecord's histograms use (the caller's and the writer thread's),
and about half the wait; a helper that has not started when the caller's part is done (its
core busy elsewhere) hands its part back to the caller, so a call takes one thread's time,
not more. The message is parsed from wire bytes (:func:`_wire`): filling it from Python
lists of ~600 floats costs ~100 us, a sixth of the whole call on a million values.
"""

from __future__ import annotations

import functools
import math
import os
import struct
import threading
from typing import Any

import numpy as np

from sumlens._numba import KernelSet
from sumlens._proto import tensorboard_pb2
from sumlens.summary.wire import packed_field
from sumlens.writer.split_helper import SplitHelper

TENSORFLOW_GROWTH = 1.1
TENSORFLOW_SMALLEST = 1e-12
TENSORFLOW_LARGEST = 1e20


def tensorflow_edges() -> np.ndarray:
    """The default bucket edges: negative mirror, 0, then 1e-12 x 1.1^k below 1e20."""
    positive = []
    edge = TENSORFLOW_SMALLEST
    while edge < TENSORFLOW_LARGEST:
        positive.append(edge)
        edge *= TENSORFLOW_GROWTH
    right = np.asarray(positive)
    return np.concatenate([-right[::-1], [0.0], right])


_TENSORFLOW_EDGES = tensorflow_edges()
HISTOGRAM_KERNELS = KernelSet(
    "writer-histogram",
    "sumlens.writer.histogram:warm_up",
    ("sumlens.writer._histogram_jit", "sumlens.writer.histogram"),
)
COMPILED_KINDS = "fiu"
"""Array kinds the kernel bins (bools and the rest go to numpy)."""
SPLIT_FROM = 1 << 18
"""Values from which an array is binned in two parts at once (below, handing a part to the
helper thread costs more than it saves)."""
CALLER_SHARE = 0.55
"""The part of a split array the caller bins: the helper starts ~25 us late, and with the
larger part the caller seldom waits for its answer (1M float32: 423 us a call against 458
for halves; 0.6 gave 459)."""
WIRE_FIXED64 = 1
"""The wire type of a double field."""
NUMPY_BIN_RULES = ("auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt")


def check_bins(bins: Any, max_bins: Any, owner: str) -> None:
    """Refuse, where the user called, ``bins`` that ``numpy.histogram`` would refuse later
    (on the writer thread) and ``max_bins`` that is not a positive int or None."""
    if isinstance(bins, str):
        if bins != "tensorflow" and bins not in NUMPY_BIN_RULES:
            allowed = ", ".join(map(repr, ("tensorflow", *NUMPY_BIN_RULES)))
            raise ValueError(f"{owner}: bins={bins!r} is not one of {allowed}")
    elif isinstance(bins, int) and not isinstance(bins, bool):
        if bins < 1:
            raise ValueError(f"{owner}: bins={bins!r} must be a positive number of buckets")
    else:
        try:
            edges = np.asarray(bins, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise TypeError(
                f"{owner}: bins must be 'tensorflow', a numpy rule name, a count or the "
                f"edges, got {type(bins).__name__}"
            ) from err
        if edges.ndim != 1 or edges.size < 2 or not np.all(np.diff(edges) > 0):
            raise ValueError(f"{owner}: bins as edges must be at least 2 increasing numbers")
    if max_bins is not None and (
        isinstance(max_bins, bool) or not isinstance(max_bins, int) or max_bins < 1
    ):
        raise ValueError(f"{owner}: max_bins={max_bins!r} must be a positive int or None")


def not_binnable(tag: str, bins: Any, owner: str, reason: str) -> ValueError:
    """The error of values that cannot be binned (torch's writer refuses them too)."""
    return ValueError(
        f"For '{owner}', the argument 'values' of tag {tag!r} cannot be binned with "
        f"bins={bins!r:.60}: {reason}; torch's writer refuses it too. bins='tensorflow' (the "
        f"default) needs one value at least inside {_TENSORFLOW_EDGES[0]:.3g} .. "
        f"{_TENSORFLOW_EDGES[-1]:.3g} (NaN, infinities and larger magnitudes are counted in "
        "num, min, max and sum, in no bucket); edges need one value at least between the "
        "first and the last; a count or a numpy rule needs finite values whose range a "
        "float64 holds"
    )


def binnable(values: np.ndarray, bins: Any, tag: str, owner: str) -> Any:
    """The bins to bin host ``values`` by later (on the writer thread), once it is known
    that they can be: a count or a numpy rule made into edges here (the buckets are the
    same), anything else as given. Raises :func:`not_binnable` where torch's writer raises
    (``ValueError``): no value inside the edges, or for a count or a rule, a range that is
    not finite."""
    flat = np.asarray(values).reshape(-1)
    if isinstance(bins, int | str) and not (isinstance(bins, str) and bins == "tensorflow"):
        try:
            with np.errstate(all="ignore"):
                return np.histogram_bin_edges(flat.astype(np.float64), bins)
        except ValueError as err:  # a range not finite, or too wide for float64
            low, high = flat.min(), flat.max()
            raise not_binnable(tag, bins, owner, f"{err} (min {low}, max {high})") from None
    edges = _TENSORFLOW_EDGES if isinstance(bins, str) else np.asarray(bins, dtype=np.float64)
    low, high = edges[0], edges[-1]
    least, most = flat.min(), flat.max()
    if not (low <= least <= high or low <= most <= high):  # NaN compares False
        with np.errstate(invalid="ignore"):
            if not np.any((flat >= low) & (flat <= high)):
                raise not_binnable(tag, bins, owner, _outside(low, high))
    return bins


def _outside(low: float, high: float) -> str:
    return f"no value lies inside the bins' edges {low:.3g} .. {high:.3g}"


class RefusedCounts:
    """How many histograms of each tag could not be binned on the writer thread (a CUDA
    tensor's values are seen only there); counted from the encoder threads at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}

    def add(self, tag: str) -> int:
        """Count one more of ``tag``; how many there are now."""
        with self._lock:
            count = self._counts[tag] = self._counts.get(tag, 0) + 1
        return count

    def drain(self) -> dict[str, int]:
        """The counts so far, which start again from zero."""
        with self._lock:
            counts, self._counts = self._counts, {}
        return counts


def binned_at_once(values: np.ndarray, bins: Any) -> bool:
    """Whether ``values`` are binned by the compiled kernels now (default edges, real numbers,
    kernels ready): cheap enough to do on the caller's thread, from the caller's memory."""
    default = isinstance(bins, str) and bins == "tensorflow"
    return default and values.dtype.kind in COMPILED_KINDS and HISTOGRAM_KERNELS.ready()


def histogram_proto(
    values: np.ndarray, bins: Any = "tensorflow", max_bins: int | None = None
) -> tensorboard_pb2.HistogramProto:
    """The ``HistogramProto`` of ``values`` (any shape, at least one value; flattened), binned
    by ``bins`` (``bins`` and ``max_bins`` as :func:`check_bins` lets them through: the caller
    checks them where the user called). A ``ValueError`` says why values cannot be binned
    (:func:`binnable` says it before, where the user called)."""
    flat = np.asarray(values).reshape(-1)
    if binned_at_once(flat, bins):
        counts, total, squares, low, high = _compiled(flat)
        limits = _TENSORFLOW_EDGES
        if math.isnan(low):  # as numpy's sums: NaN when a value is
            total = squares = math.nan
    else:
        default = isinstance(bins, str) and bins == "tensorflow"
        as_float = flat.astype(np.float64)  # as torch's writer: edges of a count in float64
        counts, limits = np.histogram(as_float, bins=_TENSORFLOW_EDGES if default else bins)
        low, high = float(as_float.min()), float(as_float.max())
        total, squares = float(as_float.sum()), float(as_float.dot(as_float))
    if max_bins is not None and counts.size > max_bins:
        counts, limits = _merged(counts, limits, counts.size // max_bins)
    counts, limits = _trimmed(counts, limits)
    statistics = (low, high, float(flat.size), total, squares)
    return tensorboard_pb2.HistogramProto.FromString(_wire(statistics, limits, counts))


def _wire(statistics: tuple[float, ...], limits: np.ndarray, counts: np.ndarray) -> bytes:
    """``HistogramProto``'s wire bytes: min, max, num, sum and sum_squares (fields 1-5,
    doubles), then bucket_limit and bucket (6 and 7, packed doubles). Parsing these costs
    a few microseconds; filling the message from Python lists of ~600 floats, ~100 us."""
    head = b"".join(
        bytes([field << 3 | WIRE_FIXED64]) + struct.pack("<d", value)
        for field, value in enumerate(statistics, start=1)
    )
    return head + packed_field(6, limits, "f8") + packed_field(7, counts, "f8")


def _compiled(flat: np.ndarray) -> tuple[np.ndarray, float, float, float, float]:
    """The kernels' counts, sum, sum of squares, minimum and maximum of a flat array of real
    numbers (the extremes NaN when a value is NaN, as numpy's)."""
    from sumlens.writer import _histogram_jit as jit

    values = np.ascontiguousarray(flat)
    if flat.dtype == np.float32:
        if not values.dtype.isnative:
            values = values.astype(np.float32)
        kernel, table = jit.float32_histogram, cell_table(32)
    else:
        kernel, table = jit.float64_histogram, cell_table(64)

    def binned(part: np.ndarray) -> tuple[np.ndarray, float, float, float, float]:
        return kernel(part, table, _TENSORFLOW_EDGES)

    helper = helper_thread() if values.size >= SPLIT_FROM else None
    if helper is None:
        return binned(values)
    middle = int(values.size * (1.0 - CALLER_SHARE))
    given = [values[:middle]]  # emptied when taken back: a cancelled job holds no array
    first = helper.submit(lambda: binned(given[0]))
    counts, total, squares, low, high = binned(values[middle:])
    # A helper not started by now (its core taken by other work) would only add its wait:
    # its part is binned here instead.
    if first.cancel():
        given.clear()
        other = binned(values[:middle])
    else:
        other = first.result()
    other_counts, other_total, other_squares, other_low, other_high = other
    return (
        counts + other_counts,
        other_total + total,
        other_squares + squares,
        math.nan if math.isnan(low) or math.isnan(other_low) else min(low, other_low),
        math.nan if math.isnan(high) or math.isnan(other_high) else max(high, other_high),
    )


@functools.cache
def helper_thread() -> SplitHelper | None:
    """The thread that bins one part of a large array (:func:`_compiled`), or None on a
    single core. A forked child makes its own (the parent's thread is not in it)."""
    if hasattr(os, "sched_getaffinity"):
        cpus = os.sched_getaffinity(0)
    else:
        cpus = set(range(os.cpu_count() or 1))
    return SplitHelper(cpus) if len(cpus) >= 2 else None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=helper_thread.cache_clear)


@functools.cache
def cell_table(width: int) -> np.ndarray:
    """The bucket of each cell of ``width``-bit floats (see :mod:`sumlens.writer._histogram_jit`):
    a cell is every value sharing sign, exponent and the first mantissa bits."""
    from sumlens.writer import _histogram_jit as jit

    shift = jit.FLOAT32_SHIFT if width == 32 else jit.FLOAT64_SHIFT
    unsigned, real = (np.uint32, np.float32) if width == 32 else (np.uint64, np.float64)
    cells = np.arange(1 << (width - shift), dtype=np.uint64)
    first = (cells << np.uint64(shift)).astype(unsigned)
    last = first | unsigned((1 << shift) - 1)
    with np.errstate(invalid="ignore"):
        ends = first.view(real).astype(np.float64), last.view(real).astype(np.float64)
    low, high = np.minimum(*ends), np.maximum(*ends)
    edges = _TENSORFLOW_EDGES
    table = np.full(cells.size, jit.SEARCH, np.int16)
    finite = np.isfinite(low) & np.isfinite(high)
    table[~finite | (high < edges[0]) | (low > edges[-1])] = jit.SKIP
    inside = finite & (low >= edges[0]) & (high < edges[-1])
    bucket_low = np.searchsorted(edges, low, "right") - 1
    bucket_high = np.searchsorted(edges, high, "right") - 1
    one = inside & (bucket_low == bucket_high)
    table[one] = bucket_low[one]
    two = inside & (bucket_high == bucket_low + 1)  # the cell holds edge bucket_high
    table[two] = jit.EDGE - bucket_high[two]
    return table


def warm_up() -> None:
    """Call each kernel once, for each array type real calls give it
    (:data:`HISTOGRAM_KERNELS`)."""
    values = np.linspace(-3.0, 3.0, 100)
    for dtype in (np.float32, np.float64, np.int64, np.int32, np.uint8):
        _compiled(values.astype(dtype))


def _merged(counts: np.ndarray, limits: np.ndarray, every: int) -> tuple[np.ndarray, np.ndarray]:
    """Buckets summed ``every`` at a time (the last group padded with empty buckets); the
    merged buckets keep every ``every``-th left edge and the last right edge."""
    short = -counts.size % every
    padded = np.concatenate([counts, np.zeros(short, dtype=counts.dtype)])
    merged = padded.reshape(-1, every).sum(axis=1)
    edges = np.empty(merged.size + 1, dtype=limits.dtype)
    edges[:-1] = limits[:-1:every]
    edges[-1] = limits[-1]
    return merged, edges


def _trimmed(counts: np.ndarray, limits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The buckets from the first to the last non-empty one, each paired with its right
    edge; the bucket before the first non-empty one (or an empty one at the start) leads."""
    filled = np.flatnonzero(counts > 0)
    if filled.size == 0:  # every value outside the edges
        raise ValueError(_outside(limits[0], limits[-1]))
    first, last = int(filled[0]), int(filled[-1])
    kept = counts[first - 1 : last + 1] if first > 0 else np.concatenate([[0], counts[: last + 1]])
    return kept, limits[first : last + 2]
