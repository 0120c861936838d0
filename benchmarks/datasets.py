"""The benchmarks' data: generated once under ``benchmarks/data/`` and reused afterwards.

:class:`Spec` says what a data set of ``bench_read`` holds (``TAGS`` x ``steps`` scalars,
histograms); :func:`ensure_data` writes it as one TensorBoard and one MindSpore file, and
``bench_board``'s tables build their base directories from the same writers
(:func:`write_tensorboard`, :func:`write_mindspore`, :func:`write_one_tag`) under
:func:`cached_dir`, which rebuilds a directory only when what it should hold changed.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.harness.clock import now
from benchmarks.harness.paths import DATA_DIR
from sumlens._proto import summary_pb2, tensorboard_pb2
from sumlens.io import RecordWriter

GENERATOR_VERSION = 1
"""Bump when the generated content changes, so cached files are rebuilt."""

TAGS = (
    "train_loss",
    "lr",
    "acc",
    "val_loss",
    "val_acc",
    "grad_norm",
    "w_norm",
    "tput",
    "mem_gb",
    "epoch",
)
HIST_TAG = "weights/hist"
FILE_TIME = 1_700_000_000
WALL0 = 1_700_000_000.0
STEP_SECONDS = 0.05
TAG_SECONDS = 1e-4
LOSS_TAG = "loss"
"""The tag of :func:`write_one_tag`'s one series."""
FILE_NAMES = {
    "tensorboard": f"events.out.tfevents.{FILE_TIME}.bench",
    "summary": f"events.out.events.summary.{FILE_TIME}.0.bench_MS",
}
"""The event file of each kind, in a generated directory."""
KINDS = {"tb": "tensorboard", "ms": "summary"}
"""Directory name of each format in the generated directories -> file kind."""


@dataclass(frozen=True)
class Spec:
    """What the generated files hold: ``steps`` per tag of each of ``TAGS``, plus histograms."""

    steps: int = 100_000
    histograms: int = 200
    buckets: int = 30
    seed: int = 20_240_601

    @property
    def points(self) -> int:
        return self.steps * len(TAGS)

    def values(self) -> np.ndarray:
        """The scalar values, float32, shape ``(steps, len(TAGS))``: noisy decaying curves."""
        rng = np.random.default_rng(self.seed)
        t = np.arange(self.steps, dtype=np.float64)[:, None] / max(self.steps, 1)
        scale = np.arange(1, len(TAGS) + 1, dtype=np.float64)[None, :]
        noise = rng.standard_normal((self.steps, len(TAGS)))
        return (scale * np.exp(-3.0 * t) + 0.05 * noise).astype(np.float32)

    def wall_times(self) -> np.ndarray:
        """Wall times, float64, shape ``(steps, len(TAGS))`` (tag j written j*0.1 ms later)."""
        steps = np.arange(self.steps, dtype=np.float64)[:, None]
        tags = np.arange(len(TAGS), dtype=np.float64)[None, :]
        return WALL0 + steps * STEP_SECONDS + tags * TAG_SECONDS

    def histogram_steps(self) -> list[int]:
        """Steps that carry a histogram: evenly spread, the last one at the last step."""
        n = self.histograms
        return [(i + 1) * self.steps // n - 1 for i in range(n)] if n else []


@dataclass(frozen=True)
class DataSet:
    spec: Spec
    tb_file: Path
    ms_file: Path

    @property
    def tb_logdir(self) -> Path:
        """The directory holding only the TensorBoard file (the data server's logdir)."""
        return self.tb_file.parent


def histogram_contents(spec: Spec) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per histogram event: (bucket edges, len buckets + 1; bucket counts)."""
    rng = np.random.default_rng(spec.seed + 1)
    out = []
    for i in range(spec.histograms):
        spread = 1.0 + i / max(spec.histograms, 1)
        edges = np.linspace(-3.0 * spread, 3.0 * spread, spec.buckets + 1)
        samples = rng.standard_normal(10_000) * spread
        counts, _ = np.histogram(samples, bins=edges)
        out.append((edges, counts.astype(np.int64)))
    return out


def write_tensorboard(path: Path, spec: Spec) -> None:
    """``spec``'s scalars (an event per tag and step) and histograms in a TensorBoard file."""
    values = spec.values().tolist()
    walls = spec.wall_times().tolist()
    hist_at = dict(zip(spec.histogram_steps(), histogram_contents(spec), strict=True))
    tb = tensorboard_pb2
    with RecordWriter(path) as writer:
        writer.write(tb.Event(wall_time=WALL0, file_version="brain.Event:2").SerializeToString())
        for step in range(spec.steps):
            row_values, row_walls = values[step], walls[step]
            for j, tag in enumerate(TAGS):
                event = tb.Event(wall_time=row_walls[j], step=step)
                event.summary.value.add(tag=tag, simple_value=row_values[j])
                writer.write(event.SerializeToString())
            if step in hist_at:
                edges, counts = hist_at[step]
                centers = (edges[:-1] + edges[1:]) / 2
                event = tb.Event(wall_time=row_walls[-1] + TAG_SECONDS, step=step)
                event.summary.value.add(
                    tag=HIST_TAG,
                    histo=tb.HistogramProto(
                        min=float(edges[0]),
                        max=float(edges[-1]),
                        num=float(counts.sum()),
                        sum=float((centers * counts).sum()),
                        sum_squares=float((centers**2 * counts).sum()),
                        bucket_limit=edges[1:].tolist(),
                        bucket=counts.astype(np.float64).tolist(),
                    ),
                )
                writer.write(event.SerializeToString())


def write_mindspore(path: Path, spec: Spec) -> None:
    """``spec``'s scalars and histograms in a MindSpore summary file (an event per step)."""
    values = spec.values().tolist()
    walls = spec.wall_times()[:, 0].tolist()
    hist_at = dict(zip(spec.histogram_steps(), histogram_contents(spec), strict=True))
    ms = summary_pb2
    with RecordWriter(path) as writer:
        writer.write(ms.Event(wall_time=WALL0, version="MindSpore.Event:1").SerializeToString())
        for step in range(spec.steps):
            event = ms.Event(wall_time=walls[step], step=step)
            row = values[step]
            for j, tag in enumerate(TAGS):
                event.summary.value.add(tag=tag, scalar_value=row[j])
            if step in hist_at:
                edges, counts = hist_at[step]
                centers = (edges[:-1] + edges[1:]) / 2
                hist = event.summary.value.add(tag=HIST_TAG).histogram
                for left, right, count in zip(
                    edges[:-1].tolist(), edges[1:].tolist(), counts.tolist(), strict=True
                ):
                    hist.buckets.add(left=left, width=right - left, count=count)
                hist.min = float(edges[0])
                hist.max = float(edges[-1])
                hist.sum = float((centers * counts).sum())
                hist.count = int(counts.sum())
            writer.write(event.SerializeToString())


def write_ten_tags(path: Path, kind: str, spec: Spec) -> None:
    """The ten ``TAGS`` (and histograms, if ``spec`` has any) in one file of ``kind``
    (``"tensorboard"`` or ``"summary"``)."""
    if kind == "tensorboard":
        write_tensorboard(path, spec)
    else:
        write_mindspore(path, spec)


def ensure_data(name: str, spec: Spec) -> DataSet:
    """The cached data set ``name`` under ``benchmarks/data/``, generated if missing or stale."""

    def build(staging: Path) -> None:
        for directory, kind in KINDS.items():
            (staging / directory).mkdir()
            write_ten_tags(staging / directory / FILE_NAMES[kind], kind, spec)

    wanted = {"generator": GENERATOR_VERSION, "spec": asdict(spec)}
    root = cached_dir(DATA_DIR / name, wanted, build)
    tb_file = root / "tb" / FILE_NAMES["tensorboard"]
    return DataSet(spec, tb_file, root / "ms" / FILE_NAMES["summary"])


def write_one_tag(path: Path, kind: str, steps: int, seed: int) -> None:
    """One series ``LOSS_TAG`` of ``steps`` points (a noisy decaying curve), TB or MindSpore.

    :func:`write_tensorboard` and :func:`write_mindspore` always write the ten ``TAGS``;
    files of one series are written the same way (protobuf messages framed by
    ``RecordWriter``), one event per step.
    """
    rng = np.random.default_rng(seed)
    t = np.arange(steps, dtype=np.float64) / max(steps, 1)
    values = (np.exp(-3.0 * t) + 0.05 * rng.standard_normal(steps)).astype(np.float32).tolist()
    walls = (WALL0 + np.arange(steps, dtype=np.float64) * STEP_SECONDS).tolist()
    with RecordWriter(path) as writer:
        if kind == "tensorboard":
            tb = tensorboard_pb2
            writer.write(
                tb.Event(wall_time=WALL0, file_version="brain.Event:2").SerializeToString()
            )
            for step in range(steps):
                event = tb.Event(wall_time=walls[step], step=step)
                event.summary.value.add(tag=LOSS_TAG, simple_value=values[step])
                writer.write(event.SerializeToString())
        else:
            ms = summary_pb2
            writer.write(ms.Event(wall_time=WALL0, version="MindSpore.Event:1").SerializeToString())
            for step in range(steps):
                event = ms.Event(wall_time=walls[step], step=step)
                event.summary.value.add(tag=LOSS_TAG, scalar_value=values[step])
                writer.write(event.SerializeToString())


def listing(root: Path) -> tuple[int, int]:
    """Event files under ``root`` and their total bytes (the manifest itself excluded)."""
    files = size = 0
    for directory, _, names in os.walk(root):
        for name in names:
            if name != "manifest.json":
                files += 1
                size += os.stat(os.path.join(directory, name)).st_size
    return files, size


def cached_dir(root: Path, wanted: dict[str, Any], build: Callable[[Path], None]) -> Path:
    """``root``, rebuilt by ``build(staging)`` unless its manifest matches ``wanted``.

    Built in a staging directory and renamed into place, so an interrupted build never
    passes for a complete one.
    """
    try:
        saved = json.loads((root / "manifest.json").read_text())
        if saved["wanted"] == wanted and list(listing(root)) == [saved["files"], saved["bytes"]]:
            return root
    except (OSError, ValueError, KeyError):
        pass
    print(f"generating {root} ...", flush=True)
    started = now()
    if root.exists():
        shutil.rmtree(root)
    staging = root.with_name(f".{root.name}.staging")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    build(staging)
    files, size = listing(staging)
    manifest = {"wanted": wanted, "files": files, "bytes": size}
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    staging.rename(root)
    took = now() - started
    print(f"  done in {took:.1f} s: {files:,} files, {size / 1e6:.1f} MB", flush=True)
    return root


class Progress:
    """Prints how far a long generation got, about every ``every`` seconds."""

    def __init__(self, total: int, what: str, every: float = 5.0) -> None:
        self.total, self.what, self.every = total, what, every
        self.started = self.last = now()
        self.done = self.points = 0

    def step(self, points: int) -> None:
        """One more item (of ``points`` points) written."""
        self.done += 1
        self.points += points
        moment = now()
        if moment - self.last >= self.every or self.done == self.total:
            self.last = moment
            print(
                f"  {self.what}: {self.done:,}/{self.total:,}, {self.points / 1e6:.1f}M points, "
                f"{moment - self.started:.0f} s",
                flush=True,
            )
