"""``Model.train`` + ``SummaryCollector`` on a CUDA device: no step waits for the GPU.

Under ``torch.cuda.set_sync_debug_mode("error")`` any operation on the training thread
that makes the host wait for the device raises. The collector collects every step with
its defaults (loss, learning rate, histograms, input images, graph); every value written
must then equal what the training produced. Skipped without a CUDA device.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from sumlens.io import iter_events
from sumlens.summary.histogram import reference_histogram
from sumlens.train import Callback, LossMonitor, Model, RunContext, SummaryCollector

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

STEPS_PER_EPOCH, EPOCHS = 3, 2


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.relu(self.conv(x)).mean(dim=(2, 3)))


class KeepOnDevice(Callback):
    """Keeps each step's loss and first parameters as device copies (no wait)."""

    def __init__(self, net: nn.Module) -> None:
        self.net = net
        self.losses: list[torch.Tensor] = []
        self.params: list[dict[str, torch.Tensor]] = []

    def on_train_step_end(self, run_context: RunContext) -> None:
        cb = run_context.original_args()
        self.losses.append(cb.net_outputs.detach().clone())
        self.params.append({n: p.detach().clone() for n, p in self.net.named_parameters()})


def test_collect_every_step_without_waiting_for_the_gpu(tmp_path: Path) -> None:
    torch.manual_seed(0)
    device = torch.device("cuda")
    images = torch.rand(STEPS_PER_EPOCH * 32, 3, 300, 300, device=device)
    labels = torch.randint(0, 10, (len(images),), device=device)
    loader = DataLoader(TensorDataset(images, labels), batch_size=32)
    net = SmallCNN().to(device)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    model = Model(net, nn.CrossEntropyLoss(), optimizer)
    kept = KeepOnDevice(net)
    collector = SummaryCollector(tmp_path, collect_freq=1)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        model.train(EPOCHS, loader, callbacks=[collector, kept])
    finally:
        torch.cuda.set_sync_debug_mode("default")

    steps = list(range(1, EPOCHS * STEPS_PER_EPOCH + 1))
    events = list(iter_events(tmp_path))
    by_tag: dict[str, dict[int, object]] = {}
    for event in events:
        by_tag.setdefault(event.tag, {})[event.step] = event.value
    losses = [float(loss) for loss in kept.losses]
    assert list(by_tag["loss/auto"]) == steps
    np.testing.assert_allclose(list(by_tag["loss/auto"].values()), losses, rtol=1e-6)
    assert list(by_tag["learning_rate/auto"].values()) == [pytest.approx(0.05)] * len(steps)
    for name in ("conv.weight", "conv.bias", "fc.weight", "fc.bias"):
        written = by_tag[f"{name}/auto"]
        assert list(written) == steps, name
        for step in steps:
            expected = reference_histogram(kept.params[step - 1][name].cpu().numpy())
            np.testing.assert_array_equal(written[step].counts, expected.counts)
            assert written[step].max == expected.max
    assert list(by_tag["input_data/auto"]) == steps
    first = by_tag["input_data/auto"][1]
    assert (first.width, first.height) == (4 * 150, 150)  # 4 images, shrunk by 2
    assert any(event.plugin == "graph" for event in events)


def test_loss_monitor_prints_every_cuda_loss_without_waiting(
    capsys: pytest.CaptureFixture[str],
) -> None:
    torch.manual_seed(0)
    device = torch.device("cuda")
    data = TensorDataset(torch.rand(64, 3, 8, 8, device=device), torch.randint(0, 10, (64,)))
    loader = DataLoader(data, batch_size=16)  # 4 steps
    net = SmallCNN().to(device)
    model = Model(net, nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=0.05))
    kept = KeepOnDevice(net)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        model.train(2, loader, callbacks=[LossMonitor(), kept])
    finally:
        torch.cuda.set_sync_debug_mode("default")
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        f"epoch: {e} step: {s}, loss is {float(kept.losses[4 * (e - 1) + s - 1])}"
        for e in (1, 2)
        for s in range(1, 5)
    ]


def test_loss_monitor_stops_on_a_nan_cuda_loss() -> None:
    device = torch.device("cuda")
    net = nn.Linear(4, 1).to(device)
    data = TensorDataset(torch.rand(32, 4, device=device), torch.rand(32, 1, device=device))
    data.tensors[0][20] = float("nan")  # the 6th batch of 4
    model = Model(net, nn.MSELoss(), torch.optim.SGD(net.parameters(), lr=0.01))
    with pytest.raises(ValueError, match=r"epoch: 1 step: 6, loss is NAN or INF"):
        model.train(1, DataLoader(data, batch_size=4), callbacks=[LossMonitor(0)])
