"""The fast histogram (numpy min/max + numba placement) equals the plain-numpy reference.

The placement by arithmetic is only trusted away from bucket boundaries; these tests put
values exactly on, and one ulp beside, the rounded edges, and use ranges so narrow for
their magnitude that every value must be checked against the edges.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.summary import assert_same_buckets
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sumlens.io.events import Histogram
from sumlens.summary._histogram_jit import boundary_tolerance
from sumlens.summary.histogram import (
    bucket_count,
    bucket_edges,
    compiled_histogram,
    reference_histogram,
)


def assert_same(actual: Histogram, expected: Histogram) -> None:
    assert_same_buckets(actual, expected)
    # Sums taken in different orders differ by rounding: bounded by the sum of magnitudes.
    magnitude = expected.count * max(abs(expected.min), abs(expected.max), 1e-300)
    assert abs(actual.sum - expected.sum) <= 1e-12 * magnitude


def edges_of(values: np.ndarray) -> np.ndarray:
    finite = values[np.isfinite(values)]
    bins = bucket_count(finite.size)
    return bucket_edges(finite.min(), finite.max(), bins, values.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_on_and_beside_every_edge(dtype: type) -> None:
    rng = np.random.default_rng(0)
    values = rng.normal(size=5000).astype(dtype)
    edges = edges_of(values)
    below = np.nextafter(edges, -np.inf).astype(dtype)
    above = np.nextafter(edges, np.inf).astype(dtype)
    # The extremes stay put, so the edges do too.
    inside = np.concatenate([edges, below[1:], above[:-1]])
    values[: inside.size] = inside
    assert_same(compiled_histogram(values), reference_histogram(values))


@pytest.mark.parametrize(
    "values",
    [
        (1000 + np.linspace(0, 1e-3, 5001)).astype(np.float32),  # 90 buckets over a few ulps
        np.array([1e8, 1e8 + 8, *([1e8 + 4] * 2000)], dtype=np.float32),
        np.arange(-7, 1993, dtype=np.int64),  # integer edges: truncated, uneven buckets
        np.arange(0, 4000, dtype=np.uint16) % 91,
        np.repeat(np.float32(3.5), 2000),  # one value: edges at min - 0.5 .. max + 0.5
    ],
    ids=["narrow-float32", "huge-magnitude", "int64", "uint16", "constant"],
)
def test_narrow_and_integer_ranges(values: np.ndarray) -> None:
    assert_same(compiled_histogram(values), reference_histogram(values))


def test_tolerance_covers_the_rounding_of_the_edges() -> None:
    edges = edges_of((1000 + np.linspace(0, 1e-3, 5001)).astype(np.float32)).astype(np.float64)
    width = (edges[-1] - edges[0]) / (edges.size - 1)
    drift = np.abs(edges - (edges[0] + np.arange(edges.size) * width)).max() / width
    assert boundary_tolerance(edges) >= drift > 0


def test_non_finite_values_are_counted_apart() -> None:
    values = np.random.default_rng(1).normal(size=2000).astype(np.float32)
    values[[3, 70, 900]] = [np.nan, np.inf, -np.inf]
    assert_same(compiled_histogram(values), reference_histogram(values))
    only_bad = np.array([np.nan, np.inf], dtype=np.float32)
    assert_same(compiled_histogram(only_bad), reference_histogram(only_bad))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "special",
    [[np.nan], [-np.nan], [np.inf], [-np.inf], [np.nan, -np.inf], [-0.0, 0.0]],
    ids=["nan", "negative-nan", "inf", "minus-inf", "nan-and-minus-inf", "signed-zeros"],
)
def test_one_pass_extremes_see_every_special_value(dtype: type, special: list[float]) -> None:
    """The order keys put NaNs (of either sign) beyond the infinities, so one special value
    among ordinary ones sends the histogram to the exact census."""
    values = np.random.default_rng(2).normal(size=3000).astype(dtype)
    values[[5, 2999][: len(special)]] = np.array(special, dtype=dtype)
    assert_same(compiled_histogram(values), reference_histogram(values))
    assert_same(compiled_histogram(values[::-1].copy()), reference_histogram(values))


@pytest.mark.parametrize("dtype", [">f4", ">f8", ">i4"])
def test_non_native_byte_order(dtype: str) -> None:
    values = np.random.default_rng(3).normal(size=500).astype(dtype)
    assert_same(compiled_histogram(values), reference_histogram(values))


@pytest.mark.parametrize(
    "values",
    [
        np.array([0.0, 5e-324, 1e-323]),  # subnormal spread: the bucket width rounds to 0
        np.array([4.5036e15], dtype=np.float32),  # lo == hi and lo +- 0.5 round back to lo
        np.array([1e17, 1e17, np.nan]),
    ],
    ids=["subnormal", "large-constant-float32", "large-constant"],
)
def test_ranges_arithmetic_cannot_place(values: np.ndarray) -> None:
    actual, expected = compiled_histogram(values), reference_histogram(values)
    np.testing.assert_array_equal(actual.counts, expected.counts)
    np.testing.assert_array_equal(actual.left, expected.left)
    np.testing.assert_array_equal(actual.width, expected.width)


def test_empty_array() -> None:
    assert_same(compiled_histogram(np.zeros(0, np.float32)), reference_histogram(np.zeros(0)))


@settings(max_examples=150, deadline=None)
@given(
    hnp.arrays(
        dtype=st.sampled_from([np.float32, np.float64, np.int32]),
        shape=st.integers(1, 3000),
        elements={"allow_nan": False, "allow_infinity": False, "min_value": -1e6, "max_value": 1e6},
    )
)
def test_any_finite_array(values: np.ndarray) -> None:
    assert_same(compiled_histogram(values), reference_histogram(values))


SPECIAL = st.sampled_from([np.nan, -np.nan, np.inf, -np.inf, -0.0, 5e-324])
FLOATS = {
    np.float32: st.one_of(st.floats(width=32), SPECIAL),
    # float64 sums of values near the top of the range may overflow in one order and not
    # in another: kept below it.
    np.float64: st.one_of(st.floats(-1e300, 1e300), SPECIAL),
}


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from([np.float32, np.float64]).flatmap(
        lambda dtype: hnp.arrays(dtype=dtype, shape=st.integers(1, 2000), elements=FLOATS[dtype])
    )
)
def test_any_float_array(values: np.ndarray) -> None:
    """Whole float range, NaN, infinities, subnormals and signed zeros included."""
    assert_same(compiled_histogram(values), reference_histogram(values))
