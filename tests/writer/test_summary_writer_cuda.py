"""``SummaryWriter`` given CUDA tensors: nothing makes the host wait for the device, and
the values written are those of the same tensors on the CPU. Skipped without a GPU."""

from __future__ import annotations

import logging
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


def test_a_cuda_histogram_that_cannot_be_binned_is_said_not_dropped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A CUDA tensor's values are seen only on the writer thread: one that torch's writer
    would refuse (no value inside the default bins) is not written, the first of its tag is
    said in full and how many at close; the others are written."""
    nan = torch.full((8,), float("nan"), device="cuda")
    with caplog.at_level(logging.ERROR, logger="sumlens"), SummaryWriter(tmp_path) as writer:
        for step in range(3):
            writer.add_histogram("nan", nan, step)
            writer.add_histogram("fine", torch.ones(8, device="cuda"), step)
    said = [r.getMessage() for r in caplog.records if r.name == "sumlens"]
    assert len(said) == 2, said
    assert "the argument 'values' of tag 'nan' cannot be binned" in said[0]
    assert "3 histogram(s) of tag 'nan' could not be binned" in said[1]
    acc = accumulator(tmp_path)
    assert acc.Tags()["histograms"] == ["fine"]
    assert [e.step for e in acc.Histograms("fine")] == [0, 1, 2]
