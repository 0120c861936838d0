"""numba kernel that writes MindSpore's ``Summary.Histogram`` message as wire bytes.

Filling the message through protobuf takes one ``buckets.add(...)`` call per bucket: ~190 us
for the four histograms of a small MLP, spent on the writer thread *while holding the GIL
the training thread needs*. This kernel writes the same bytes (fields in number order, as
protobuf serializes them) in a few microseconds and releases the GIL; the writer merges
them into the step's event with ``MergeFromString``. :func:`protobuf_histogram_bytes` is
the protobuf path, the reference the tests compare it with byte for byte, and what the
writer uses while the kernel compiles.
"""

from __future__ import annotations

import numpy as np

from sumlens._numba import numba
from sumlens._proto import summary_pb2
from sumlens.io.events import Histogram
from sumlens.summary._scalar_jit import _put_le, _put_varint, _varint_size

MAX_BUCKET_BYTES = 2 + 9 + 9 + 11
"""A bucket entry: its key and length, ``left`` and ``width`` (fixed64), ``count`` (varint)."""
MAX_TAIL_BYTES = 4 * 11 + 3 * 9
"""The four counts (varints) and min, max, sum (fixed64) after the buckets."""


@numba.njit(cache=True, nogil=True)
def _encode(left_bits, width_bits, counts, stat_bits, tallies, out):  # pragma: no cover
    """Write the message into ``out``; return its length.

    ``stat_bits``: max, min, sum as float64 bits, or empty when there are no buckets
    (then the message has no min/max/sum, as the protobuf path leaves them unset);
    ``tallies``: nan_count, pos_inf_count, neg_inf_count, count.
    """
    pos = 0
    for j in range(counts.size):
        out[pos] = 0x0A  # buckets = 1, length-delimited
        out[pos + 1] = 19 + _varint_size(counts[j])
        out[pos + 2] = 0x09  # left = 1, fixed64
        pos = _put_le(out, pos + 3, left_bits[j], 8)
        out[pos] = 0x11  # width = 2, fixed64
        pos = _put_le(out, pos + 1, width_bits[j], 8)
        out[pos] = 0x18  # count = 3, varint
        pos = _put_varint(out, pos + 1, counts[j])
    for k in range(3):  # nan_count = 2, pos_inf_count = 3, neg_inf_count = 4
        out[pos] = 0x10 + 8 * k
        pos = _put_varint(out, pos + 1, tallies[k])
    for k in range(stat_bits.size):  # max = 5, min = 6, sum = 7
        out[pos] = 0x29 + 8 * k
        pos = _put_le(out, pos + 1, stat_bits[k], 8)
    out[pos] = 0x40  # count = 8, varint
    return _put_varint(out, pos + 1, tallies[3])


def mindspore_histogram_bytes(hist: Histogram) -> bytes:
    """The serialized ``Summary.Histogram`` of ``hist`` (what the protobuf path would write)."""
    counts = np.ascontiguousarray(hist.counts, dtype=np.int64)
    stats = np.array([hist.max, hist.min, hist.sum] if counts.size else [], dtype=np.float64)
    tallies = np.array(
        [hist.nan_count, hist.pos_inf_count, hist.neg_inf_count, hist.count], dtype=np.int64
    )
    out = np.empty(counts.size * MAX_BUCKET_BYTES + MAX_TAIL_BYTES, dtype=np.uint8)
    size = _encode(
        np.ascontiguousarray(hist.left, dtype=np.float64).view(np.uint64),
        np.ascontiguousarray(hist.width, dtype=np.float64).view(np.uint64),
        counts,
        stats.view(np.uint64),
        tallies,
        out,
    )
    return out[:size].tobytes()


def protobuf_histogram_bytes(hist: Histogram) -> bytes:
    """The same bytes as :func:`mindspore_histogram_bytes`, filled through protobuf."""
    proto = summary_pb2.Summary.Histogram()
    for left, width, count in zip(
        hist.left.tolist(), hist.width.tolist(), hist.counts.tolist(), strict=True
    ):
        proto.buckets.add(left=left, width=width, count=count)
    proto.count, proto.nan_count = hist.count, hist.nan_count
    proto.pos_inf_count, proto.neg_inf_count = hist.pos_inf_count, hist.neg_inf_count
    if hist.left.size:
        proto.min, proto.max, proto.sum = hist.min, hist.max, hist.sum
    return proto.SerializeToString()
