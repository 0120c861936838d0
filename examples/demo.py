"""The dashboard demo (``make demo``): train at two learning rates, then compare them.

Trains a small CNN on scikit-learn's 8x8 digits (bundled with scikit-learn: nothing is
downloaded) twice, with SGD at learning rates 0.01 and 0.1, each run recorded by a
``SummaryCollector`` (loss, learning rate, histograms, input images, model and dataset
graphs, lineage) into ``demo_runs/lr_0.01`` and ``demo_runs/lr_0.1``, then serves the
dashboard over ``demo_runs`` on http://127.0.0.1:8080/ in the foreground until Ctrl+C.

The port is checked before training, so a taken port fails at once. Each run's directory
is emptied first, so running the demo again shows one training per run, not two.

Environment: ``DEMO_PORT`` (default 8080), ``DEMO_DIR`` (default ``./demo_runs``),
``DEMO_EXIT_AFTER=SECONDS`` (stop serving by itself after that long, as Ctrl+C would:
for tests and scripted checks).
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from pathlib import Path

import torch
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from sumlens import Callback, Model, RunContext, SummaryCollector
from sumlens.board.server.daemon import DaemonError, check_port_free
from sumlens.board.server.serve import serve
from sumlens.board.settings import BoardSettings

LEARNING_RATES = (0.01, 0.1)
EPOCHS = 10
BATCH_SIZE = 32
COLLECT_FREQ = 2


class DigitsCNN(nn.Module):
    """Two convolutions and a linear layer for 1x8x8 digits."""

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


class ProgressBar(Callback):
    """Advance a rich progress task after every training step."""

    def __init__(self, progress: Progress, task: int) -> None:
        self.progress, self.task = progress, task

    def step_end(self, run_context: RunContext) -> None:
        self.progress.advance(self.task)


def digits() -> tuple[tuple[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
    """The 1,797 digits, shuffled once: 80% to train on, 20% to test on."""
    data = load_digits()
    x = torch.tensor(data.images, dtype=torch.float32).unsqueeze(1) / 16.0
    y = torch.tensor(data.target, dtype=torch.int64)
    order = torch.randperm(len(y), generator=torch.Generator().manual_seed(0))
    cut = int(0.8 * len(y))
    return (x[order[:cut]], y[order[:cut]]), (x[order[cut:]], y[order[cut:]])


def train(run: Path, lr: float, progress: Progress) -> dict[str, float]:
    """Train one run with a SummaryCollector into ``run``; its test metrics."""
    (train_x, train_y), (test_x, test_y) = digits()
    torch.manual_seed(0)
    network = DigitsCNN()
    optimizer = torch.optim.SGD(network.parameters(), lr=lr, momentum=0.9)
    model = Model(network, nn.CrossEntropyLoss(), optimizer, metrics={"acc", "loss"})
    data = DataLoader(
        TensorDataset(train_x, train_y),
        batch_size=BATCH_SIZE,
        shuffle=True,
        generator=torch.Generator().manual_seed(1),
    )
    task = progress.add_task(f"lr={lr}", total=EPOCHS * len(data))
    collector = SummaryCollector(
        str(run), collect_freq=COLLECT_FREQ, custom_lineage_data={"demo": "learning rates"}
    )
    model.train(EPOCHS, data, callbacks=[collector, ProgressBar(progress, task)])
    return model.eval([(test_x, test_y)], callbacks=[collector])


def main() -> int:
    base = Path(os.environ.get("DEMO_DIR", "demo_runs")).resolve()
    base.mkdir(parents=True, exist_ok=True)
    port = os.environ.get("DEMO_PORT", "8080")
    try:
        settings = BoardSettings.create(base_dir=base, port=int(port) if port.isdigit() else port)
        check_port_free(settings)
    except (ValueError, DaemonError) as err:  # BoardSettingsError is a ValueError
        print(f"demo: {err}: make demo DEMO_PORT=<port>", file=sys.stderr)
        return 1
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns) as progress:
        for lr in LEARNING_RATES:
            run = base / f"lr_{lr}"
            shutil.rmtree(run, ignore_errors=True)
            result = train(run, lr, progress)
            progress.console.print(
                f"lr={lr}: test accuracy {result['acc']:.1%}, loss {result['loss']:.3f} -> {run}"
            )
    stop = threading.Event()
    exit_after = os.environ.get("DEMO_EXIT_AFTER")
    if exit_after:
        threading.Timer(float(exit_after), stop.set).start()
    print(f"\nsumlens dashboard: {settings.url()} (Ctrl+C stops it)", flush=True)
    serve(settings, stop)
    print("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
