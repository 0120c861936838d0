"""Histograms computed with torch ops (``device_statistics``) against the numpy reference.

``device_statistics`` is device-agnostic, so the comparison runs here on CPU tensors,
where it must be exact: the device replays ``numpy.linspace`` for the edges and places
each value by comparison, and CPU arithmetic is the same IEEE arithmetic as numpy's.
The CUDA group (test_cuda.py) repeats it on a GPU with a tolerance for values lying on
an edge (see ``summary_helpers.device_histogram_vs_reference``).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from summary_helpers import device_histogram_vs_reference

from sumlens.summary.device_histogram import device_statistics, histogram_from_statistics
from sumlens.summary.histogram import MAX_BUCKETS


def check(tensor: torch.Tensor) -> None:
    device_histogram_vs_reference(tensor, exact=True)


@pytest.mark.parametrize("size", [1, 5, 10, 11, 880, 881, 100_000])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_random_values_match_the_reference(size: int, dtype: torch.dtype) -> None:
    generator = torch.Generator().manual_seed(size)
    check(torch.randn(size, generator=generator, dtype=dtype))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_reduced_floats_match_the_reference_of_their_float32_values(dtype: torch.dtype) -> None:
    generator = torch.Generator().manual_seed(1)
    check(torch.randn(5000, generator=generator).to(dtype))


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8, torch.int8])
@pytest.mark.parametrize("high", [5, 100, 10_000])
def test_integer_tensors_match_the_reference(dtype: torch.dtype, high: int) -> None:
    # Integer edges are floored, so buckets are uneven (or empty when high < 90).
    generator = torch.Generator().manual_seed(2)
    tensor = torch.randint(0, high, (3000,), generator=generator)
    if dtype in (torch.uint8, torch.int8):
        tensor = tensor % 100
    check(tensor.to(dtype))


def test_bool_tensors_match_the_reference() -> None:
    generator = torch.Generator().manual_seed(5)
    check(torch.rand(3000, generator=generator) > 0.3)


def test_non_finite_values_are_counted_apart() -> None:
    generator = torch.Generator().manual_seed(3)
    tensor = torch.randn(2000, generator=generator)
    tensor[:7] = float("nan")
    tensor[7:10] = float("inf")
    tensor[10:12] = float("-inf")
    check(tensor)


@pytest.mark.parametrize(
    "tensor",
    [
        torch.full((1000,), 3.5),
        torch.full((1000,), 1e8),
        torch.full((1000,), float("nan")),
        torch.tensor([float("inf"), float("-inf")]),
    ],
    ids=["constant", "large-constant", "nan", "inf"],
)
def test_constant_and_all_non_finite_tensors(tensor: torch.Tensor) -> None:
    check(tensor)


def test_multi_dimensional_and_non_contiguous_tensors() -> None:
    generator = torch.Generator().manual_seed(4)
    check(torch.randn(40, 50, generator=generator).t()[::2])


def test_values_on_edges_match_too() -> None:
    # 0..90 in steps of 1 with 90 buckets: every value but the ends lies on an edge.
    check(torch.arange(0, 91, dtype=torch.float32).repeat(20))
    check(torch.linspace(-1, 1, 91, dtype=torch.float32).repeat(20))


def test_bucket_count_mismatch_warns(caplog: pytest.LogCaptureFixture) -> None:
    packed = device_statistics(torch.arange(20.0)).numpy()  # 90 buckets for 20 values
    with caplog.at_level("WARNING", logger="sumlens"):
        hist = histogram_from_statistics(packed, np.dtype(np.float32), 20)
    assert hist.counts.size == MAX_BUCKETS and hist.counts.sum() == 20
    assert any("device histogram" in r.getMessage() for r in caplog.records)
