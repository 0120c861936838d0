"""``SummaryWriter`` given CUDA tensors: nothing makes the host wait for the device, and
the values written are those of the same tensors on the CPU. Skipped without a GPU."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from helpers.cuda import no_synchronisation
from helpers.tensorboard import accumulator, decoded

from sumlens import SummaryWriter
from sumlens.writer.histogram import HISTOGRAM_KERNELS

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


def _log(writer: SummaryWriter, values: dict[str, torch.Tensor]) -> None:
    for step in range(3):
        writer.add_scalar("loss", values["loss"] * (step + 1), step)
        writer.add_histogram("weights", values["weights"] * (step + 1), step)
        writer.add_image("image", values["image"], step)


def test_cuda_values_without_synchronising(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert HISTOGRAM_KERNELS.wait(timeout=600)
    torch.manual_seed(0)
    cpu = {
        "loss": torch.tensor(0.5),
        "weights": torch.randn(100_000),
        "image": torch.rand(3, 16, 16),
    }
    cuda = {name: value.cuda() for name, value in cpu.items()}
    torch.cuda.synchronize()
    # the writer closes (and waits for the copies) after the check has ended
    with SummaryWriter(tmp_path / "cuda") as writer, no_synchronisation(monkeypatch) as calls:
        _log(writer, cuda)
    assert calls == []
    with SummaryWriter(tmp_path / "cpu") as writer:
        _log(writer, cpu)
    on_gpu, on_cpu = accumulator(tmp_path / "cuda"), accumulator(tmp_path / "cpu")
    assert [e.value for e in on_gpu.Scalars("loss")] == [e.value for e in on_cpu.Scalars("loss")]
    for a, b in zip(on_gpu.Histograms("weights"), on_cpu.Histograms("weights"), strict=True):
        assert a.histogram_value == b.histogram_value
    for a, b in zip(on_gpu.Images("image"), on_cpu.Images("image"), strict=True):
        np.testing.assert_array_equal(
            decoded(a.encoded_image_string), decoded(b.encoded_image_string)
        )
