"""Mode 3 of the seed docs: a custom ``Callback`` that records with ``SummaryRecord``.

``SummaryRecordCallback`` opens its ``SummaryRecord`` when training begins and closes it
when training ends (and, should training fail, when ``Model`` exits the callback); after
every step it records the loss and the learning rate, and every ``image_every`` steps
the first images of the batch. A ``LearningRateScheduler`` decays the learning rate, so
the recorded rate changes.

Trains a small MLP on synthetic 8x8 images for 3 epochs of 30 steps (a few seconds).

Run: ``python examples/mode3_custom_callback.py [LOGDIR]`` (default: a fresh temporary
folder), then ``sumlens read LOGDIR``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from types import TracebackType

import torch
from torch import nn

from sumlens import Callback, LearningRateScheduler, LossMonitor, Model, RunContext, SummaryRecord
from sumlens.io import describe

EPOCHS = 3
BATCHES = 30
BATCH_SIZE = 32


class SummaryRecordCallback(Callback):
    """Record the loss and learning rate of every training step (and some input images)."""

    def __init__(self, summary_dir: Path, image_every: int = 30) -> None:
        self.summary_dir = summary_dir
        self.image_every = image_every
        self.record: SummaryRecord | None = None

    def on_train_begin(self, run_context: RunContext) -> None:
        self.record = SummaryRecord(self.summary_dir)

    def on_train_step_end(self, run_context: RunContext) -> None:
        assert self.record is not None
        params = run_context.original_args()
        step = params.cur_step_num
        self.record.add_value("scalar", "loss", params.net_outputs)
        self.record.add_value("scalar", "learning_rate", params.optimizer.param_groups[0]["lr"])
        if step % self.image_every == 1:
            images = params.train_dataset_element[0]
            self.record.add_value("image", "input_images", images[:4])
        self.record.record(step)

    def on_train_end(self, run_context: RunContext) -> None:
        self.close()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()  # training failed before on_train_end: still write what we have

    def close(self) -> None:
        if self.record is not None:
            self.record.close()  # waits until everything is on disk
            self.record = None


def synthetic_digits(batches: int, seed: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Noisy 8x8 images of a bright row; the class is the row's index / 2."""
    gen = torch.Generator().manual_seed(seed)
    data = []
    for _ in range(batches):
        labels = torch.randint(0, 4, (BATCH_SIZE,), generator=gen)
        images = 0.3 * torch.rand(BATCH_SIZE, 1, 8, 8, generator=gen)
        images[torch.arange(BATCH_SIZE), 0, labels * 2, :] += 0.7
        data.append((images, labels))
    return data


def run(logdir: Path) -> None:
    torch.manual_seed(0)
    network = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 4))
    optimizer = torch.optim.SGD(network.parameters(), lr=0.1)
    model = Model(network, nn.CrossEntropyLoss(), optimizer)
    decay = LearningRateScheduler(lambda lr, step: lr * 0.98)  # after every step
    callbacks = [LossMonitor(per_print_times=30), decay, SummaryRecordCallback(logdir)]
    model.train(EPOCHS, synthetic_digits(BATCHES, seed=1), callbacks=callbacks)


def main() -> None:
    logdir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="sumlens-"))
    run(logdir)
    print(f"wrote {logdir}:")
    print(describe(logdir))


if __name__ == "__main__":
    main()
