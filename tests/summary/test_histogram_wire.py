"""The numba-written ``Summary.Histogram`` bytes equal what protobuf serializes, byte for byte.

The reference fills the message through the protobuf API, bucket by bucket, the way the
writer did before the kernel existed.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sumlens._proto import summary_pb2
from sumlens.io.events import Histogram
from sumlens.summary._histogram_wire import mindspore_histogram_bytes
from sumlens.summary.histogram import compute_histogram


def protobuf_bytes(hist: Histogram) -> bytes:
    """The reference: the message filled field by field, then serialized."""
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


RNG = np.random.default_rng(0)


@pytest.mark.parametrize(
    "values",
    [
        RNG.standard_normal(200_000).astype(np.float32),
        np.array([], dtype=np.float32),
        np.array([np.nan, np.inf, -np.inf]),
        np.array([3.0, 3.0, 3.0]),
        RNG.integers(-(10**12), 10**12, 5000),
        np.concatenate([RNG.standard_normal(100), [np.nan, -np.inf, np.inf, -0.0]]),
    ],
    ids=["normal-200k", "empty", "no-finite", "all-equal", "int64", "mixed"],
)
def test_histograms_of_arrays(values: np.ndarray) -> None:
    hist = compute_histogram(values)
    assert mindspore_histogram_bytes(hist) == protobuf_bytes(hist)


doubles = st.floats(allow_nan=True, allow_infinity=True, width=64)
counts = st.integers(min_value=0, max_value=2**63 - 1)


@settings(max_examples=200, deadline=None)
@given(
    buckets=st.lists(st.tuples(doubles, doubles, counts), max_size=90),
    stats=st.tuples(doubles, doubles, doubles),
    tallies=st.tuples(counts, counts, counts, counts),
)
def test_any_field_values(
    buckets: list[tuple[float, float, int]],
    stats: tuple[float, float, float],
    tallies: tuple[int, int, int, int],
) -> None:
    """Every double bit pattern (NaN, -0.0, infinities) and varint length round-trips."""
    left, width, count = ([row[k] for row in buckets] for k in range(3))
    hist = Histogram(
        np.array(left, dtype=np.float64),
        np.array(width, dtype=np.float64),
        np.array(count, dtype=np.int64),
        *stats,
        tallies[3],
        *tallies[:3],
    )
    assert mindspore_histogram_bytes(hist) == protobuf_bytes(hist)
