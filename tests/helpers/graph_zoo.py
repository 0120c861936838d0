"""A zoo of models in plain PyTorch for the graph tests (no torchvision).

Each entry has example inputs and the number of operators counted by hand from the
model's ``forward`` (the captured graph must have at least that many operator nodes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import torch
from torch import nn


class LeNet(nn.Module):
    """LeNet-5 for 1x28x28 images."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 4 * 4, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.flatten = nn.Flatten()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


LENET_LAYERS = ("conv1", "conv2", "fc1", "fc2", "fc3", "relu", "pool", "flatten")
LENET_OPERATORS = 12
"""conv1, relu, pool, conv2, relu, pool, flatten, fc1, relu, fc2, relu, fc3."""


class BasicBlock(nn.Module):
    """The two-convolution residual block of ResNet-18."""

    def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample: nn.Module | None = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(
                nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class ResNet18(nn.Module):
    """ResNet-18 as torchvision defines it."""

    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(BasicBlock(64, 64), BasicBlock(64, 64))
        self.layer2 = nn.Sequential(BasicBlock(64, 128, 2), BasicBlock(128, 128))
        self.layer3 = nn.Sequential(BasicBlock(128, 256, 2), BasicBlock(256, 256))
        self.layer4 = nn.Sequential(BasicBlock(256, 512, 2), BasicBlock(512, 512))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


RESNET_LAYERS = (
    "conv1",
    "bn1",
    "relu",
    "maxpool",
    "layer1",
    "layer2",
    "layer3",
    "layer4",
    "avgpool",
    "fc",
)
RESNET_OPERATORS = 4 + 8 * 7 + 3 * 2 + 3
"""Stem conv, bn, relu, maxpool; per block conv, bn, relu, conv, bn, add, relu; the three
downsample conv + bn; avgpool, flatten, fc."""


class TransformerBlock(nn.Module):
    """A post-norm transformer encoder block called with a dict and keyword arguments."""

    def __init__(self, vocab: int = 100, dim: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm1 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.norm2 = nn.LayerNorm(dim)

    def forward(
        self, batch: dict[str, torch.Tensor], *, scale: float = 1.0, use_mask: bool = True
    ) -> torch.Tensor:
        x = self.embed(batch["input_ids"]) * scale
        mask = batch["attention_mask"] == 0 if use_mask else None
        attended, _ = self.attn(x, x, x, key_padding_mask=mask, need_weights=False)
        x = self.norm1(x + attended)
        return self.norm2(x + self.ff(x))


TRANSFORMER_OPERATORS = 13
"""embed, mul (scale), eq (mask), attention in-projection, attention, out-projection,
add, norm1, linear, gelu, linear, add, norm2."""


class LSTMNet(nn.Module):
    """A two-layer LSTM and a linear head on the last time step."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True)
        self.head = nn.Linear(16, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


LSTM_OPERATORS = 3
"""lstm, select (last step), head."""


class DataDependent(nn.Module):
    """Chooses a branch from a tensor's value: torch.export cannot trace that."""

    def __init__(self) -> None:
        super().__init__()
        self.positive = nn.Linear(4, 4)
        self.negative = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return self.positive(x)
        return self.negative(x)


def transformer_inputs() -> tuple[tuple[Any, ...], dict[str, Any]]:
    ids = torch.randint(0, 100, (2, 6))
    mask = torch.ones(2, 6, dtype=torch.long)
    mask[1, 4:] = 0
    return ({"input_ids": ids, "attention_mask": mask},), {"scale": 2.0, "use_mask": True}


@dataclasses.dataclass(frozen=True)
class Case:
    make: Callable[[], nn.Module]
    inputs: Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]
    operators: int
    path: str


ZOO: dict[str, Case] = {
    "lenet": Case(
        LeNet, lambda: ((torch.randn(2, 1, 28, 28),), {}), LENET_OPERATORS, "torch.export"
    ),
    "resnet18": Case(
        ResNet18, lambda: ((torch.randn(2, 3, 64, 64),), {}), RESNET_OPERATORS, "torch.export"
    ),
    "transformer": Case(
        TransformerBlock, transformer_inputs, TRANSFORMER_OPERATORS, "torch.export"
    ),
    "lstm": Case(LSTMNet, lambda: ((torch.randn(2, 7, 8),), {}), LSTM_OPERATORS, "torch.export"),
    "data_dependent": Case(
        DataDependent, lambda: ((torch.randn(2, 4),), {}), 0, "module_hierarchy"
    ),
}
