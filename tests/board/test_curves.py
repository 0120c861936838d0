"""Smoothing and downsampling of the scalars view, against plain reference loops."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.board import tb_ema
from hypothesis import given, settings
from hypothesis import strategies as st

from sumlens.board.query.curves import pick, smooth


def _series(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    values = np.cumsum(rng.standard_normal(n)) + 100.0 * np.sin(np.arange(n) / 500.0)
    values[rng.integers(0, n, size=max(1, n // 1000))] = np.nan
    values[n // 3] = np.inf
    return values


@pytest.mark.parametrize("weight", [1e-9, 0.05, 0.3, 0.6, 0.9, 0.99, 0.999])
def test_ema_equals_tensorboards_loop(weight: float) -> None:
    values = _series(20_000)
    np.testing.assert_allclose(
        smooth(values, weight), tb_ema(values, weight), rtol=1e-11, atol=1e-11, equal_nan=True
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=1, max_size=300),
    st.floats(min_value=0.0, max_value=0.999),
)
def test_ema_on_any_values(values: list[float], weight: float) -> None:
    array = np.asarray(values, dtype=np.float64)
    got, expected = smooth(array, weight), tb_ema(array, weight)
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(np.isfinite(got), finite)
    np.testing.assert_array_equal(got[~finite], expected[~finite])
    scale = np.abs(array[np.isfinite(array)]).max(initial=1.0)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-9, atol=1e-12 * scale)


def test_running_average() -> None:
    values = np.array([1.0, 2.0, np.nan, 3.0, 4.0, 5.0, 6.0])
    got = smooth(values, 0.75, "average")  # window of 4 finite values
    assert np.isnan(got[2])
    np.testing.assert_allclose(got[[0, 1, 3, 4, 5, 6]], [1.0, 1.5, 2.0, 2.5, 3.5, 4.5])


def test_no_smoothing_is_the_values() -> None:
    values = _series(100)
    np.testing.assert_array_equal(smooth(values, 0.0), values)


def test_pick_keeps_bucket_extremes_and_ends() -> None:
    values = _series(100_000, seed=3)
    steps = np.arange(100_000, dtype=np.int64) * 3
    chosen = pick(steps, values, 500)
    assert chosen.size <= 500 and chosen[0] == 0 and chosen[-1] == values.size - 1
    assert np.all(np.diff(chosen) > 0)
    finite = np.where(np.isfinite(values), values, np.nan)
    assert np.nanargmax(finite) in chosen and np.nanargmin(finite) in chosen
    np.testing.assert_array_equal(pick(steps, values, 500), chosen)  # deterministic
    np.testing.assert_array_equal(pick(steps[:300], values[:300], 500), np.arange(300))


@pytest.mark.parametrize("points", [2, 3, 4, 5, 6, 7])
def test_pick_with_a_few_points(points: int) -> None:
    """tsdownsample needs two buckets besides the ends; fewer points are one bucket."""
    steps = np.arange(1000, dtype=np.int64)
    values = np.sin(steps / 40.0)
    values[300], values[700] = 5.0, -9.0  # the spikes: -9 is further outside the ends
    chosen = pick(steps, values, points)
    assert 2 <= chosen.size <= points and chosen[0] == 0 and chosen[-1] == 999
    assert np.all(np.diff(chosen) > 0)
    if points >= 3:
        assert 700 in chosen
    if points >= 4:
        assert 300 in chosen
    values[500] = np.nan  # a gap stands for its bucket, as in tsdownsample's NaN-aware min-max
    if points in (3, 4, 5):
        assert 500 in pick(steps, values, points)


def test_pick_refuses_fewer_than_two_points() -> None:
    with pytest.raises(ValueError, match="points=1"):
        pick(np.arange(10), np.zeros(10), 1)
