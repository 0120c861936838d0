"""Quickstart: record a small training run in both formats, then read it back.

Trains a tiny linear model with numpy and records its loss every step and its weight
histogram and a picture every 10 steps with ``SummaryRecord``, once in MindSpore's
summary format (what MindInsight reads) and once in TensorBoard's, then reads both runs
back with ``sumlens.io``.

Run: ``python examples/quickstart.py [LOGDIR]`` (default: a fresh temporary folder).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from sumlens import SummaryRecord
from sumlens.io import iter_events, read_scalars
from sumlens.lineage import TrainLineage

STEPS = 200


def train(record: SummaryRecord) -> None:
    """Fit y = 3x - 1 with gradient descent, recording as we go."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 1))
    y = 3 * x - 1 + 0.1 * rng.normal(size=(256, 1))
    weights = rng.normal(size=2)
    loss = 0.0
    for step in range(1, STEPS + 1):
        err = weights[0] * x[:, 0] + weights[1] - y[:, 0]
        loss = float(np.mean(err**2))
        weights = weights - 0.05 * np.array([np.mean(2 * err * x[:, 0]), np.mean(2 * err)])
        record.add_value("scalar", "loss", loss)
        if step % 10 == 0:
            record.add_value("histogram", "weights", weights + rng.normal(0, 0.01, (64, 2)))
            fit = np.clip(np.outer(np.linspace(0, 1, 32), [weights[0] / 3, 0.5, 1]), 0, 1)
            record.add_value("image", "fit", fit.reshape(32, 1, 3), dataformats="HWC")
        record.record(step)
    lineage = TrainLineage(
        optimizer="GradientDescent",
        learning_rate=0.05,
        epoch=1,
        network="Linear",
        loss=loss,
        batch_size=256,
    )
    record.add_value("train_lineage", "lineage", lineage)
    record.record(STEPS)


def show(run: Path) -> None:
    stream = iter_events(run)
    kinds: dict[str, int] = {}
    for event in stream:
        kinds[event.plugin] = kinds.get(event.plugin, 0) + 1
    steps, _, loss = read_scalars(run)["loss"]
    print(f"{run.name}: {kinds}, damage: {stream.stats.damaged}")
    for index in np.linspace(0, len(steps) - 1, 6).astype(int):
        bar = "#" * max(1, int(40 * loss[index] / loss.max()))
        print(f"  step {steps[index]:>4}  loss {loss[index]:9.5f}  {bar}")


def main() -> None:
    logdir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="sumlens-"))
    for name, file_format in (("mindspore_run", "mindspore"), ("tensorboard_run", "tensorboard")):
        run = logdir / name
        with SummaryRecord(run, file_format=file_format) as record:
            train(record)
            print(f"wrote {record.log_dir}")
        show(run)
    print(f"\nlogs in {logdir}; `sumlens read {logdir / 'mindspore_run'}` lists them again")


if __name__ == "__main__":
    main()
