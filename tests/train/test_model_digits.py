"""End to end: a small CNN on scikit-learn's bundled digits with Model.train + LossMonitor."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from sumlens.train import Model
from sumlens.train.callbacks import LossMonitor

datasets = pytest.importorskip("sklearn.datasets")


def _batches(x: torch.Tensor, y: torch.Tensor, size: int) -> list[tuple]:
    return [(x[i : i + size], y[i : i + size]) for i in range(0, len(x), size)]


class ShuffledBatches:
    """A re-iterable that reshuffles each epoch (seeded, so the run is reproducible)."""

    def __init__(self, x: torch.Tensor, y: torch.Tensor, size: int, seed: int) -> None:
        self.x, self.y, self.size = x, y, size
        self.gen = torch.Generator().manual_seed(seed)

    def __len__(self) -> int:
        return (len(self.x) + self.size - 1) // self.size

    def __iter__(self):
        order = torch.randperm(len(self.x), generator=self.gen)
        return iter(_batches(self.x[order], self.y[order], self.size))


def test_digits_cnn_reaches_95_percent(capsys: pytest.CaptureFixture[str]) -> None:
    torch.manual_seed(0)
    digits = datasets.load_digits()
    x = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    y = torch.tensor(digits.target, dtype=torch.long)
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(0))
    x, y = x[order], y[order]
    cut = int(0.8 * len(x))
    train = ShuffledBatches(x[:cut], y[:cut], 32, seed=1)
    test = _batches(x[cut:], y[cut:], 128)

    net = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 4 * 4, 64),
        nn.ReLU(),
        nn.Linear(64, 10),
    )
    model = Model(
        net,
        nn.CrossEntropyLoss(),
        torch.optim.Adam(net.parameters(), lr=2e-3),
        metrics={"acc", "loss"},
    )
    model.train(8, train, callbacks=LossMonitor(per_print_times=len(train)))
    result = model.eval(test)

    printed = capsys.readouterr().out
    assert printed.count("loss is") == 8  # one line per epoch
    assert result["acc"] >= 0.95, result
