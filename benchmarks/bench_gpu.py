"""Recording on a CUDA GPU: what SummaryRecord, Model.train and SummaryCollector cost per step.

Issue 16. Everything below runs in ONE process, in interleaved rounds, so that every row
sees the same machine state. Three training workloads, each a *group* of six rows:

* ``resnet_gpu``: GPU-bound. ResNet-18 (BasicBlock, [2, 2, 2, 2], built here: torchvision
  is not a dependency), input 3x128x128, batch 128, 1,000 classes, float32, SGD momentum
  0.9; the data already on the GPU (``--distinct`` batches made once, cycled).
* ``resnet_loader``: loader-bound. A CPU ``TensorDataset`` (3x32x32 float32, 10 classes)
  behind a ``DataLoader`` (batch 256, ``pin_memory=True``, ``num_workers=--loader-workers``,
  default 0, a seeded ``RandomSampler`` drawing exactly the run's number of batches) feeding
  ResNet-18; the hand loop copies each batch with ``.to(device, non_blocking=True)``, as
  ``Model`` does.
* ``transformer_gpu``: GPU-bound. 4 ``nn.TransformerEncoderLayer`` (d_model 512, 8 heads,
  feed-forward 2,048, batch_first), a mean over the sequence and a linear head (10
  classes); input 32 x 256 x 512 on the GPU; AdamW. The network's forward runs under
  ``torch.autocast(device_type, dtype=torch.bfloat16)`` (inside ``forward``, so that the
  hand loop and ``Model`` run exactly the same computation: ``Model``'s own ``amp_level``
  would pick float16 on CUDA) and returns float32 logits; the loss is outside autocast.

Rows of each group (loss: cross-entropy; a fresh network with the same seed every run):

* ``hand``: the hand-written loop: ``x.to(device, non_blocking=True)`` (a no-op for data
  already there), forward, loss, ``backward()``, ``optimizer.step()``,
  ``optimizer.zero_grad(set_to_none=True)``;
* ``hand+record``: the same with ``sumlens.SummaryRecord(dir)`` (its defaults): every step
  ``add_value("scalar", "loss", loss)`` with the CUDA loss tensor itself, and every 10 steps
  ``add_value("histogram", name, param)`` for the first 5 parameters, then ``record(step)``;
* ``hand+torch_writer``: the same with ``torch.utils.tensorboard.SummaryWriter``:
  ``add_scalar("loss", loss.item(), step)`` every step, ``add_histogram(name, param, step)``
  for the same 5 parameters every 10 steps (the anchor; left out without ``tensorboard``);
* ``model``: ``sumlens.Model(net, loss_fn, optimizer).train(1, data)``, no callbacks;
* ``model+collector_f1`` / ``model+collector_f10``: the same with
  ``sumlens.SummaryCollector(dir, collect_freq=1 / 10)`` and all its defaults (loss and
  learning rate at collected steps; input images (NCHW inputs only: the transformer's are
  not) and the first 5 parameters' histograms at *tensor steps*, at most 20 spread over
  the run; the graph at the first step; lineage at the end). The tensor steps are spread
  over the epoch's length (``len`` of the data: warm-up + timed steps), so a short
  benchmark run has far more of them per step than a real run; the script prints how many
  fell in the timed part. ``--epoch-steps N`` makes the data report an epoch of N steps
  (still running only warm-up + timed steps), as in a long run.

Extra rows:

* ``hist50m/sumlens`` vs ``hist50m/torch_writer``: one histogram of a 50M-element float32
  CUDA tensor (``torch.randn``), end to end from a synchronised GPU to ``flush()``
  returning: ``SummaryRecord.add_value("histogram", ...)`` + ``record(1)`` + ``flush()``
  against ``SummaryWriter.add_histogram`` + ``flush()`` (writers made and closed untimed);
* ``landscape/baseline`` vs ``landscape/sumlens``: the workload of ``bench_landscape`` on
  the GPU: its digits CNN (``benchmarks/digits.py``), seeded weights, 1,024 synthetic 1x8x8
  samples in batches of 32, a 40 x 40 grid of the plane of the two random directions
  ``compute_landscape`` draws (seed 0). Baseline: per point, copy ``base + a*d1 + b*d2``
  into the parameters under ``no_grad``, ``eval()``, mean of ``float(loss)`` over the
  batches (one host sync per batch, as such loops are written). sumlens:
  ``compute_landscape(kind="result")`` with the network on the GPU. Heights are compared
  (max relative difference kept in the JSON and printed; cuDNN's default TF32 convolutions
  make 1e-3 the tolerance on CUDA);
* ``thor/sgd`` vs ``thor/thor``: per-step time of ResNet-18 (the ``resnet_gpu`` workload)
  through ``Model.train`` with SGD momentum 0.9 against ``sumlens.thor.thor`` (damping
  0.03, momentum 0.9, ``batch_size`` = the batch, ``frequency`` 100) converted with
  ``ConvertModelUtils.convert_to_thor_model``; timed over ``--thor-steps`` (default 2 x
  frequency, so the curvature refreshes are in it).

**Method.** First a warm-up pass runs every row once, untimed (cuDNN plans, numba
kernels, lazy imports, the first pinned buffers). Then, unless ``--no-sync-count``, every
training row, THOR row and histogram row runs once more with
``torch.cuda.set_sync_debug_mode("warn")`` over ``--sync-steps`` steps after its warm-up
steps (THOR: one refresh period; the histograms: ``add_value`` + ``record``, resp.
``add_histogram``, without the flush, which waits by design): torch then issues a
``UserWarning`` "called a synchronizing CUDA operation" (``TORCH_WARN``) for every sync
it routes through ``memcpy_and_sync``/``stream_synchronize`` (``.item()``, ``.cpu()``,
``.tolist()``, ``bool(t)``, ``nonzero``, synchronous copies, stream syncs), caught with
``warnings.catch_warnings(record=True)`` + ``simplefilter("always")`` and a
``showwarning`` hook that notes the issuing thread and the Python line that made the
call. Not reported by torch: ``torch.cuda.synchronize()``, ``Event.synchronize()``,
copies from pageable memory, ``cudaHostAlloc``. Then ``--rounds`` (>= 9) rounds; each round
runs every selected row once, in an order shuffled afresh for each round (seeded by it). A run
builds its network, optimizer and writer untimed, trains ``--warmup`` steps, then is
timed over ``--steps`` steps: at the edges of the timed part (and only there)
the row's writer is flushed and ``torch.cuda.synchronize()`` is called, so the end edge
charges the writer's outstanding work to the row (this flushes once per run: more often
than a real run, so it overstates the writers' cost a little). The edges are taken by the
data iterable itself (a ``DataLoader`` subclass in the loader regime), identically for
the hand loop and ``Model``, so no row carries a timing callback. A row's time per
step is its timed seconds / steps; reported per row: median over rounds, IQR, min..max;
per ratio: the median of the per-round ratios (numerator and denominator from the same
round), their IQR and min..max. A target counts as met when the median meets it ("in
every round" when every round does).

Targets (issue 16): hand+record <= +2% over hand; model <= +2% over hand; collector rows
<= +3% over model; no sync per step added by any sumlens row (against ``hand``); the 50M
histogram >= 40x torch's writer; the landscape >= 20x the point-by-point loop; THOR <= 1.5x
SGD per step. ``--device cpu --quick`` is a smoke run of the code on a machine without a
GPU: tiny sizes, no sync counting, no verdicts.

Usage::

    .venv/bin/python -m benchmarks.bench_gpu                     # everything, 9 rounds
    .venv/bin/python -m benchmarks.bench_gpu --rows resnet_gpu,hist50m --rounds 15
    .venv/bin/python -m benchmarks.bench_gpu --rows 'resnet_*/hand*' --steps 200
    .venv/bin/python -m benchmarks.bench_gpu --device cpu --quick   # smoke run, no GPU
    .venv/bin/python -m benchmarks.bench_gpu --list-rows

Options: ``--rounds`` (9), ``--steps`` (100 timed steps per run), ``--warmup`` (20),
``--sync-steps`` (20), ``--thor-steps``, ``--loader-workers`` (0), ``--distinct`` (4),
``--epoch-steps`` (0: the steps run), ``--rows`` (comma-separated row names, group names
or fnmatch patterns), ``--out`` (default ``benchmarks/results/bench_gpu.json``,
``bench_gpu_quick.json`` with ``--quick``; git-ignored), ``--no-sync-count``, ``--quick``
(2 rounds, 1 + 3 steps, tiny inputs and a narrow ResNet-18), ``--device`` (``cuda``),
``--threads`` (torch CPU threads; default torch's, 1 for a CPU ``--quick`` run).
"""

from __future__ import annotations

import argparse
import fnmatch
import gc
import json
import logging
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import threading
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, RandomSampler, TensorDataset

import sumlens
from benchmarks.digits import DigitsCNN
from benchmarks.harness.clock import now
from benchmarks.harness.paths import REPO_ROOT, RESULTS_DIR
from benchmarks.harness.rounds import shuffled
from benchmarks.harness.stats import quartile_summary, same_round_pairs
from sumlens import Model, SummaryCollector, SummaryRecord
from sumlens.landscape import compute_landscape, grid
from sumlens.landscape.compute import numpy_state
from sumlens.landscape.directions import random_plane
from sumlens.thor import ConvertModelUtils, thor
from sumlens.train.collector_config import collected_steps

SEED = 0
HISTOGRAM_EVERY = 10
HISTOGRAM_PARAMS = 5
SYNC_TEXT = "called a synchronizing CUDA operation"
"""The text of torch's TORCH_WARN in ``c10::cuda::warn_or_error_on_sync`` (a UserWarning)."""
LANDSCAPE_TOLERANCE = {"cpu": 1e-5, "cuda": 1e-3}
"""Max relative height difference sumlens vs baseline (cuDNN convolves in TF32 by default)."""
TRAIN_LABELS = (
    "hand",
    "hand+record",
    "hand+torch_writer",
    "model",
    "model+collector_f1",
    "model+collector_f10",
)
SUMLENS_TRAIN_LABELS = ("hand+record", "model", "model+collector_f1", "model+collector_f10")
_END = object()


# ---------------------------------------------------------------- sizes


@dataclass(frozen=True)
class Sizes:
    resnet_width: int  # channels of the first stage (64: ResNet-18)
    resnet_image: int
    resnet_batch: int
    resnet_classes: int
    loader_image: int
    loader_batch: int
    loader_samples: int
    loader_classes: int
    tf_dim: int
    tf_heads: int
    tf_layers: int
    tf_seq: int
    tf_batch: int
    tf_classes: int
    hist_elements: int
    landscape_size: int
    landscape_samples: int
    landscape_batch: int
    thor_frequency: int


FULL = Sizes(
    resnet_width=64,
    resnet_image=128,
    resnet_batch=128,
    resnet_classes=1000,
    loader_image=32,
    loader_batch=256,
    loader_samples=12_800,
    loader_classes=10,
    tf_dim=512,
    tf_heads=8,
    tf_layers=4,
    tf_seq=256,
    tf_batch=32,
    tf_classes=10,
    hist_elements=50_000_000,
    landscape_size=40,
    landscape_samples=1024,
    landscape_batch=32,
    thor_frequency=100,
)
QUICK = Sizes(  # a smoke run of the code, on a CPU if need be: a narrow ResNet-18
    resnet_width=8,
    resnet_image=16,
    resnet_batch=4,
    resnet_classes=10,
    loader_image=16,
    loader_batch=8,
    loader_samples=64,
    loader_classes=10,
    tf_dim=32,
    tf_heads=2,
    tf_layers=2,
    tf_seq=8,
    tf_batch=4,
    tf_classes=10,
    hist_elements=200_000,
    landscape_size=5,
    landscape_samples=64,
    landscape_batch=32,
    thor_frequency=3,
)


# ---------------------------------------------------------------- networks


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
    """ResNet-18 as torchvision defines it (7x7 stem, max pool, [2, 2, 2, 2] BasicBlocks);
    ``width`` other than 64 scales every stage (only the smoke run uses that)."""

    def __init__(self, num_classes: int = 1000, width: int = 64) -> None:
        super().__init__()
        w1, w2, w3, w4 = width, 2 * width, 4 * width, 8 * width
        self.conv1 = nn.Conv2d(3, w1, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(w1)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(BasicBlock(w1, w1), BasicBlock(w1, w1))
        self.layer2 = nn.Sequential(BasicBlock(w1, w2, 2), BasicBlock(w2, w2))
        self.layer3 = nn.Sequential(BasicBlock(w2, w3, 2), BasicBlock(w3, w3))
        self.layer4 = nn.Sequential(BasicBlock(w3, w4, 2), BasicBlock(w4, w4))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(w4, num_classes)
        for module in self.modules():
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class TransformerNet(nn.Module):
    """Encoder layers, a mean over the sequence, a linear head; forward under autocast."""

    def __init__(self, sizes: Sizes, autocast_dtype: torch.dtype = torch.bfloat16) -> None:
        super().__init__()
        layer = nn.TransformerEncoderLayer(
            sizes.tf_dim, sizes.tf_heads, 4 * sizes.tf_dim, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, sizes.tf_layers, enable_nested_tensor=False)
        self.head = nn.Linear(sizes.tf_dim, sizes.tf_classes)
        self.autocast_dtype = autocast_dtype

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.autocast(device_type=x.device.type, dtype=self.autocast_dtype):
            logits = self.head(self.encoder(x).mean(dim=1))
        return logits.float()


# ---------------------------------------------------------------- measuring


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def short_path(filename: str) -> str:
    """A warning's file, relative to site-packages or the repository when it is in one."""
    marker = "site-packages" + os.sep
    if marker in filename:
        return filename.split(marker, 1)[1]
    try:
        return str(Path(filename).resolve().relative_to(REPO_ROOT))
    except ValueError:
        return filename


class SyncCounter:
    """Counts torch's sync warnings while entered (CUDA only; see the module docstring).

    ``torch.cuda.set_sync_debug_mode("warn")`` makes torch ``TORCH_WARN`` on every sync it
    sees; torch's Python binding turns that into a ``UserWarning`` issued on the calling
    thread, at the Python line that called into torch. The warnings are caught with
    ``catch_warnings(record=True)`` and ``simplefilter("always")`` (so repeats from one
    line are all kept); a ``showwarning`` hook inside that block files each under its
    thread (``main``: the training thread; ``other``: writer threads) and its line.
    """

    def __init__(self) -> None:
        self.sites: Counter[tuple[str, str]] = Counter()
        self.other_warnings: Counter[str] = Counter()
        self._catch: Any = None
        self._log: list[warnings.WarningMessage] = []

    def __enter__(self) -> SyncCounter:
        self._catch = warnings.catch_warnings(record=True)
        self._log = self._catch.__enter__()
        warnings.simplefilter("always")
        warnings.showwarning = self._show  # restored by catch_warnings on exit
        torch.cuda.set_sync_debug_mode("warn")
        return self

    def _show(
        self,
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: Any = None,
        line: str | None = None,
    ) -> None:
        if issubclass(category, UserWarning) and SYNC_TEXT in str(message):
            thread = "main" if threading.current_thread() is threading.main_thread() else "other"
            self.sites[(thread, f"{short_path(filename)}:{lineno}")] += 1
        else:
            self.other_warnings[f"{category.__name__}: {str(message)[:200]}"] += 1

    def __exit__(self, *exc: object) -> None:
        torch.cuda.set_sync_debug_mode(0)
        if self._catch is not None:
            self._catch.__exit__(*exc)
            self._catch = None
        for caught in self._log:  # normally empty: the hook takes every warning
            self._show(caught.message, caught.category, caught.filename, caught.lineno)

    def count(self, thread: str) -> int:
        return sum(n for (kind, _), n in self.sites.items() if kind == thread)


class Meter:
    """The two edges of a run's measured part.

    ``mode`` "time": ``start`` flushes the row's writer (``flush``, set by the row),
    synchronises the device and starts the clock; ``stop`` flushes the writer again,
    synchronises and stops the clock (the writer's backlog is charged to the row).
    "count": the same edges, counting syncs in between (the final flush is outside).
    "none": edges only (warm-up pass).
    """

    def __init__(self, device: torch.device, mode: str) -> None:
        self.device, self.mode = device, mode
        self.flush: Callable[[], None] | None = None
        self.seconds: float | None = None
        self.flush_seconds = 0.0
        self.counter: SyncCounter | None = None
        self._counting = False
        self._t0 = 0.0

    def start(self) -> None:
        if self.flush is not None:
            self.flush()
        synchronize(self.device)
        if self.mode == "count":
            self.counter = SyncCounter().__enter__()
            self._counting = True
        self._t0 = now()

    def stop(self) -> None:
        self.close_counter()
        before = now()
        if self.flush is not None:
            self.flush()
        self.flush_seconds = now() - before
        synchronize(self.device)
        self.seconds = now() - self._t0

    def close_counter(self) -> None:
        """Leave sync-counting mode (also on errors: the debug mode is process-wide)."""
        if self._counting and self.counter is not None:
            self._counting = False
            self.counter.__exit__(None, None, None)


def edged(source: Iterator[Any], total: int, warmup: int, meter: Meter) -> Iterator[Any]:
    """``total`` items of ``source``; ``meter.start()`` before fetching item ``warmup``
    (so fetching it is measured), ``meter.stop()`` when asked for one more."""
    for index in range(total):
        if index == warmup:
            meter.start()
        item = next(source, _END)
        if item is _END:
            raise RuntimeError(f"the data ran out after {index} of {total} batches")
        yield item
    meter.stop()


class Feed:
    """``warmup + steps`` batches cycled from ``batches`` (already on the device), with the
    meter's edges: a re-iterable with a length, as ``Model.train`` wants. Its length is
    ``plan.epoch`` when that is longer (see ``--epoch-steps``)."""

    def __init__(self, batches: list[Any], plan: Plan, meter: Meter) -> None:
        self.batches, self.plan, self.meter = batches, plan, meter

    def __len__(self) -> int:
        return max(self.plan.epoch, self.plan.warmup + self.plan.steps)

    def __iter__(self) -> Iterator[Any]:
        data, total = self.batches, self.plan.warmup + self.plan.steps
        cycled = (data[i % len(data)] for i in range(total))
        return edged(cycled, total, self.plan.warmup, self.meter)


class MeteredLoader(DataLoader):
    """A ``DataLoader`` whose iteration takes the meter's edges (rows still get a real
    DataLoader: the collector describes it, ``Model`` sizes the epoch with ``len``)."""

    meter: Meter | None = None
    warmup = 0
    epoch = 0  # the length it reports when longer than its batches (see --epoch-steps)

    def __len__(self) -> int:
        return max(self.epoch, super().__len__())

    def __iter__(self) -> Any:
        source = super().__iter__()
        if self.meter is None:
            return source
        return edged(source, super().__len__(), self.warmup, self.meter)


# ---------------------------------------------------------------- rows


@dataclass(frozen=True)
class Plan:
    warmup: int
    steps: int
    short: bool = False  # the warm-up pass: smaller work where a row allows it
    epoch: int = 0  # the epoch length the data reports, if longer than warmup + steps


@dataclass(frozen=True)
class Row:
    name: str  # "group/label"
    kind: str  # train | thor | hist | landscape
    run: Callable[[Meter, Path, Plan], int]  # returns the number of units measured
    unit: str = "step"

    @property
    def group(self) -> str:
        return self.name.split("/", 1)[0]

    @property
    def label(self) -> str:
        return self.name.split("/", 1)[1]


@dataclass
class Workload:
    """A training group: how to build its network and optimizer, and its data."""

    name: str
    build: Callable[[], nn.Module]
    optimizer: Callable[[nn.Module], torch.optim.Optimizer]
    data: Callable[[Meter, Plan], Iterable[Any]]


def torch_writer_class() -> Any:
    """``torch.utils.tensorboard.SummaryWriter``, or None without the tensorboard package."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        return None
    return SummaryWriter


def hand_loop(
    net: nn.Module,
    optimizer: torch.optim.Optimizer,
    data: Iterable[Any],
    device: torch.device,
    recorder: str,
    logdir: Path,
    meter: Meter,
) -> None:
    """The hand-written loop, recording through ``recorder`` (none | record | torch_writer)."""
    loss_fn = nn.CrossEntropyLoss()
    named = list(net.named_parameters())[:HISTOGRAM_PARAMS]
    record: Any = None
    writer: Any = None
    if recorder == "record":
        record = SummaryRecord(logdir)
        meter.flush = record.flush
    elif recorder == "torch_writer":
        writer = torch_writer_class()(str(logdir))
        meter.flush = writer.flush
    try:
        net.train()
        for step, (x, y) in enumerate(data, 1):
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            loss = loss_fn(net(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if record is not None:
                record.add_value("scalar", "loss", loss)
                if step % HISTOGRAM_EVERY == 0:
                    for name, param in named:
                        record.add_value("histogram", name, param)
                record.record(step)
            elif writer is not None:
                writer.add_scalar("loss", loss.item(), step)
                if step % HISTOGRAM_EVERY == 0:
                    for name, param in named:
                        writer.add_histogram(name, param, step)
    finally:
        if record is not None:
            record.close()
        if writer is not None:
            writer.close()


def model_loop(
    model: Model, data: Iterable[Any], collect_freq: int | None, logdir: Path, meter: Meter
) -> None:
    """``model.train(1, data)``, with ``SummaryCollector(logdir, collect_freq)`` if given."""
    callbacks: list[Any] | None = None
    if collect_freq is not None:
        collector = SummaryCollector(str(logdir), collect_freq=collect_freq)
        meter.flush = collector.flush
        callbacks = [collector]
    model.train(1, data, callbacks=callbacks)


def training_rows(work: Workload, device: torch.device, with_torch: bool) -> list[Row]:
    def hand(recorder: str) -> Callable[[Meter, Path, Plan], int]:
        def run(meter: Meter, logdir: Path, plan: Plan) -> int:
            net = work.build()
            data = work.data(meter, plan)
            hand_loop(net, work.optimizer(net), data, device, recorder, logdir, meter)
            return plan.steps

        return run

    def model(collect_freq: int | None) -> Callable[[Meter, Path, Plan], int]:
        def run(meter: Meter, logdir: Path, plan: Plan) -> int:
            net = work.build()
            data = work.data(meter, plan)
            model_loop(
                Model(net, nn.CrossEntropyLoss(), work.optimizer(net)),
                data,
                collect_freq,
                logdir,
                meter,
            )
            return plan.steps

        return run

    runs = {
        "hand": hand("none"),
        "hand+record": hand("record"),
        "hand+torch_writer": hand("torch_writer"),
        "model": model(None),
        "model+collector_f1": model(1),
        "model+collector_f10": model(10),
    }
    return [
        Row(f"{work.name}/{label}", "train", runs[label])
        for label in TRAIN_LABELS
        if with_torch or label != "hand+torch_writer"
    ]


class Setup:
    """Everything made once per process: data, the big tensor, the landscape's plane."""

    def __init__(self, args: argparse.Namespace, sizes: Sizes, device: torch.device) -> None:
        self.args, self.sizes, self.device = args, sizes, device
        self._cache: dict[str, Any] = {}
        self.landscape_checks: list[dict[str, Any]] = []

    def cached(self, key: str, make: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    # ---- data

    def device_batches(self, key: str, shape: tuple[int, ...], classes: int) -> list[Any]:
        """``--distinct`` (inputs, labels) batches made on the CPU (seeded), moved once."""

        def make() -> list[Any]:
            gen = torch.Generator().manual_seed(SEED)
            return [
                (
                    torch.randn(shape, generator=gen).to(self.device),
                    torch.randint(0, classes, (shape[0],), generator=gen).to(self.device),
                )
                for _ in range(self.args.distinct)
            ]

        return self.cached(key, make)

    def loader_dataset(self) -> TensorDataset:
        s = self.sizes

        def make() -> TensorDataset:
            gen = torch.Generator().manual_seed(SEED)
            n, size = s.loader_samples, s.loader_image
            return TensorDataset(
                torch.randn(n, 3, size, size, generator=gen),
                torch.randint(0, s.loader_classes, (n,), generator=gen),
            )

        return self.cached("loader", make)

    def loader(self, meter: Meter, plan: Plan) -> MeteredLoader:
        batch = self.sizes.loader_batch
        dataset = self.loader_dataset()
        sampler = RandomSampler(
            dataset,
            num_samples=(plan.warmup + plan.steps) * batch,
            generator=torch.Generator().manual_seed(SEED),
        )
        loader = MeteredLoader(
            dataset,
            batch_size=batch,
            sampler=sampler,
            num_workers=self.args.loader_workers,
            pin_memory=self.device.type == "cuda",
        )
        loader.meter, loader.warmup, loader.epoch = meter, plan.warmup, plan.epoch
        return loader

    def big_tensor(self) -> torch.Tensor:
        def make() -> torch.Tensor:
            gen = torch.Generator().manual_seed(SEED)
            chunks = [
                torch.randn(min(10_000_000, self.sizes.hist_elements - start), generator=gen)
                for start in range(0, self.sizes.hist_elements, 10_000_000)
            ]
            return torch.cat(chunks).to(self.device)

        return self.cached("big", make)

    # ---- workloads

    def workloads(self) -> list[Workload]:
        s, device = self.sizes, self.device

        def resnet(classes: int) -> Callable[[], nn.Module]:
            def build() -> nn.Module:
                torch.manual_seed(SEED)
                return ResNet18(classes, s.resnet_width).to(device)

            return build

        def transformer() -> nn.Module:
            torch.manual_seed(SEED)
            return TransformerNet(s).to(device)

        def sgd(net: nn.Module) -> torch.optim.Optimizer:
            return torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

        def adamw(net: nn.Module) -> torch.optim.Optimizer:
            return torch.optim.AdamW(net.parameters(), lr=1e-4)

        def resnet_data(meter: Meter, plan: Plan) -> Feed:
            shape = (s.resnet_batch, 3, s.resnet_image, s.resnet_image)
            batches = self.device_batches("resnet", shape, s.resnet_classes)
            return Feed(batches, plan, meter)

        def transformer_data(meter: Meter, plan: Plan) -> Feed:
            shape = (s.tf_batch, s.tf_seq, s.tf_dim)
            batches = self.device_batches("transformer", shape, s.tf_classes)
            return Feed(batches, plan, meter)

        return [
            Workload("resnet_gpu", resnet(s.resnet_classes), sgd, resnet_data),
            Workload("resnet_loader", resnet(s.loader_classes), sgd, self.loader),
            Workload("transformer_gpu", transformer, adamw, transformer_data),
        ]

    # ---- landscape

    def landscape(self, short: bool) -> dict[str, Any]:
        """The network, batches, directions and grid (``short``: a 4 x 4 grid)."""
        base = self.cached("landscape", self._landscape_base)
        size = 4 if short else self.sizes.landscape_size
        axis = grid.result_axis(size)
        return {**base, "size": size, "points": grid.grid_points(axis, axis)}

    def _landscape_base(self) -> dict[str, Any]:
        s, device = self.sizes, self.device
        torch.manual_seed(SEED)
        network = DigitsCNN().to(device).eval()
        gen = torch.Generator().manual_seed(SEED)
        x = torch.rand(s.landscape_samples, 1, 8, 8, generator=gen)
        y = torch.randint(0, 10, (s.landscape_samples,), generator=gen)
        batches = [
            (x[i : i + s.landscape_batch].to(device), y[i : i + s.landscape_batch].to(device))
            for i in range(0, s.landscape_samples, s.landscape_batch)
        ]
        v, w = random_plane(numpy_state(network.state_dict()), "tensor", SEED)
        directions = (
            {k: torch.from_numpy(a).float().to(device) for k, a in v.items()},
            {k: torch.from_numpy(a).float().to(device) for k, a in w.items()},
        )
        return {"network": network, "batches": batches, "directions": directions}


def landscape_baseline(setup: dict[str, Any]) -> np.ndarray:
    """The point-by-point loop of bench_landscape.py (one ``float(loss)`` per batch)."""
    network: nn.Module = setup["network"]
    batches = setup["batches"]
    d1, d2 = setup["directions"]
    loss_fn = nn.CrossEntropyLoss()
    params = dict(network.named_parameters())
    base = {name: p.detach().clone() for name, p in params.items()}
    heights = []
    for a, b in setup["points"]:
        with torch.no_grad():
            for name, p in params.items():
                p.copy_(base[name] + float(a) * d1[name] + float(b) * d2[name])
            network.eval()
            heights.append(sum(float(loss_fn(network(x), y)) for x, y in batches) / len(batches))
    with torch.no_grad():
        for name, p in params.items():
            p.copy_(base[name])
    return np.array(heights)


def landscape_sumlens(setup: dict[str, Any], device: torch.device, samples: int) -> np.ndarray:
    landscape = compute_landscape(
        [setup["network"].state_dict()],
        (DigitsCNN().to(device), setup["batches"], nn.CrossEntropyLoss()),
        kind="result",
        landscape_size=setup["size"],
        num_samples=samples,
        seed=SEED,
        progress=False,
    )
    return np.asarray(landscape.z).reshape(-1)


def extra_rows(setup: Setup, with_torch: bool) -> list[Row]:
    device, sizes = setup.device, setup.sizes
    reference: dict[int, np.ndarray] = {}

    def hist_sumlens(meter: Meter, logdir: Path, plan: Plan) -> int:
        big = setup.big_tensor()
        record = SummaryRecord(logdir)
        try:
            meter.flush = record.flush
            meter.start()
            record.add_value("histogram", "weights", big)
            record.record(1)
            meter.stop()
        finally:
            record.close()
        return 1

    def hist_torch(meter: Meter, logdir: Path, plan: Plan) -> int:
        big = setup.big_tensor()
        writer = torch_writer_class()(str(logdir))
        try:
            meter.flush = writer.flush
            meter.start()
            writer.add_histogram("weights", big, 1)
            meter.stop()
        finally:
            writer.close()
        return 1

    def check(size: int, heights: np.ndarray, method: str) -> None:
        if size not in reference:
            return
        ref = reference[size]
        worst = float(np.max(np.abs(heights - ref) / np.maximum(np.abs(ref), 1e-12)))
        setup.landscape_checks.append({"method": method, "size": size, "max_rel_diff": worst})

    def land_baseline(meter: Meter, logdir: Path, plan: Plan) -> int:
        plane = setup.landscape(plan.short)
        meter.start()
        heights = landscape_baseline(plane)
        meter.stop()
        reference.setdefault(plane["size"], heights)
        check(plane["size"], heights, "baseline")
        return 1

    def land_sumlens(meter: Meter, logdir: Path, plan: Plan) -> int:
        plane = setup.landscape(plan.short)
        meter.start()
        heights = landscape_sumlens(plane, device, sizes.landscape_samples)
        meter.stop()
        if plane["size"] not in reference:  # sumlens ran first in this process: make one
            reference[plane["size"]] = landscape_baseline(plane)
        check(plane["size"], heights, "sumlens")
        return 1

    def thor_row(kind: str) -> Callable[[Meter, Path, Plan], int]:
        def run(meter: Meter, logdir: Path, plan: Plan) -> int:
            torch.manual_seed(SEED)
            net = ResNet18(sizes.resnet_classes, sizes.resnet_width).to(device)
            loss_fn = nn.CrossEntropyLoss()
            if kind == "thor":
                opt: Any = thor(
                    net,
                    learning_rate=0.01,
                    damping=0.03,
                    momentum=0.9,
                    batch_size=sizes.resnet_batch,
                    frequency=sizes.thor_frequency,
                )
                model = ConvertModelUtils.convert_to_thor_model(
                    Model(net, loss_fn, opt), net, loss_fn, opt
                )
            else:
                opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
                model = Model(net, loss_fn, opt)
            shape = (sizes.resnet_batch, 3, sizes.resnet_image, sizes.resnet_image)
            batches = setup.device_batches("resnet", shape, sizes.resnet_classes)
            model.train(1, Feed(batches, plan, meter))
            return plan.steps

        return run

    rows = [Row("hist50m/sumlens", "hist", hist_sumlens, "histogram")]
    if with_torch:
        rows.append(Row("hist50m/torch_writer", "hist", hist_torch, "histogram"))
    rows += [
        Row("landscape/baseline", "landscape", land_baseline, "landscape"),
        Row("landscape/sumlens", "landscape", land_sumlens, "landscape"),
        Row("thor/sgd", "thor", thor_row("sgd")),
        Row("thor/thor", "thor", thor_row("thor")),
    ]
    return rows


def all_rows(setup: Setup, with_torch: bool) -> list[Row]:
    rows: list[Row] = []
    for work in setup.workloads():
        rows += training_rows(work, setup.device, with_torch)
    return rows + extra_rows(setup, with_torch)


def select(rows: list[Row], wanted: str) -> list[Row]:
    """Rows matching any comma-separated token: a row name, a group name or a pattern."""
    if not wanted:
        return rows
    tokens = [t.strip() for t in wanted.split(",") if t.strip()]
    chosen = [
        row
        for row in rows
        if any(t in (row.name, row.group) or fnmatch.fnmatchcase(row.name, t) for t in tokens)
    ]
    unknown = [
        t
        for t in tokens
        if not any(t in (r.name, r.group) or fnmatch.fnmatchcase(r.name, t) for r in rows)
    ]
    if unknown:
        names = ", ".join(row.name for row in rows)
        raise SystemExit(f"--rows: {', '.join(unknown)} match no row; rows: {names}")
    return chosen


# ---------------------------------------------------------------- ratios and targets


@dataclass(frozen=True)
class Ratio:
    label: str
    numerator: str
    denominator: str
    target: float | None = None
    at_least: bool = False  # target is a minimum (speed-up) instead of a maximum
    overhead: bool = True  # printed as +x% (else as a factor)

    def meets(self, value: float) -> bool:
        assert self.target is not None
        return value >= self.target if self.at_least else value <= self.target

    def target_text(self) -> str:
        if self.target is None:
            return "-"
        if self.overhead:
            return f"<= {self.target - 1:+.0%}"
        return f"{'>=' if self.at_least else '<='} {self.target:g}x"

    def value_text(self, value: float) -> str:
        return f"{value - 1:+.1%}" if self.overhead else f"{value:.3g}x"


def ratio_specs() -> list[Ratio]:
    specs: list[Ratio] = []
    for group in ("resnet_gpu", "resnet_loader", "transformer_gpu"):
        for label, baseline, target in (
            ("hand+record", "hand", 1.02),
            ("hand+torch_writer", "hand", None),
            ("model", "hand", 1.02),
            ("model+collector_f1", "model", 1.03),
            ("model+collector_f10", "model", 1.03),
        ):
            specs.append(
                Ratio(
                    f"{group}: {label} / {baseline}",
                    f"{group}/{label}",
                    f"{group}/{baseline}",
                    target,
                )
            )
    specs += [
        Ratio(
            "50M histogram: torch_writer / sumlens",
            "hist50m/torch_writer",
            "hist50m/sumlens",
            40.0,
            at_least=True,
            overhead=False,
        ),
        Ratio(
            "landscape: point-by-point / sumlens",
            "landscape/baseline",
            "landscape/sumlens",
            20.0,
            at_least=True,
            overhead=False,
        ),
        Ratio("THOR / SGD-momentum per step", "thor/thor", "thor/sgd", 1.5, overhead=False),
    ]
    return specs


def per_round_ratios(spec: Ratio, runs: dict[str, list[dict[str, Any]]]) -> list[float]:
    """Numerator / denominator per unit, in every round both ran."""
    if spec.numerator not in runs or spec.denominator not in runs:
        return []
    pairs = same_round_pairs(runs[spec.numerator], runs[spec.denominator])
    return [top["per_unit"] / bottom["per_unit"] for top, bottom in pairs]


# ---------------------------------------------------------------- running


class LogTally(logging.Handler):
    """sumlens' warnings during the run, counted (printed once at the end, not per run)."""

    def __init__(self, base: str) -> None:
        super().__init__(logging.WARNING)
        self.base = base
        self.counts: Counter[str] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage().replace(self.base, "<tmp>")
        self.counts[f"{record.levelname}: {text[:300]}"] += 1


def run_row(row: Row, meter: Meter, logdir: Path, plan: Plan) -> int:
    gc.collect()
    try:
        return row.run(meter, logdir, plan)
    finally:
        meter.close_counter()
        shutil.rmtree(logdir, ignore_errors=True)


def plans(args: argparse.Namespace, sizes: Sizes) -> dict[str, dict[str, Plan]]:
    """Per row kind: the plan of the warm-up pass, the sync count and the timed runs."""
    freq = sizes.thor_frequency
    return {
        "train": {
            "warm": Plan(args.warmup, min(args.steps, 10), epoch=args.epoch_steps),
            "count": Plan(args.warmup, args.sync_steps, epoch=args.epoch_steps),
            "timed": Plan(args.warmup, args.steps, epoch=args.epoch_steps),
        },
        "thor": {
            "warm": Plan(args.warmup, freq),
            "count": Plan(args.warmup, freq),
            "timed": Plan(args.warmup, args.thor_steps),
        },
        "hist": {"warm": Plan(0, 1), "count": Plan(0, 1), "timed": Plan(0, 1)},
        "landscape": {"warm": Plan(0, 1, True), "timed": Plan(0, 1)},
    }


def tensor_steps_note(args: argparse.Namespace) -> str:
    """How many collector tensor steps (images + histograms) the timed part holds."""
    run = args.warmup + args.steps
    epoch = max(run, args.epoch_steps)
    parts = []
    for freq in (1, 10):
        tensors, _ = collected_steps(epoch, freq)
        timed = [s for s in tensors if args.warmup < s <= run]
        parts.append(f"collect_freq={freq}: {len(timed)} of the {args.steps} timed steps")
    told = "" if epoch == run else f" (--epoch-steps: Model is told {epoch}, {run} are run)"
    return (
        f"collector tensor steps (input images + 5 histograms; at most 20 spread over the "
        f"{epoch}-step epoch{told}): {'; '.join(parts)}; hand+record: a histogram step every "
        f"{HISTOGRAM_EVERY}"
    )


def environment(device: torch.device) -> dict[str, Any]:
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "sumlens": sumlens.__version__,
        "numpy": np.__version__,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "device": str(device),
    }
    try:
        import tensorboard

        info["tensorboard"] = tensorboard.__version__
    except ImportError:
        info["tensorboard"] = None
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        info.update(
            gpu=props.name,
            gpu_memory_gib=round(props.total_memory / 2**30, 1),
            cuda=torch.version.cuda,
            cudnn=torch.backends.cudnn.version(),
            cudnn_benchmark=torch.backends.cudnn.benchmark,
            tf32_matmul=torch.backends.cuda.matmul.allow_tf32,
            tf32_cudnn=torch.backends.cudnn.allow_tf32,
        )
    for key, command in (
        ("git_commit", ["git", "rev-parse", "HEAD"]),
        ("git_dirty", ["git", "status", "--porcelain", "--untracked-files=no"]),
    ):
        try:
            out = subprocess.run(
                command, cwd=REPO_ROOT, capture_output=True, text=True, check=False, timeout=10
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            out = ""
        info[key] = out if key == "git_commit" else bool(out)
    return info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--steps", type=int, default=100, help="timed steps per training run")
    parser.add_argument("--warmup", type=int, default=20, help="untimed steps before them")
    parser.add_argument("--sync-steps", type=int, default=20, help="steps of the sync count")
    parser.add_argument("--thor-steps", type=int, default=None, help="default 2 x frequency")
    parser.add_argument("--loader-workers", type=int, default=0, help="DataLoader num_workers")
    parser.add_argument("--distinct", type=int, default=4, help="distinct device batches")
    parser.add_argument(
        "--epoch-steps",
        type=int,
        default=0,
        help="epoch length the training data reports to Model/SummaryCollector (0: the "
        "steps run); the collector spreads its tensor steps over it",
    )
    parser.add_argument("--rows", default="", help="row names, groups or patterns (a,b,...)")
    parser.add_argument("--device", default="cuda")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch CPU threads (default: torch's; 1 for cpu --quick)",
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 rounds, tiny sizes")
    parser.add_argument("--no-sync-count", action="store_true")
    parser.add_argument("--list-rows", action="store_true")
    parser.add_argument("--out", type=Path, default=None, help="JSON results file")
    args = parser.parse_args()
    sizes = QUICK if args.quick else FULL
    if args.quick:
        args.rounds, args.steps, args.warmup, args.sync_steps = 2, 3, 1, 3
    if args.thor_steps is None:
        args.thor_steps = 2 * sizes.thor_frequency
    if args.out is None:
        args.out = RESULTS_DIR / ("bench_gpu_quick.json" if args.quick else "bench_gpu.json")
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    if args.threads is None and args.quick and not cuda:
        args.threads = 1  # a smoke run on a shared machine: no oversubscribed thread pools
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    if cuda and not torch.cuda.is_available():
        raise SystemExit(
            "CUDA is not available here; for a smoke run of the code: "
            ".venv/bin/python -m benchmarks.bench_gpu --device cpu --quick"
        )
    if min(args.rounds, args.steps, args.sync_steps, args.thor_steps) < 1 or args.warmup < 0:
        raise SystemExit("--rounds, --steps, --sync-steps, --thor-steps must be >= 1")

    with_torch = torch_writer_class() is not None
    setup = Setup(args, sizes, device)
    rows = select(all_rows(setup, with_torch), args.rows)
    if args.list_rows:
        print("\n".join(row.name for row in rows))
        return
    notes: list[str] = []
    if not with_torch:
        notes.append("tensorboard is not installed: the torch_writer rows are left out")
    if not cuda:
        notes.append(
            f"device {device}: a smoke run of the code. Sync counting skipped (CUDA only) and "
            "no verdict given: every target is about a CUDA GPU (the GPU comparisons, 50M "
            "histogram, landscape and THOR, ran on the CPU only to exercise their code)"
        )
        if not args.quick:
            notes.append("full sizes on a CPU take very long; --quick is the smoke run")
    elif args.rounds < 9:
        notes.append(f"{args.rounds} rounds: the issue asks for >= 9")
    if any(row.kind == "train" and "collector" in row.label for row in rows):
        notes.append(tensor_steps_note(args))
    env = environment(device)
    print(
        f"sumlens {sumlens.__version__}, torch {torch.__version__}, python "
        f"{platform.python_version()}, device {env.get('gpu', device)}; {args.rounds} rounds, "
        f"{args.steps} timed steps after {args.warmup} (THOR {args.thor_steps}, frequency "
        f"{sizes.thor_frequency}){'; QUICK sizes' if args.quick else ''}"
    )
    print(f"rows ({len(rows)}): {', '.join(row.name for row in rows)}")
    for note in notes:
        print(f"note: {note}")

    base = tempfile.mkdtemp(prefix="sumlens-bench-gpu-")
    tally = LogTally(base)
    sumlens.logger.addHandler(tally)
    kind_plans = plans(args, sizes)
    runs: dict[str, list[dict[str, Any]]] = {row.name: [] for row in rows}
    syncs: dict[str, dict[str, Any]] = {}
    started = now()
    try:
        # warm-up pass: every row once, untimed
        for row in rows:
            t0 = now()
            run_row(row, Meter(device, "none"), Path(base) / "warm", kind_plans[row.kind]["warm"])
            print(f"warm-up {row.name}: {now() - t0:.1f} s", flush=True)
        # sync count: once per countable row
        if cuda and not args.no_sync_count:
            for row in rows:
                plan = kind_plans[row.kind].get("count")
                if plan is None:
                    continue
                meter = Meter(device, "count")
                units = run_row(row, meter, Path(base) / "count", plan)
                syncs[row.name] = sync_entry(meter, units)
                print(
                    f"syncs {row.name}: {syncs[row.name]['main_per_unit']:.2f} per "
                    f"{row.unit} (main thread), {syncs[row.name]['other_per_unit']:.2f} "
                    "(other threads)",
                    flush=True,
                )
        elif cuda:
            notes.append("sync counting skipped (--no-sync-count)")
        print(f"set-up done in {now() - started:.0f} s", flush=True)
        specs = ratio_specs()
        for round_index in range(args.rounds):
            t0 = now()
            order = shuffled(rows, round_index)
            for position, row in enumerate(order):
                meter = Meter(device, "time")
                logdir = Path(base) / f"r{round_index}-{position}"
                units = run_row(row, meter, logdir, kind_plans[row.kind]["timed"])
                if meter.seconds is None:
                    raise RuntimeError(f"{row.name} never reached the end of its timed part")
                runs[row.name].append(
                    {
                        "round": round_index,
                        "position": position,
                        "seconds": meter.seconds,
                        "units": units,
                        "per_unit": meter.seconds / units,
                        "flush_seconds": meter.flush_seconds,
                    }
                )
            lines: dict[str, list[str]] = {}
            for spec in specs:
                values = per_round_ratios(spec, runs)
                if values and len(values) == round_index + 1:
                    group, label = spec.numerator.split("/")
                    lines.setdefault(group, []).append(f"{label} {spec.value_text(values[-1])}")
            print(f"round {round_index + 1}/{args.rounds} ({now() - t0:.0f} s)")
            for group, parts in lines.items():
                print(f"  {group}: {', '.join(parts)}", flush=True)
    finally:
        sumlens.logger.removeHandler(tally)
        shutil.rmtree(base, ignore_errors=True)
    elapsed = now() - started
    report(args, rows, runs, syncs, setup, notes, tally, env, cuda, elapsed)


def sync_entry(meter: Meter, units: int) -> dict[str, Any]:
    counter = meter.counter
    assert counter is not None
    main_count, other_count = counter.count("main"), counter.count("other")
    return {
        "units": units,
        "main": main_count,
        "other": other_count,
        "main_per_unit": main_count / units,
        "other_per_unit": other_count / units,
        "sites": {f"{thread} {site}": n for (thread, site), n in counter.sites.most_common()},
        "other_warnings": dict(counter.other_warnings),
    }


# ---------------------------------------------------------------- report


def report(
    args: argparse.Namespace,
    rows: list[Row],
    runs: dict[str, list[dict[str, Any]]],
    syncs: dict[str, dict[str, Any]],
    setup: Setup,
    notes: list[str],
    tally: LogTally,
    env: dict[str, Any],
    judged: bool,
    elapsed: float,
) -> None:
    print()
    header = (
        f"{'row':<36} {'runs':>4} {'median':>10} {'IQR':>19} {'min..max':>19} "
        f"{'flush ms':>8} {'syncs':>6}  unit"
    )
    print(header)
    print("-" * len(header))
    row_summary: dict[str, Any] = {}
    for row in rows:
        values = [r["per_unit"] * 1e3 for r in runs[row.name]]
        stats = quartile_summary(values)
        flush = statistics.median(r["flush_seconds"] * 1e3 for r in runs[row.name])
        sync = syncs.get(row.name)
        sync_text = "-" if sync is None else f"{sync['main_per_unit']:.2f}"
        iqr = f"{stats['q1']:.3f}..{stats['q3']:.3f}"
        span = f"{stats['min']:.3f}..{stats['max']:.3f}"
        print(
            f"{row.name:<36} {len(values):>4} {stats['median']:>10.3f} {iqr:>19} {span:>19} "
            f"{flush:>8.1f} {sync_text:>6}  ms/{row.unit}"
        )
        row_summary[row.name] = {
            "unit": row.unit,
            "ms_per_unit": stats,
            "flush_ms_median": flush,
            "runs": runs[row.name],
        }
    print("syncs: host-device syncs per unit on the training thread (torch sync debug mode)")

    print()
    header = (
        f"{'ratio (per round)':<44} {'target':>9} {'median':>9} {'IQR':>19} "
        f"{'min..max':>19} {'n':>3}  verdict"
    )
    print(header)
    print("-" * len(header))
    ratio_summary: dict[str, Any] = {}
    for spec in ratio_specs():
        values = per_round_ratios(spec, runs)
        if not values:
            continue
        stats = quartile_summary(values)
        verdict = ""
        if spec.target is not None:
            if not judged:
                verdict = "not judged (cpu)"
            elif spec.meets(stats["median"]):
                verdict = "met in every round" if all(map(spec.meets, values)) else "met (median)"
            else:
                verdict = "NOT met"
        iqr = f"{spec.value_text(stats['q1'])}..{spec.value_text(stats['q3'])}"
        span = f"{spec.value_text(stats['min'])}..{spec.value_text(stats['max'])}"
        print(
            f"{spec.label:<44} {spec.target_text():>9} {spec.value_text(stats['median']):>9} "
            f"{iqr:>19} {span:>19} {len(values):>3}  {verdict}"
        )
        ratio_summary[spec.label] = {
            "numerator": spec.numerator,
            "denominator": spec.denominator,
            "target": spec.target,
            "target_is_minimum": spec.at_least,
            "per_round": values,
            **stats,
            "verdict": verdict,
        }

    sync_summary = sync_report(rows, syncs, judged) if syncs else {}

    checked = [c["max_rel_diff"] for c in setup.landscape_checks if c["method"] == "sumlens"]
    if checked:
        worst = max(checked)
        tolerance = LANDSCAPE_TOLERANCE["cuda" if judged else "cpu"]
        flag = "ok" if worst <= tolerance else f"OVER the {tolerance:g} tolerance"
        print(
            "\nlandscape heights, sumlens vs point-by-point: max relative difference "
            f"{worst:.2e} ({flag})"
        )
    if tally.counts:
        print("\nsumlens log (warnings and errors, counted over all runs):")
        for text, n in tally.counts.most_common():
            print(f"  {n:>3} x {text}")
    for note in notes:
        print(f"note: {note}")
    print(f"timed part and set-up: {elapsed:.0f} s")

    args.out.parent.mkdir(parents=True, exist_ok=True)
    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    args.out.write_text(
        json.dumps(
            {
                "config": config,
                "sizes": setup.sizes.__dict__,
                "environment": env,
                "rows": row_summary,
                "ratios": ratio_summary,
                "syncs": sync_summary,
                "landscape_checks": setup.landscape_checks,
                "sumlens_log": dict(tally.counts),
                "notes": notes,
                "seconds": elapsed,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {args.out}")


def sync_report(
    rows: list[Row], syncs: dict[str, dict[str, Any]], judged: bool
) -> dict[str, dict[str, Any]]:
    """Print the sync table (target: no sync added by a sumlens row over ``hand``)."""
    print()
    header = (
        f"{'syncs per unit':<36} {'main':>6} {'other':>6} {'added':>6} {'target':>8}  "
        f"{'verdict':<8} where (thread file:line x count over the counted steps)"
    )
    print(header)
    print("-" * len(header))
    summary: dict[str, dict[str, Any]] = {}
    for row in rows:
        entry = syncs.get(row.name)
        if entry is None:
            continue
        sumlens_row = row.kind == "train" and row.label in SUMLENS_TRAIN_LABELS
        sumlens_row = sumlens_row or row.name == "hist50m/sumlens"
        baseline = syncs.get(f"{row.group}/hand") if row.kind == "train" else None
        added = entry["main_per_unit"] - (baseline["main_per_unit"] if baseline else 0.0)
        verdict = ""
        if sumlens_row:
            verdict = "met" if added <= 0 else "NOT met"
            if not judged:
                verdict = "-"
        sites = ", ".join(f"{site} x{n}" for site, n in list(entry["sites"].items())[:3])
        print(
            f"{row.name:<36} {entry['main_per_unit']:>6.2f} {entry['other_per_unit']:>6.2f} "
            f"{added:>+6.2f} {'0 added' if sumlens_row else '-':>8}  {verdict:<8} {sites}"
        )
        summary[row.name] = {**entry, "added_vs_hand": added, "verdict": verdict}
    print(
        "main: the training thread; other: writer threads; added: main minus the group's "
        "hand row (the 50M histogram: add_value + record, flush excluded)"
    )
    return summary


if __name__ == "__main__":
    main()
