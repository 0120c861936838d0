"""Mode 1 of the seed docs: ``SummaryCollector`` collects the common data by itself.

Instantiate a ``SummaryCollector`` and pass it to ``Model.train`` (and ``Model.eval``):
without writing any recording code you get the loss (``loss/auto``), the learning rate
(``learning_rate/auto``), the input images (``input_data/auto``), histograms of the first
five parameters (``<name>/auto``), the model's graph and the train/eval lineage.

Trains a small CNN on synthetic 1x12x12 "images" from a ``DataLoader`` (whose pipeline
is recorded as the dataset graph) for two epochs of 40 steps (a few seconds on CPU), then
evaluates it with the same collector.

Run: ``python examples/mode1_collector.py [LOGDIR]`` (default: a fresh temporary folder),
then ``sumlens read LOGDIR``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from sumlens import LossMonitor, Model, SummaryCollector
from sumlens.io import describe

EPOCHS = 2
BATCHES = 40
BATCH_SIZE = 32


class SmallCNN(nn.Module):
    def __init__(self, classes: int = 4) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(16 * 3 * 3, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(torch.relu(self.conv1(x)))
        x = self.pool(torch.relu(self.conv2(x)))
        return self.fc(x.flatten(1))


def synthetic_images(batches: int, seed: int) -> DataLoader:
    """Noisy images whose class is the quadrant holding a faint square, in a DataLoader."""
    gen = torch.Generator().manual_seed(seed)
    count = batches * BATCH_SIZE
    labels = torch.randint(0, 4, (count,), generator=gen)
    images = torch.randn(count, 1, 12, 12, generator=gen)
    for i, label in enumerate(labels.tolist()):
        row, col = divmod(label, 2)
        images[i, 0, row * 6 + 1 : row * 6 + 5, col * 6 + 1 : col * 6 + 5] += 0.4
    return DataLoader(
        TensorDataset(images, labels), batch_size=BATCH_SIZE, shuffle=True, generator=gen
    )


def run(logdir: Path) -> None:
    torch.manual_seed(0)
    train_data = synthetic_images(BATCHES, seed=1)
    eval_data = synthetic_images(8, seed=2)
    network = SmallCNN()
    optimizer = torch.optim.SGD(network.parameters(), lr=0.05, momentum=0.9)
    model = Model(network, nn.CrossEntropyLoss(), optimizer, metrics={"acc"})

    # collect every 5 steps (and always the first one); everything else by default
    collector = SummaryCollector(summary_dir=str(logdir), collect_freq=5)
    model.train(EPOCHS, train_data, callbacks=[LossMonitor(per_print_times=20), collector])
    # the same collector in eval writes the evaluation lineage (metrics) next to the run
    result = model.eval(eval_data, callbacks=[collector])
    print(f"eval: {result}")


def main() -> None:
    logdir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="sumlens-"))
    run(logdir)
    print(f"wrote {logdir}:")
    print(describe(logdir))


if __name__ == "__main__":
    main()
