"""The digits CNN and data of the benchmarks (scikit-learn's 8x8 digits: 1,797).

The tests take theirs from here too (``tests/helpers/digits.py``), so ``bench_thor``,
``bench_landscape`` and ``bench_gpu`` measure what the tests check. The data ships with
scikit-learn: nothing is downloaded.
"""

from __future__ import annotations

import torch
from torch import nn


class DigitsCNN(nn.Module):
    """A small CNN for 1x8x8 digits; every layer a named attribute (one graph scope each)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.relu2 = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.relu1(self.conv1(x))
        x = self.pool(self.relu2(self.conv2(x)))
        return self.fc(self.flatten(x))


def digits(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """All 1,797 digits in a seeded random order: images N x 1 x 8 x 8 in [0, 1], labels N."""
    from sklearn.datasets import load_digits

    data = load_digits()
    images = torch.tensor(data.images, dtype=torch.float32).unsqueeze(1) / 16.0
    labels = torch.tensor(data.target, dtype=torch.int64)
    order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(seed))
    return images[order], labels[order]


def split(
    x: torch.Tensor, y: torch.Tensor, train_fraction: float = 0.8
) -> tuple[tuple[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
    """``(train, test)`` pairs: the first ``train_fraction`` of the samples, then the rest."""
    cut = int(train_fraction * len(y))
    return (x[:cut], y[:cut]), (x[cut:], y[cut:])


def batches(x: torch.Tensor, y: torch.Tensor, size: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Consecutive ``(images, labels)`` batches; the last one may be smaller."""
    return [(x[i : i + size], y[i : i + size]) for i in range(0, len(y), size)]
