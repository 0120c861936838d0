"""The numba-written ``Summary.Histogram`` bytes equal what protobuf serializes, byte for byte.

The reference (``protobuf_histogram_bytes``) fills the message through the protobuf API,
bucket by bucket, as the writer does while the kernel compiles.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sumlens.io.events import Histogram
from sumlens.summary._histogram_wire import mindspore_histogram_bytes, protobuf_histogram_bytes
from sumlens.summary.histogram import compiled_histogram

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
    hist = compiled_histogram(values)
    assert mindspore_histogram_bytes(hist) == protobuf_histogram_bytes(hist)


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
    assert mindspore_histogram_bytes(hist) == protobuf_histogram_bytes(hist)
