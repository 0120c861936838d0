"""Gradient histograms from inside the optimizer, as the seed's MindSpore tutorial does it.

MindSpore users record gradients by subclassing their optimizer and calling
``HistogramSummary`` on each gradient in ``construct``. The same works with PyTorch: a
``torch.optim.SGD`` subclass calls the summary operator on every parameter's ``.grad``
in ``step()``, and the values land in whichever ``SummaryRecord`` is active. Nothing else
in the training loop changes.

Trains a small regression network for a few hundred steps on CPU (a few seconds) and
writes the loss every step and the gradient histograms every 10 steps.

Run: ``python examples/gradient_histograms.py [LOGDIR]`` (default: a fresh temporary
folder), then ``sumlens read LOGDIR``.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

from sumlens import SummaryRecord
from sumlens.io import iter_events
from sumlens.ops import HistogramSummary

STEPS = 200
HISTOGRAM_EVERY = 10


class GradientSummarySGD(torch.optim.SGD):
    """SGD that records the histogram of each parameter's gradient when it steps."""

    def __init__(self, model: nn.Module, lr: float) -> None:
        named = list(model.named_parameters())
        super().__init__([param for _, param in named], lr=lr)
        self.param_names = [name for name, _ in named]
        self.histogram = HistogramSummary()
        self.summarize = False

    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        if self.summarize:
            for name, param in zip(self.param_names, self.param_groups[0]["params"], strict=True):
                if param.grad is not None:
                    self.histogram(f"{name}.grad", param.grad)
        return super().step(closure)


def train(logdir: Path) -> None:
    torch.manual_seed(0)
    x = torch.randn(512, 8)
    y = x @ torch.randn(8, 1) + 0.1 * torch.randn(512, 1)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
    optimizer = GradientSummarySGD(model, lr=0.05)
    with SummaryRecord(logdir) as record:
        for step in range(1, STEPS + 1):
            batch = torch.randint(0, len(x), (64,))
            loss = nn.functional.mse_loss(model(x[batch]), y[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.summarize = step % HISTOGRAM_EVERY == 0
            optimizer.step()
            record.add_value("scalar", "loss", loss)
            record.record(step)
        print(f"wrote {record.log_dir}")


def main() -> None:
    logdir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="sumlens-"))
    train(logdir)
    counts: dict[str, int] = {}
    for event in iter_events(logdir):
        counts[event.tag] = counts.get(event.tag, 0) + 1
    for tag, count in sorted(counts.items()):
        print(f"  {tag:<16} {count:>4} values")


if __name__ == "__main__":
    main()
