"""``device_statistics_many``: the tensors of one step binned together, against the reference.

Each tensor's row must give exactly the histogram of its own host copy, whatever it was
grouped (and padded) with; and a batch must dispatch about as many operators as a single
tensor does.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers.torch_ops import dispatched_ops

from sumlens.summary import device_histogram
from sumlens.summary.convert import torch_numpy_dtype
from sumlens.summary.device_histogram import (
    DeviceHistogram,
    device_statistics,
    device_statistics_many,
    histogram_from_statistics,
)
from sumlens.summary.histogram import MAX_BUCKETS, reference_histogram


def assert_rows_match_reference(tensors: list[torch.Tensor]) -> None:
    """Bin ``tensors`` together; each row must equal the reference of its host copy."""
    packed, rows = device_statistics_many(tensors)
    assert packed.shape == (len(tensors), MAX_BUCKETS + 6)
    assert sorted(rows) == list(range(len(tensors)))
    host = packed.numpy()
    for tensor, row in zip(tensors, rows, strict=True):
        reduced = tensor.dtype in (torch.float16, torch.bfloat16)
        array = (tensor.float() if reduced else tensor).numpy()
        actual = histogram_from_statistics(host[row], torch_numpy_dtype(tensor), tensor.numel())
        expected = reference_histogram(array)
        for field in ("count", "nan_count", "pos_inf_count", "neg_inf_count", "min", "max"):
            assert getattr(actual, field) == getattr(expected, field), field
        assert actual.sum == pytest.approx(expected.sum, rel=1e-12, abs=1e-12)
        np.testing.assert_array_equal(actual.left, expected.left)
        np.testing.assert_array_equal(actual.width, expected.width)
        np.testing.assert_array_equal(actual.counts, expected.counts)


def _normal(size: int, seed: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(size, generator=torch.Generator().manual_seed(seed)).to(dtype)


def test_a_mixed_step_matches_the_reference_tensor_by_tensor() -> None:
    with_specials = _normal(5000, 1)
    with_specials[:9] = torch.tensor([float("nan"), float("inf"), float("-inf")]).repeat(3)
    tensors = [
        _normal(3000, 2),
        _normal(2000, 3).reshape(40, 50),  # ragged: padded with NaN to 3000
        with_specials,
        torch.full((2500,), float("nan")),  # no finite value, next to finite ones
        torch.full((2500,), 7.25),  # all equal
        _normal(4000, 4, torch.bfloat16),
        _normal(3000, 5, torch.float16),
        _normal(3000, 6, torch.float64),
        torch.randint(-50, 50, (3000,), generator=torch.Generator().manual_seed(7)),
        torch.randint(0, 9, (3000,), generator=torch.Generator().manual_seed(8)),
        torch.randint(0, 255, (3000,), dtype=torch.uint8),
        torch.ones(3000, dtype=torch.uint8) * 255,
        _normal(3000, 9) > 0,
        torch.zeros(0),
    ]
    assert_rows_match_reference(tensors)


def test_rows_follow_the_groups_and_keep_every_tensor_apart() -> None:
    tensors = [_normal(1000 + 10 * i, i) * (i + 1) for i in range(12)]
    tensors[5][:3] = float("inf")
    packed, rows = device_statistics_many(tensors)
    for tensor, row in zip(tensors, rows, strict=True):
        alone = device_statistics(tensor)
        single = histogram_from_statistics(alone.numpy(), np.dtype(np.float32), tensor.numel())
        batched = histogram_from_statistics(
            packed[row].numpy(), np.dtype(np.float32), tensor.numel()
        )
        np.testing.assert_array_equal(batched.counts, single.counts)
        assert (batched.min, batched.max, batched.nan_count) == (
            single.min,
            single.max,
            single.nan_count,
        )
        assert batched.pos_inf_count == single.pos_inf_count


def test_groups_are_split_by_dtype_size_and_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(device_histogram, "_BATCH_ELEMENTS", 4000)
    monkeypatch.setattr(device_histogram, "_GROUP_ELEMENTS", 9000)
    sizes = [1000, 1100, 1900, 2100, 5000, 900, 1000]
    tensors = [_normal(size, i) for i, size in enumerate(sizes)]
    tensors += [torch.arange(1000), torch.arange(1000) * 3, torch.arange(1200)]
    flats = [device_histogram._flat(t) for t in tensors]
    groups = sorted(sorted(group) for group in device_histogram._groups(flats))
    # Floats by size: 900, 1000, 1000, 1100 (4 x 1100 <= 2 x real size, under 9000);
    # 1900, 2100 (a third would pass 9000); 5000 alone (over the batch limit). Integers:
    # only equal sizes together.
    assert groups == [[0, 1, 5, 6], [2, 3], [4], [7, 8], [9]]
    assert_rows_match_reference(tensors)


def test_a_batch_dispatches_about_as_many_operators_as_one_tensor() -> None:
    tensors = [_normal(20_000 + 7 * i, i) for i in range(16)]
    single = dispatched_ops(device_statistics, tensors[0])
    batch = dispatched_ops(device_statistics_many, tensors)
    # One cat and one NaN padding tensor more, for 16 tensors instead of one.
    assert len(batch) <= len(single) + 2, (batch, single)
    same_size = [torch.randint(0, 100, (20_000,)) for _ in range(16)]
    assert len(dispatched_ops(device_statistics_many, same_size)) <= 16


def test_device_histogram_reads_its_row() -> None:
    tensors = [_normal(3000, 1), _normal(2000, 2)]
    packed, rows = device_statistics_many(tensors)

    class Copied:  # stands for the PendingArray of the one copy of ``packed``
        def result(self) -> np.ndarray:
            return packed.numpy()

    for tensor, row in zip(tensors, rows, strict=True):
        hist = DeviceHistogram(Copied(), np.dtype(np.float32), tensor.numel(), row).result()  # type: ignore[arg-type]
        np.testing.assert_array_equal(hist.counts, reference_histogram(tensor.numpy()).counts)


def test_tensors_of_several_devices_are_refused() -> None:
    with pytest.raises(ValueError, match="single device"):
        device_statistics_many([torch.zeros(10), torch.zeros(10, device="meta")])


def test_no_tensor_gives_no_row() -> None:
    packed, rows = device_statistics_many([])
    assert packed.shape == (0, MAX_BUCKETS + 6) and rows == []
