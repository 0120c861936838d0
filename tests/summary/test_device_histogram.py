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
from helpers.summary import device_histogram_vs_reference
from helpers.torch_ops import dispatched_ops

from sumlens.summary.device_histogram import device_statistics, histogram_from_statistics
from sumlens.summary.histogram import MAX_BUCKETS, reference_histogram


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


@pytest.mark.parametrize(("lo", "hi"), [(0.1, 0.7), (-1.7, 3.3), (12.345, 100.1)])
def test_float64_values_on_edges_whose_step_is_not_a_reciprocal_product(
    lo: float, hi: float
) -> None:
    # For these ranges (hi - lo) / 90 differs from (hi - lo) * (1 / 90) in the last bit,
    # and float64 edges are not rounded again: values lying on the host's edges show
    # whether the device divides exactly (CUDA turns a division by a Python number into
    # a product with its reciprocal).
    edges = np.linspace(lo, hi, MAX_BUCKETS + 1)
    check(torch.from_numpy(np.repeat(edges, 11)))


def test_bucket_count_mismatch_warns(caplog: pytest.LogCaptureFixture) -> None:
    packed = device_statistics(torch.arange(20.0)).numpy()  # 90 buckets for 20 values
    with caplog.at_level("WARNING", logger="sumlens"):
        hist = histogram_from_statistics(packed, np.dtype(np.float32), 20)
    assert hist.counts.size == MAX_BUCKETS and hist.counts.sum() == 20
    assert any("device histogram" in r.getMessage() for r in caplog.records)


def _sprinkled(dtype: torch.dtype, kinds: str, finite: bool = True) -> torch.Tensor:
    """3000 values (normal ones unless not ``finite``) with some NaN (n), +inf (p), -inf (m)."""
    generator = torch.Generator().manual_seed(len(kinds))
    tensor = torch.randn(3000, generator=generator) if finite else torch.full((3000,), 0.0)
    specials = {"n": float("nan"), "p": float("inf"), "m": float("-inf")}
    for offset, kind in enumerate(kinds):
        tensor[offset :: len(kinds) + 1] = specials[kind]
    if not finite:
        tensor[len(kinds) :: len(kinds) + 1] = specials[kinds[0]]
    return tensor.to(dtype)


FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kinds", ["n", "p", "m", "np", "pm", "npm"])
def test_nan_and_infinities_are_told_apart_in_every_float_dtype(
    dtype: torch.dtype, kinds: str
) -> None:
    check(_sprinkled(dtype, kinds))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kinds", ["n", "p", "m", "npm"])
def test_tensors_without_a_finite_value(dtype: torch.dtype, kinds: str) -> None:
    # float64: the neutral values make lo > hi by the whole range, which must not
    # overflow into NaN edges (the classes of the infinities depend on the edges).
    check(_sprinkled(dtype, kinds, finite=False))


@pytest.mark.parametrize("dtype", FLOATS)
def test_all_finite_values_equal_among_non_finite_ones(dtype: torch.dtype) -> None:
    tensor = torch.tensor([2.5, float("nan"), float("inf"), float("-inf")]).repeat(300)
    check(tensor.to(dtype))


@pytest.mark.parametrize(
    "values",
    [[-0.0, 0.0], [1e-40, 0.0], [3.0, 3.0 + 2**-20], [-7.0]],
    ids=["signed-zeros", "denormal", "one-ulp-apart", "single-value"],
)
def test_tiny_ranges_and_equal_values(values: list[float]) -> None:
    check(torch.tensor(values * 500, dtype=torch.float32))


@pytest.mark.parametrize("dtype", FLOATS)
def test_largest_finite_values_stay_in_the_buckets(dtype: torch.dtype) -> None:
    # The largest finite value is the second-to-last boundary: it must not count as +inf.
    big = torch.finfo(dtype).max  # float64: a range wider than the largest float64
    generator = torch.Generator().manual_seed(6)
    tensor = torch.randn(2000, generator=generator, dtype=torch.float64) * (big / 1e4)
    tensor[:5] = torch.tensor([big, -big, float("inf"), float("-inf"), float("nan")])
    check(tensor.to(dtype))


@pytest.mark.parametrize(
    ("dtype", "values"),
    [
        (torch.int8, [-128, 127]),
        (torch.int8, [-128]),
        (torch.uint8, [255]),
        (torch.uint8, [0]),
        (torch.uint8, [0, 255]),
        (torch.int16, [-(2**15), 2**15 - 1]),
        (torch.int32, [-(2**31), 2**31 - 1]),
        (torch.int64, [2**60, 2**60 + 2**10]),  # compared in float64, as numpy does
        (torch.int64, [-(2**62), 2**62]),
        (torch.bool, [True]),
        (torch.bool, [False]),
    ],
)
def test_integer_extremes_and_constants(dtype: torch.dtype, values: list[int]) -> None:
    generator = torch.Generator().manual_seed(7)
    picks = torch.randint(0, len(values), (2000,), generator=generator)
    spread = torch.tensor(values, dtype=torch.int64)[picks]
    if len(values) == 2 and dtype != torch.bool:  # fill the range in between too
        low, high = values
        unit = (high - low) >> 20
        if unit:
            inside = torch.randint(0, 2**20, (2000,), generator=generator) * unit
            inside += torch.randint(0, unit, (2000,), generator=generator)
        else:
            inside = torch.randint(0, high - low + 1, (2000,), generator=generator)
        spread = torch.cat([spread, low + inside])
    check(spread.to(dtype))


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64"])
def test_wide_unsigned_integers(name: str) -> None:
    dtype = getattr(torch, name, None)
    if dtype is None:
        pytest.skip(f"torch {torch.__version__} has no {name}")
    generator = torch.Generator().manual_seed(9)
    check(torch.randint(0, 60_000, (3000,), generator=generator).to(dtype))
    check(torch.full((1000,), 2**15, dtype=dtype))


@pytest.mark.parametrize("dtype", [torch.float8_e4m3fn, torch.float8_e5m2])
def test_float8_is_binned_as_its_float32_values(dtype: torch.dtype) -> None:
    generator = torch.Generator().manual_seed(10)
    tensor = (torch.randn(3000, generator=generator) * 4).to(dtype)
    packed = device_statistics(tensor).numpy()
    actual = histogram_from_statistics(packed, np.dtype(np.float32), tensor.numel())
    expected = reference_histogram(tensor.float().numpy())
    np.testing.assert_array_equal(actual.counts, expected.counts)
    np.testing.assert_array_equal(actual.left, expected.left)
    assert (actual.min, actual.max, actual.nan_count) == (
        expected.min,
        expected.max,
        expected.nan_count,
    )


def test_empty_tensors_have_no_buckets() -> None:
    check(torch.zeros(0))
    check(torch.zeros(0, dtype=torch.int32))


def test_one_dimensional_strided_tensors() -> None:
    generator = torch.Generator().manual_seed(8)
    check(torch.randn(9000, generator=generator)[::3])
    check((torch.randn(9000, generator=generator) > 0)[1::2])


@pytest.mark.parametrize(
    "dtype", [*FLOATS, torch.int8, torch.uint8, torch.int32, torch.int64, torch.bool]
)
def test_nothing_reads_device_values_back(dtype: torch.dtype) -> None:
    # A meta tensor has no data: .item(), nonzero, a Python bool of a tensor or a
    # data-dependent shape raise, and so does a host tensor mixed in (but a 0-d one,
    # which kernels take by value). So running on one shows that the host never waits
    # for the device; test_cuda.py checks the same on a GPU with torch's sync debug mode.
    packed = device_statistics(torch.empty(50_000, dtype=dtype, device="meta"))
    assert packed.device.type == "meta"
    assert packed.shape == (MAX_BUCKETS + 6,)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.int32])
def test_few_operators_per_tensor(dtype: torch.dtype) -> None:
    # Was 44 to 49 (isfinite, masks, five reductions, stack, cat ...); now 12 to 17,
    # of which 7 pass over the values: three nan_to_num, aminmax, sum, searchsorted and
    # scatter_add_ (sum converts float32 to float64 and searchsorted bfloat16 to float32
    # inside: one more pass each).
    ops = dispatched_ops(device_statistics, torch.zeros(50_000).to(dtype))
    # float64 adds 7 ops on one value per tensor (a range wider than the largest float64
    # takes the halved ends' edges, doubled); none passes over the values.
    assert len(ops) <= (24 if dtype == torch.float64 else 17), ops
