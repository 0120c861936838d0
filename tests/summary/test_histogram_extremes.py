"""Histograms of values at the ends of their types, on every path (issue 25 item 17).

``-1.7e308 .. 1.7e308`` spans more than the largest float64, so ``linspace`` over it is
all NaN; ``float(2**63 - 1)`` is ``2**63``, which int64 cannot hold, so the last edge of
an int64 range reaching the top wrapped to ``-2**63``, and widths taken in int64 wrapped
too. The writer dropped such histograms (with numpy's message), or the compiled path
wrote wrong counts. Now every path (numpy reference, numba kernels, torch ops as on a
GPU) bins them the same way, and they are written and read back.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers.summary import assert_same_buckets

from sumlens import SummaryRecord
from sumlens.io import Histogram, iter_events
from sumlens.summary import _histogram_jit as jit
from sumlens.summary import histogram
from sumlens.summary.convert import torch_numpy_dtype
from sumlens.summary.device_histogram import device_statistics, histogram_from_statistics
from sumlens.summary.histogram import bucket_count, compiled_histogram, reference_histogram

F64 = np.finfo(np.float64)
F32 = np.finfo(np.float32)
I64 = np.iinfo(np.int64)


def spread(low: float, high: float, dtype: type, size: int = 3000) -> np.ndarray:
    """``size`` values of ``dtype`` from ``low`` to ``high`` (both included), shuffled."""
    rng = np.random.default_rng(0)
    if np.dtype(dtype).kind == "f":
        inner = (low * 0.5 + rng.random(size - 2) * (high * 0.5 - low * 0.5)) * 2
        values = np.concatenate([[low, high], inner]).astype(dtype)
    else:
        inner = rng.integers(low, high, size - 2, dtype=dtype, endpoint=True)
        values = np.concatenate([np.array([low, high], dtype=dtype), inner])
    rng.shuffle(values)
    return values


EXTREMES = {
    "float64-issue": np.array([-1.7e308, 1.7e308]),
    "float64-ends": np.array([F64.min, F64.max]),
    "float64-spread": spread(F64.min, F64.max, np.float64),
    "float64-one-side": spread(-1e308, F64.max, np.float64),
    "float32-ends": np.array([F32.min, F32.max], dtype=np.float32),
    "int64-issue": np.array([I64.min, I64.max]),
    "int64-spread": spread(I64.min, I64.max, np.int64),
    "int64-top": spread(0, I64.max, np.int64),
    "int64-top-constant": np.full(1000, I64.max),
    "int32-ends": spread(-(2**31), 2**31 - 1, np.int32),
    "int8-ends": np.array([-128, 127], dtype=np.int8),
    "uint64-ends": np.array([0, 2**64 - 1], dtype=np.uint64),
    "uint8-ends": np.array([0, 255], dtype=np.uint8),
}


@pytest.fixture(autouse=True)
def _numpy_warnings_are_errors() -> Iterator[None]:
    """An overflow or invalid cast warned by numpy is a value made up: fail on it."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


def assert_sound(hist: Histogram, values: np.ndarray) -> None:
    """Buckets that cover the finite values: in order, finite, positive widths, all counted."""
    finite = values[np.isfinite(values.astype(np.float64))] if values.dtype.kind == "f" else values
    assert hist.counts.size == bucket_count(finite.size)
    assert hist.counts.sum() == finite.size
    assert np.all(np.isfinite(hist.left)) and np.all(np.isfinite(hist.width))
    assert np.all(hist.width > 0)
    assert np.all(np.diff(hist.left) > 0)
    assert hist.left[0] == float(finite.min()) and hist.min == float(finite.min())
    assert hist.max == float(finite.max())
    top = hist.left[-1] + hist.width[-1]
    assert top >= hist.max or top == pytest.approx(hist.max, rel=1e-15)


@pytest.mark.parametrize("name", [n for n in EXTREMES if "constant" not in n])
def test_the_reference_bins_extremes_soundly(name: str) -> None:
    # (A constant beyond 2**53 keeps MindSpore's rule: its +-0.5 edges round to the
    # value itself, so its buckets have no width; the paths still agree, below.)
    values = EXTREMES[name]
    assert_sound(reference_histogram(values), values)


@pytest.mark.parametrize("name", list(EXTREMES))
def test_the_compiled_kernels_equal_the_reference(name: str) -> None:
    values = EXTREMES[name]
    assert_same_buckets(compiled_histogram(values), reference_histogram(values))


@pytest.mark.parametrize("name", [n for n in EXTREMES if "uint64" not in n])
def test_the_device_path_equals_the_reference(name: str) -> None:
    values = EXTREMES[name]
    tensor = torch.from_numpy(values)
    bins = bucket_count(values.size)
    packed = device_statistics(tensor, bins).numpy()
    actual = histogram_from_statistics(packed, torch_numpy_dtype(tensor), tensor.numel())
    assert_same_buckets(actual, reference_histogram(values))


def test_the_issue_values_have_the_expected_buckets() -> None:
    hist = reference_histogram(np.array([-1.7e308, 1.7e308]))
    assert hist.left.tolist() == [-1.7e308, 0.0]
    assert hist.width.tolist() == [1.7e308, 1.7e308]
    assert hist.counts.tolist() == [1, 1]
    assert hist.sum == 0.0
    ints = reference_histogram(np.array([I64.min, I64.max]))
    assert ints.left.tolist() == [float(I64.min), 0.0]
    assert ints.width.tolist() == [2.0**63, float(I64.max)]  # exact, then rounded once
    assert ints.counts.tolist() == [1, 1]


@pytest.mark.parametrize(
    ("lo", "hi", "bins"),
    [(-1.7e308, 1.7e308, 2), (F64.min, F64.max, 90), (-1e308, F64.max, 37), (-1.0, 2.0, 90)],
)
def test_the_compiled_edges_are_the_host_edges(lo: float, hi: float, bins: int) -> None:
    edges = jit.linspace(lo, hi, bins)
    np.testing.assert_array_equal(edges, histogram.float_edges(lo, hi, bins))
    assert np.all(np.isfinite(edges)) and np.all(np.diff(edges) > 0)
    if math.isfinite(float(hi) - float(lo)):  # the ordinary case: numpy linspace, bit for bit
        np.testing.assert_array_equal(edges, np.linspace(lo, hi, bins + 1))


@pytest.mark.parametrize("file_format", ["mindspore", "tensorboard"])
def test_extreme_histograms_are_written_and_read_back(
    tmp_path: Path, file_format: str, caplog: pytest.LogCaptureFixture
) -> None:
    names = ["float64-issue", "int64-issue", "uint64-ends", "float64-spread", "int64-top"]
    with (
        caplog.at_level(logging.WARNING, logger="sumlens"),
        SummaryRecord(tmp_path, file_format=file_format) as rec,
    ):
        for step in (1, 2):
            for name in names:
                rec.add_value("histogram", name, EXTREMES[name])
            rec.add_value("histogram", "as-torch", torch.from_numpy(EXTREMES["int64-issue"]))
            rec.record(step)
    assert [r.getMessage() for r in caplog.records] == []
    read = {(e.step, e.tag): e.value for e in iter_events(tmp_path) if e.plugin == "histogram"}
    assert sorted(read) == sorted((s, t) for s in (1, 2) for t in [*names, "as-torch"])
    for (_, tag), hist in read.items():
        values = EXTREMES["int64-issue" if tag == "as-torch" else tag]
        expected = reference_histogram(values)
        np.testing.assert_array_equal(hist.counts, expected.counts)
        if file_format == "mindspore":  # TensorBoard keeps bucket limits, not left edges
            np.testing.assert_array_equal(hist.left, expected.left)
            np.testing.assert_array_equal(hist.width, expected.width)
        assert (hist.min, hist.max) == (expected.min, expected.max)
