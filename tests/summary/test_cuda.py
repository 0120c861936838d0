"""CUDA tensors: recorded without synchronising the training stream, with the right values;
device histograms against the numpy reference.

Skipped without a CUDA device. Tolerance for device histograms: statistics equal, counts
with the same total and an L1 distance of at most twice the number of values lying
within 1e-6 (relative to the range) of a bucket edge (see
``summary_helpers.device_histogram_vs_reference``).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers.cuda import no_synchronisation
from helpers.summary import device_histogram_vs_reference, read_events
from PIL import Image as PILImage

from sumlens import SummaryRecord, ops
from sumlens.summary.device_histogram import SMALL_TENSOR
from sumlens.summary.histogram import reference_histogram

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


def test_cuda_values_are_recorded_without_synchronising(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    torch.manual_seed(0)
    device = torch.device("cuda")
    scalar = torch.tensor(1.25, device=device)
    tensor = torch.randn(3, 4, device=device)
    small_hist = torch.randn(1000, device=device)
    large_hist = torch.randn(4 * SMALL_TENSOR, device=device)
    image = torch.rand(2, 3, 8, 8, device=device)
    bf16 = torch.randn(16, device=device, dtype=torch.bfloat16)
    expected = {
        "scalar": 1.25,
        "tensor": tensor.cpu().numpy(),
        "small_hist": small_hist.cpu().numpy(),
        "large_hist": large_hist.cpu().numpy(),
        "image": image.cpu().numpy(),
        "bf16": bf16.float().cpu().numpy(),
    }
    torch.cuda.synchronize()
    with SummaryRecord(tmp_path) as rec:
        with no_synchronisation(monkeypatch) as calls:
            rec.add_value("scalar", "scalar", scalar)
            rec.add_value("tensor", "tensor", tensor)
            rec.add_value("histogram", "small_hist", small_hist)
            rec.add_value("histogram", "large_hist", large_hist)
            rec.add_value("image", "image", image)
            rec.add_value("tensor", "bf16", bf16)
            ops.scalar("op_scalar", scalar * 2)
            rec.record(1)
            # later in-place changes on the same stream must not reach the record
            for value in (scalar, tensor, small_hist, large_hist, image):
                value.mul_(-1).add_(7)
        assert calls == []
    events = {e.tag: e.value for e in read_events(tmp_path)}
    assert events["scalar"] == 1.25
    assert events["op_scalar"] == 2.5
    np.testing.assert_array_equal(events["tensor"], expected["tensor"])
    np.testing.assert_array_equal(events["bf16"], expected["bf16"])
    small = reference_histogram(expected["small_hist"])
    np.testing.assert_array_equal(events["small_hist"].counts, small.counts)
    large = reference_histogram(expected["large_hist"])
    assert events["large_hist"].count == large.count
    assert events["large_hist"].min == large.min and events["large_hist"].max == large.max
    assert events["large_hist"].counts.sum() == large.counts.sum()
    with SummaryRecord(tmp_path / "host") as rec:
        rec.add_value("image", "image", expected["image"])
        rec.record(1)
    [host_image] = read_events(tmp_path / "host")
    decoded = np.asarray(PILImage.open(io.BytesIO(events["image"].encoded)))
    np.testing.assert_array_equal(
        decoded, np.asarray(PILImage.open(io.BytesIO(host_image.value.encoded)))
    )


def test_many_cuda_steps_are_all_written(tmp_path: Path) -> None:
    device = torch.device("cuda")
    weights = torch.zeros(100_000, device=device)
    with SummaryRecord(tmp_path) as rec:
        for step in range(50):
            weights.fill_(float(step))
            rec.add_value("tensor", "w_head", weights[:10])
            rec.add_value("histogram", "w", weights)
            rec.record(step)
    events = read_events(tmp_path)
    for event in events:
        if event.tag == "w_head":
            np.testing.assert_array_equal(event.value, np.full(10, event.step, np.float32))
        else:
            assert event.value.min == event.value.max == event.step
    assert sorted({e.step for e in events}) == list(range(50))


@pytest.mark.parametrize("size", [881, 100_000, 3_000_000])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_device_histogram_matches_reference(size: int, dtype: torch.dtype) -> None:
    generator = torch.Generator(device="cuda").manual_seed(size)
    tensor = torch.randn(size, device="cuda", generator=generator).to(dtype)
    tensor[:3] = torch.tensor([float("nan"), float("inf"), float("-inf")], dtype=dtype)
    device_histogram_vs_reference(tensor, exact=False)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8, torch.bool])
def test_device_histogram_of_integers_matches_reference(dtype: torch.dtype) -> None:
    generator = torch.Generator(device="cuda").manual_seed(1)
    tensor = torch.randint(0, 200, (100_000,), device="cuda", generator=generator)
    tensor = tensor > 100 if dtype == torch.bool else tensor.to(dtype)
    device_histogram_vs_reference(tensor, exact=False)


def test_device_histogram_with_values_on_edges() -> None:
    device_histogram_vs_reference(
        torch.arange(0, 91, dtype=torch.float32, device="cuda").repeat(1000), exact=False
    )
