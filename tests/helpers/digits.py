"""The digits CNN and data that tests and benchmarks share (scikit-learn's 8x8 digits: 1,797).

Tests import it directly (``tests/`` is on ``sys.path`` through its conftest); benchmarks
put ``tests/`` on ``sys.path`` first. The data ships with scikit-learn: nothing is downloaded.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

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


@contextlib.contextmanager
def reproducible() -> Iterator[None]:
    """One torch thread and deterministic algorithms (restored afterwards), so training
    repeats as closely as torch allows; its last bits may still differ between CPUs and
    even between processes, so committed numbers are compared with an allowance."""
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(deterministic)
        torch.set_num_threads(threads)
