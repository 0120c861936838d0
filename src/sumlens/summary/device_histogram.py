"""Histograms of device tensors computed on the device: only the bins cross to the host.

For a CUDA tensor, copying a 100M-element tensor to the host to bin it would cost more
than the training step. Here the statistics and the bucket counts are computed with
torch ops on the tensor's own device, packed into one small float64 tensor and copied
asynchronously into pinned memory; the writer thread waits for that copy, never the
training thread. The bucket edges are computed on the device exactly as the host
computes them (``numpy.linspace`` in float64, rounded to the array's dtype; integer
edges are therefore uneven) and each value is placed by comparing it with them, so the
counts are those of the host rule; the host then rebuilds the same edges from the min
and max.

MindSpore's bucket count depends on the number of *finite* values, which the host cannot
know without waiting. Tensors of up to :data:`SMALL_TENSOR` elements are therefore just
copied and binned on the host; larger ones use 90 buckets, which is exact unless fewer
than 881 of their values are finite (then a warning says so).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sumlens._log import warn_once
from sumlens.io.events import Histogram
from sumlens.summary.convert import PendingArray
from sumlens.summary.histogram import MAX_BUCKETS, bucket_count, bucket_edges

SMALL_TENSOR = 16384
_STATS = 7  # lo, hi, sum, finite, nan, +inf, -inf


def device_statistics(tensor: Any, bins: int = MAX_BUCKETS) -> Any:
    """One float64 tensor on ``tensor``'s device: statistics, then ``bins`` bucket counts."""
    import torch

    flat = tensor.detach().reshape(-1)
    # The host's dtype for this tensor: reduced floats become float32, bools uint8.
    edge_dtype = flat.dtype if flat.dtype in (torch.float64, torch.float32) else torch.float32
    if flat.dtype == torch.bool:
        edge_dtype = torch.uint8
    elif not flat.is_floating_point():
        edge_dtype = flat.dtype
    if not flat.is_floating_point():
        flat = flat.to(torch.float64)
    finite = torch.isfinite(flat)
    # torch.full, not torch.tensor: a Python value copied to the device would make the
    # host wait for the stream (a synchronous copy), which this module exists to avoid.
    inf = torch.full((), float("inf"), dtype=flat.dtype, device=flat.device)
    lo = torch.where(finite, flat, inf).min().to(torch.float64)
    hi = torch.where(finite, flat, -inf).max().to(torch.float64)
    values = flat.to(torch.float64)
    total = torch.where(finite, values, 0.0).sum()
    edges = _edges(lo, hi, bins, edge_dtype)
    index = torch.bucketize(values, edges[1:-1], right=True)  # [left, right), last closed
    index = torch.where(finite, index, torch.full_like(index, bins))  # non-finite: spill bucket
    counts = torch.zeros(bins + 1, dtype=torch.float64, device=flat.device)
    counts.scatter_add_(0, index, torch.ones_like(values))
    stats = torch.stack(
        [
            lo,
            hi,
            total,
            finite.sum().to(torch.float64),
            torch.isnan(flat).sum().to(torch.float64),
            torch.isposinf(flat).sum().to(torch.float64),
            torch.isneginf(flat).sum().to(torch.float64),
        ]
    )
    return torch.cat([stats, counts[:bins]])


def _edges(lo: Any, hi: Any, bins: int, dtype: Any) -> Any:
    """:func:`~sumlens.summary.histogram.bucket_edges` on the device, as float64.

    Replays ``numpy.linspace`` in float64 operation by operation, then rounds the edges
    to ``dtype`` (the host array's dtype: float rounding, integer truncation), as the
    host does; when all values are equal, ``min - 0.5 .. max + 0.5`` in float64.
    """
    import torch

    equal = lo == hi
    start = torch.where(equal, lo - 0.5, lo)
    stop = torch.where(equal, hi + 0.5, hi)
    edges = torch.arange(bins + 1, dtype=torch.float64, device=lo.device)
    edges = edges * ((stop - start) / bins) + start
    edges[-1] = stop
    return torch.where(equal, edges, edges.to(dtype).to(torch.float64))


def histogram_from_statistics(packed: np.ndarray, dtype: np.dtype, size: int) -> Histogram:
    """Rebuild a :class:`Histogram` from :func:`device_statistics` copied to the host."""
    if dtype == np.bool_:
        dtype = np.dtype(np.uint8)  # binned as 0/1, as the host does
    lo, hi, total, finite, nan, pos, neg = packed[:_STATS]
    counts = packed[_STATS:].astype(np.int64)
    tally = (size, int(nan), int(pos), int(neg))
    if finite == 0:
        empty = np.zeros(0)
        return Histogram(empty, empty, np.zeros(0, np.int64), 0.0, 0.0, 0.0, *tally)
    if bucket_count(int(finite)) != counts.size:
        warn_once(
            "device-histogram-bins",
            "a device histogram with only %d finite values used "
            "%d buckets (MindSpore would use %d)",
            int(finite),
            counts.size,
            bucket_count(int(finite)),
        )
    lo_t, hi_t = dtype.type(lo), dtype.type(hi)
    edges = bucket_edges(lo_t, hi_t, counts.size, dtype)
    widths = (edges[1:] - edges[:-1]).astype(np.float64)
    return Histogram(
        edges[:-1].astype(np.float64),
        widths,
        counts,
        float(lo_t),
        float(hi_t),
        float(total),
        *tally,
    )


@dataclass(frozen=True, slots=True)
class DeviceHistogram:
    """A histogram whose statistics are being copied from the device (see the module doc)."""

    packed: PendingArray
    dtype: np.dtype
    size: int

    def result(self) -> Histogram:
        """Wait for the copy and build the histogram (writer thread)."""
        return histogram_from_statistics(self.packed.result(), self.dtype, self.size)
