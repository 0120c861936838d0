"""The small torch model of the graph view's tests: nested modules, so nested scopes.

``Net``: ``features`` (a ``Block`` of conv -> bn -> relu, then a pool) and a linear
``head``, for inputs of 3 x 8 x 8.
"""

from __future__ import annotations

import torch


class Block(torch.nn.Module):
    """conv -> bn -> relu: three layers of one block."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.act = torch.nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.bn(self.conv(x)))


class Net(torch.nn.Module):
    """features (a block, a pool) then a linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.features = torch.nn.Sequential(Block(), torch.nn.MaxPool2d(2))
        self.head = torch.nn.Linear(4 * 4 * 4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).flatten(1))
