"""Quickstart: write a small training run in both formats, then read it back.

Trains a tiny linear model with numpy, records its loss every step and its weight
histogram every 10 steps, once in MindSpore's summary format (what MindInsight reads)
and once in TensorBoard's, then reads both runs back with ``sumlens.io``.

Until ``SummaryRecord`` lands, the events are built here from sumlens' protobuf schema
and appended with the low-level ``RecordWriter``.

Run: ``python examples/quickstart.py [LOGDIR]`` (default: a fresh temporary folder).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from sumlens._proto import summary_pb2, tensorboard_pb2
from sumlens.io import RecordWriter, iter_events, read_scalars
from sumlens.io.naming import claim_free_name, summary_file_name, tensorboard_file_name

STEPS = 200


def train() -> list[tuple[int, float, np.ndarray]]:
    """Fit y = 3x - 1 with gradient descent; return (step, loss, weights) per step."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 1))
    y = 3 * x - 1 + 0.1 * rng.normal(size=(256, 1))
    weights = rng.normal(size=2)
    history = []
    for step in range(1, STEPS + 1):
        pred = weights[0] * x[:, 0] + weights[1]
        err = pred - y[:, 0]
        loss = float(np.mean(err**2))
        grad = np.array([np.mean(2 * err * x[:, 0]), np.mean(2 * err)])
        weights = weights - 0.05 * grad
        history.append((step, loss, weights + rng.normal(scale=0.01, size=(64, 2))))
    return history


def write_mindspore(logdir: Path, history: list[tuple[int, float, np.ndarray]]) -> Path:
    path, _ = claim_free_name(logdir, lambda t: summary_file_name(t, suffix="_MS"))
    with RecordWriter(path) as writer:
        writer.write(
            summary_pb2.Event(
                wall_time=time.time(), version="MindSpore.Event:1"
            ).SerializeToString()
        )
        for step, loss, weights in history:
            event = summary_pb2.Event(wall_time=time.time(), step=step)
            event.summary.value.add(tag="loss", scalar_value=loss)
            if step % 10 == 0:
                hist = event.summary.value.add(tag="weights").histogram
                counts, edges = np.histogram(weights, bins=20)
                for left, right, count in zip(edges[:-1], edges[1:], counts, strict=True):
                    hist.buckets.add(left=left, width=right - left, count=int(count))
                hist.count, hist.min, hist.max = weights.size, weights.min(), weights.max()
                hist.sum = float(weights.sum())
            writer.write(event.SerializeToString())
    return path


def write_tensorboard(logdir: Path, history: list[tuple[int, float, np.ndarray]]) -> Path:
    path, _ = claim_free_name(logdir, tensorboard_file_name)
    with RecordWriter(path) as writer:
        writer.write(
            tensorboard_pb2.Event(
                wall_time=time.time(), file_version="brain.Event:2"
            ).SerializeToString()
        )
        for step, loss, _ in history:
            event = tensorboard_pb2.Event(wall_time=time.time(), step=step)
            event.summary.value.add(tag="loss", simple_value=loss)
            writer.write(event.SerializeToString())
    return path


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
    history = train()
    for name, write in (("mindspore_run", write_mindspore), ("tensorboard_run", write_tensorboard)):
        run = logdir / name
        run.mkdir(parents=True, exist_ok=True)
        print(f"wrote {write(run, history)}")
        show(run)
    print(f"\nlogs in {logdir}; `sumlens read {logdir / 'mindspore_run'}` lists them again")


if __name__ == "__main__":
    main()
