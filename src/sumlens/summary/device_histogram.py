"""Histograms of device tensors computed on the device: only the bins cross to the host.

For a CUDA tensor, copying a 100M-element tensor to the host to bin it would cost more
than the training step. Here the statistics and the bucket counts are computed with
torch ops on the tensor's own device, packed into one small float64 tensor and copied
asynchronously into pinned memory; the writer thread waits for that copy, never the
training thread. Nothing here makes the host wait: no value is read back, no shape
depends on the data, no host value is copied to the device.

Few kernels per tensor (17 for float32, 8 of them passing over the values; 24 for
float64, whose extra ones work on one value per tensor, for a range wider than the
largest float64): the
finite min and max come from one reduction over two rows in which ``nan_to_num`` made
the non-finite values neutral; the sum from one more ``nan_to_num`` and a float64
reduction; every value is then classed by a single ``searchsorted`` into -inf, the
buckets, +inf or NaN, and one ``scatter_add_`` counts the classes, so the NaN and
infinity tallies and the finite count come with the bucket counts. Tensors of one step
can share these launches (:func:`device_statistics_many`).

The bucket edges are those of the host (``numpy.linspace`` replayed in float64 one
rounding at a time, then rounded to the array's dtype, integer edges truncated), and a
value is placed by exact comparisons with them, so the counts are those of the host
rule. When all finite values are equal the host knows their bucket without the data:
the device puts them in any one bucket and :func:`histogram_from_statistics` moves them.

MindSpore's bucket count depends on the number of *finite* values, which the host cannot
know without waiting. Tensors of up to :data:`SMALL_TENSOR` elements are therefore just
copied and binned on the host; larger ones use 90 buckets, which is exact unless fewer
than 881 of their values are finite (then a warning says so).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sumlens._log import warn_once
from sumlens.io.events import Histogram
from sumlens.summary.convert import PendingArray
from sumlens.summary.histogram import (
    MAX_BUCKETS,
    bucket_count,
    bucket_edges,
    bucket_widths,
    in_dtype,
)

SMALL_TENSOR = 16384
# Layout of the packed statistics of one tensor (float64, ``bins + 6`` values):
# lo, hi, sum (over the finite values), then the counts of -inf, of each bucket, of +inf,
# and last of NaN (with any padding added by device_statistics_many; never read).
_STATS = 3
_BATCH_ELEMENTS = 1 << 22  # larger tensors are never batched: the cat would copy them
_GROUP_ELEMENTS = 1 << 24  # a batch's padded size (its temporaries grow with it)


def device_statistics(tensor: Any, bins: int = MAX_BUCKETS) -> Any:
    """One float64 tensor on ``tensor``'s device: statistics, then the class counts.

    ``bins + 6`` values: lo, hi and sum of the finite values, then the number of -inf,
    the ``bins`` bucket counts, the number of +inf and the number of NaN; see the module
    doc. :func:`histogram_from_statistics` turns it into the histogram.
    """
    packed, _ = device_statistics_many([tensor], bins)
    return packed[0]


def device_statistics_many(
    tensors: Sequence[Any], bins: int = MAX_BUCKETS
) -> tuple[Any, list[int]]:
    """Statistics of several tensors of one device in one ``(len(tensors), bins + 6)`` tensor.

    Returns ``(packed, rows)``: the statistics of ``tensors[i]`` are ``packed[rows[i]]``,
    laid out as by :func:`device_statistics`, so one copy brings them all to the host.
    Tensors of the same dtype are concatenated (float ones padded with NaN, which the
    host never counts; integer ones only with others of the same size) and binned
    together, one launch per step for the whole group instead of one per tensor;
    tensors of more than ``2**22`` elements are binned alone, without a copy.
    """
    import torch

    flats = [_flat(t) for t in tensors]
    if len({f.device for f in flats}) > 1:
        raise ValueError("device_statistics_many needs tensors of a single device")
    device = flats[0].device if flats else torch.device("cpu")
    packed = torch.zeros((len(flats), bins + 2 * _STATS), dtype=torch.float64, device=device)
    rows = [0] * len(flats)
    start = 0
    for group in _groups(flats):
        for offset, i in enumerate(group):
            rows[i] = start + offset
        width = max(flats[i].numel() for i in group)
        if width:
            _fill(_stack(flats, group, width), packed[start : start + len(group)], bins)
        start += len(group)
    return packed, rows


def _flat(tensor: Any) -> Any:
    """``tensor`` as a contiguous 1-D tensor of a dtype the ops here take.

    Bools are viewed as uint8, float8 values converted to float32. A strided tensor is
    copied once here rather than by each op that needs contiguous values.
    """
    import torch

    flat = tensor.detach().reshape(-1).contiguous()
    if flat.dtype == torch.bool:
        return flat.view(torch.uint8)
    if flat.is_floating_point() and flat.element_size() == 1:
        return flat.float()  # the float8 types: few ops take them; float32, as on the host
    return flat


def _groups(flats: list[Any]) -> list[list[int]]:
    """Indices of ``flats`` binned together: same dtype, sizes within a factor of two.

    Float tensors are sorted by size and padded to the largest of their group, which
    doubles the work at most; integer tensors have no value to pad with that every
    statistic ignores, so only tensors of one size share a group.
    """
    by_kind: dict[tuple[Any, int], list[int]] = {}
    for i, flat in enumerate(flats):
        size = -1 if flat.is_floating_point() else flat.numel()
        by_kind.setdefault((flat.dtype, size), []).append(i)
    groups: list[list[int]] = []
    for members in by_kind.values():
        members.sort(key=lambda i: flats[i].numel())
        group: list[int] = []
        total = 0
        for i in members:
            size = flats[i].numel()
            if size > _BATCH_ELEMENTS:
                groups.append([i])
                continue
            padded = (len(group) + 1) * size  # members are sorted: size is the largest
            if group and (padded > 2 * (total + size) or padded > _GROUP_ELEMENTS):
                groups.append(group)
                group, total = [], 0
            group.append(i)
            total += size
        if group:
            groups.append(group)
    return groups


def _stack(flats: list[Any], group: list[int], width: int) -> Any:
    """The tensors of ``group`` as the rows of one ``(len(group), width)`` tensor.

    One ``cat`` (no copy for a group of one); a float row shorter than ``width`` is
    followed by NaN from one shared padding tensor.
    """
    import torch

    if len(group) == 1:
        return flats[group[0]].view(1, width)
    pieces = []
    pad = None
    for i in group:
        flat = flats[i]
        pieces.append(flat)
        missing = width - flat.numel()
        if missing:
            if pad is None:
                longest = width - min(flats[j].numel() for j in group)
                pad = torch.full((longest,), float("nan"), dtype=flat.dtype, device=flat.device)
            pieces.append(pad[:missing])
    return torch.cat(pieces).view(len(group), width)


def _fill(rows: Any, out: Any, bins: int) -> None:
    """Write the statistics of each row of ``rows`` into the zeroed row of ``out``.

    ``rows`` is ``(T, N)``, ``out`` a ``(T, bins + 6)`` float64 view. Every op covers all
    rows at once; nothing waits for the device.
    """
    import torch

    device = rows.device
    count, _ = rows.shape
    # 0, 1, ..., bins as float64: the edge multipliers, the divisor (a device tensor, so
    # CUDA divides exactly instead of multiplying by a rounded reciprocal) and a 1.0 to
    # count with.
    steps = torch.arange(max(bins + 1, 2), dtype=torch.float64, device=device)
    lohi = out[:, 0:2]
    if rows.is_floating_point():
        values, right = rows, False
        # Row 0: non-finite values become the largest value (neutral for the min); row 1:
        # the lowest (neutral for the max). With no finite value, lo > hi: still finite.
        big = torch.finfo(rows.dtype).max
        neutral = torch.empty((2, count, rows.shape[1]), dtype=rows.dtype, device=device)
        torch.nan_to_num(rows, big, big, big, out=neutral[0])
        torch.nan_to_num(rows, -big, -big, -big, out=neutral[1])
        ends = torch.empty((2, 2, count), dtype=rows.dtype, device=device)
        torch.aminmax(neutral, dim=2, out=(ends[0], ends[1]))
        del neutral
        lohi.copy_(ends.diagonal(0, 0, 1))  # (min of row 0, max of row 1) per tensor
        finite = torch.nan_to_num(rows, 0.0, 0.0, 0.0)
    else:
        values = rows if _compared_as_is(rows.dtype) else rows.to(torch.float64)
        right = True
        ends = torch.empty((2, count), dtype=values.dtype, device=device)
        torch.aminmax(values, dim=1, out=(ends[0], ends[1]))
        lohi.copy_(ends.t())
        finite = values
    torch.sum(finite, dim=1, dtype=torch.float64, out=out[:, 2])
    del finite
    lo, hi = out[:, 0:1], out[:, 1:2]
    scale = None
    if rows.dtype == torch.float64:
        hi = torch.maximum(hi, lo)  # no finite value: hi - lo would overflow to -inf
        # A span wider than the largest float64 (-1.7e308 .. 1.7e308): the edges are
        # those of the halved ends, doubled (exact), as the host's ``float_edges`` makes
        # them; ``scale`` is 0.5 for such a row, else 1.0 (steps[1]), which changes nothing.
        scale = torch.where(torch.isinf(hi - lo), 0.5, steps[1:2])
        lo, hi = lo * scale, hi * scale
    step = torch.div(hi - lo, steps[bins])
    ramp = steps[:bins] * step  # numpy.linspace: k * step, then + start (two roundings)
    bounds = _boundaries(ramp, lo, rows.dtype, bins, scale)
    index = torch.searchsorted(bounds, values, right=right)
    out[:, _STATS:].scatter_add_(1, index, steps[1:2].expand(index.shape))


def _boundaries(ramp: Any, lo: Any, dtype: Any, bins: int, scale: Any = None) -> Any:
    """The sorted sequences (one per row) that ``searchsorted`` classes the values with.

    The edges are ``ramp + lo`` (divided by ``scale``, a power of two per row, when given)
    rounded to the host array's dtype. Floats are searched
    from the left (index = number of boundaries below the value): each edge becomes the
    largest value below it, so "boundary < value" is exactly "edge <= value", then come
    the largest finite value and +inf; -inf gets 0, a finite value 1 + its bucket, +inf
    ``bins + 1`` and NaN ``bins + 2`` (NaN compares false). Reduced floats are compared in
    float32, the dtype of their host array. Integers are searched from the right in the
    truncated edges themselves (64-bit ones in float64, as numpy compares them), so a
    value gets 1 + its bucket.
    """
    import torch

    if not dtype.is_floating_point:
        edges = ramp + lo
        return edges.to(dtype) if _compared_as_is(dtype) else edges.trunc_()
    exact = torch.float64 if dtype == torch.float64 else torch.float32
    bounds = torch.full((ramp.shape[0], bins + 2), float("inf"), dtype=exact, device=ramp.device)
    # Added in float64, then rounded to ``exact`` on the way out, as numpy's astype.
    torch.add(ramp, lo, out=bounds[:, :bins])
    if scale is not None:  # float64 rows only: nothing is rounded on the way out
        bounds[:, :bins].div_(scale)
    # The edges step down to the value below them, and the first +inf to the largest
    # finite value. A 0-d CPU tensor is passed to the kernel by value: no copy.
    head = bounds[:, : bins + 1]
    torch.nextafter(head, torch.tensor(float("-inf"), dtype=exact), out=head)
    return bounds


def _compared_as_is(dtype: Any) -> bool:
    """Whether integers of ``dtype`` are binned as they are (exact in float64, and taken
    by every op here); others (64-bit, the wider unsigned types) are binned in float64."""
    return str(dtype) in ("torch.uint8", "torch.int8", "torch.int16", "torch.int32")


def histogram_from_statistics(packed: np.ndarray, dtype: np.dtype, size: int) -> Histogram:
    """Rebuild a :class:`Histogram` from :func:`device_statistics` copied to the host.

    The NaN count is what the other classes leave of ``size`` (the device's NaN slot may
    also hold padding). When all finite values are equal, their bucket follows from the
    edges alone, so it is found here rather than trusted to the device.
    """
    if dtype == np.bool_:
        dtype = np.dtype(np.uint8)  # binned as 0/1, as the host does
    lo, hi, total = packed[:_STATS]
    classes = packed[_STATS:-1].astype(np.int64)  # -inf, buckets..., +inf
    neg, counts, pos = int(classes[0]), classes[1:-1], int(classes[-1])
    finite = int(counts.sum())
    tally = (size, size - finite - pos - neg, pos, neg)
    if finite == 0:
        empty = np.zeros(0)
        return Histogram(empty, empty, np.zeros(0, np.int64), 0.0, 0.0, 0.0, *tally)
    if bucket_count(finite) != counts.size:
        warn_once(
            "device-histogram-bins",
            "a device histogram with only %d finite values used "
            "%d buckets (MindSpore would use %d)",
            finite,
            counts.size,
            bucket_count(finite),
        )
    # in the array's dtype; an int64 extreme rounded past its type in float64 stays in it
    lo_t, hi_t = in_dtype(np.array([lo, hi]), dtype)
    edges = bucket_edges(lo_t, hi_t, counts.size, dtype)
    if lo_t == hi_t:
        one, _ = np.histogram(np.array([lo_t]), bins=edges.astype(np.float64))
        counts = one.astype(np.int64) * finite
    widths = bucket_widths(edges)
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
    """A histogram whose statistics are being copied from the device (see the module doc).

    ``row`` picks one tensor's statistics out of a :func:`device_statistics_many` copy.
    """

    packed: PendingArray
    dtype: np.dtype
    size: int
    row: int | None = None

    def result(self) -> Histogram:
        """Wait for the copy and build the histogram (writer thread)."""
        packed = self.packed.result()
        if self.row is not None:
            packed = packed[self.row]
        return histogram_from_statistics(packed, self.dtype, self.size)
