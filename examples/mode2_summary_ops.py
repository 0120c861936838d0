"""Mode 2 of the seed docs: summary operators inside the network, plus ``SummaryCollector``.

The network calls ``ImageSummary``, ``TensorSummary``, ``HistogramSummary`` and
``ScalarSummary`` in its ``forward`` (MindSpore's ``construct``) to record its input, an
intermediate activation, the logits' distribution and the mean activation. The values go to
the collector's ``SummaryRecord`` and are written at the steps it collects (tensors at the
fewer steps of ``collect_tensor_freq``); in evaluation they are dropped. As in the seed,
``keep_default_action=False`` collects only what ``collect_specified_data`` lists (the
loss and the histograms of ``conv1.*``/``conv2.*``) besides the operators' values.

Trains a small CNN on synthetic images for 40 steps (a few seconds on CPU).

Run: ``python examples/mode2_summary_ops.py [LOGDIR]`` (default: a fresh temporary
folder), then ``sumlens read LOGDIR``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import torch
from torch import nn

from sumlens import LossMonitor, Model, SummaryCollector
from sumlens.io import describe
from sumlens.ops import HistogramSummary, ImageSummary, ScalarSummary, TensorSummary

STEPS = 40
BATCH_SIZE = 16


class SummarizedCNN(nn.Module):
    """A small CNN that records what flows through it with summary operators."""

    def __init__(self, classes: int = 4) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(16 * 3 * 3, classes)
        self.image_summary = ImageSummary()
        self.tensor_summary = TensorSummary()
        self.histogram_summary = HistogramSummary()
        self.scalar_summary = ScalarSummary()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.image_summary("input_image", x[:4])  # names must be unique per operator kind
        x = self.pool(torch.relu(self.conv1(x)))
        self.tensor_summary("conv1_output", x[0, 0])
        self.scalar_summary("conv1_mean_activation", x.mean())
        x = self.pool(torch.relu(self.conv2(x)))
        logits = self.fc(x.flatten(1))
        self.histogram_summary("logits", logits)
        return logits


def synthetic_images(batches: int, seed: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Batches of noisy images whose class is the quadrant holding a bright square."""
    gen = torch.Generator().manual_seed(seed)
    data = []
    for _ in range(batches):
        labels = torch.randint(0, 4, (BATCH_SIZE,), generator=gen)
        images = torch.randn(BATCH_SIZE, 1, 12, 12, generator=gen)
        for i, label in enumerate(labels.tolist()):
            row, col = divmod(label, 2)
            images[i, 0, row * 6 + 1 : row * 6 + 5, col * 6 + 1 : col * 6 + 5] += 0.4
        data.append((images, labels))
    return data


def run(logdir: Path) -> None:
    torch.manual_seed(0)
    network = SummarizedCNN()
    optimizer = torch.optim.SGD(network.parameters(), lr=0.05, momentum=0.9)
    model = Model(network, nn.CrossEntropyLoss(), optimizer, metrics={"acc"})

    specified = {"collect_metric": True, "histogram_regular": "^conv1.*|^conv2.*"}
    collector = SummaryCollector(
        summary_dir=str(logdir),
        collect_specified_data=specified,
        collect_freq=1,
        keep_default_action=False,
        collect_tensor_freq=20,
    )
    model.train(
        1, synthetic_images(STEPS, seed=1), callbacks=[LossMonitor(per_print_times=20), collector]
    )
    # in evaluation the operators' values are dropped: nothing is added to the run
    print(f"eval: {model.eval(synthetic_images(4, seed=2), callbacks=[collector])}")


def main() -> None:
    logdir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="sumlens-"))
    run(logdir)
    print(f"wrote {logdir}:")
    print(describe(logdir))


if __name__ == "__main__":
    main()
