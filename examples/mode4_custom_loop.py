"""Mode 4 of the seed docs: a hand-written PyTorch training loop with ``SummaryRecord``.

No ``Model``, no callbacks: the loop adds the values it wants with ``add_value`` and
writes them as one step with ``record(step)``. The loss and the learning rate (a
``torch.optim.lr_scheduler.CosineAnnealingLR`` schedule) are recorded every step, the
parameter histograms every ``HISTOGRAM_EVERY`` steps. Passing ``network=`` makes the
record also capture the model's graph once, at the first ``record`` after the first
forward call.

Trains a small MLP on synthetic data for 3 epochs of 50 steps (a few seconds on CPU).

Run: ``python examples/mode4_custom_loop.py [LOGDIR]`` (default: a fresh temporary
folder), then ``sumlens read LOGDIR``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import torch
from torch import nn

from sumlens import SummaryRecord
from sumlens.io import describe

EPOCHS = 3
BATCHES = 50
BATCH_SIZE = 32
HISTOGRAM_EVERY = 25


def synthetic_data(batches: int, seed: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """A 3-class problem whose labels come from a fixed random linear map."""
    gen = torch.Generator().manual_seed(seed)
    weights = torch.randn(20, 3, generator=gen)
    data = []
    for _ in range(batches):
        x = torch.randn(BATCH_SIZE, 20, generator=gen)
        data.append((x, (x @ weights).argmax(1)))
    return data


def train(logdir: Path) -> None:
    torch.manual_seed(0)
    dataset = synthetic_data(BATCHES, seed=1)
    network = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 3))
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(network.parameters(), lr=0.1, momentum=0.9)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=EPOCHS * BATCHES)

    # Note 1: pass the network to record its graph.
    with SummaryRecord(logdir, network=network) as summary_record:
        for epoch in range(EPOCHS):
            for step_in_epoch, (x, y) in enumerate(dataset, start=1):
                loss = loss_fn(network(x), y)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                current_step = epoch * len(dataset) + step_in_epoch

                # Note 2: add the values of this step ...
                summary_record.add_value("scalar", "loss", loss.detach())
                summary_record.add_value("scalar", "learning_rate", schedule.get_last_lr()[0])
                if current_step % HISTOGRAM_EVERY == 0:
                    for name, param in network.named_parameters():
                        summary_record.add_value("histogram", f"{name}/histogram", param)
                # Note 3: ... and write them as the values of `current_step`.
                summary_record.record(current_step)
                schedule.step()
            print(f"epoch {epoch + 1}: loss {loss.item():.4f}")


def main() -> None:
    logdir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="sumlens-"))
    train(logdir)
    print(f"wrote {logdir}:")
    print(describe(logdir))


if __name__ == "__main__":
    main()
