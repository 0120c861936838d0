"""Training overhead of recording: SummaryCollector, SummaryRecord by hand, torch's writer.

The workload of ``/work/shared/perf/anchors.md`` ("Training overhead of logging"): an MLP
784-256-10, batch 64, synthetic data (``--batches`` distinct batches, cycled), ``--steps``
steps (2,000), torch threads fixed (``--threads``, default 2 as in the anchor's +522%);
recording the loss and the learning rate every step and histograms of the first 5
parameters (the MLP has 4: both layers' weight and bias) every 10 steps. Rows:

* ``none``: the hand-written loop (forward, loss, backward, step, zero_grad), no recording;
* ``sumlens_record``: the same loop with ``sumlens.SummaryRecord`` (``add_value`` +
  ``record(step)``);
* ``sumlens_scalars``: the same without the histograms (a diagnostic: what the
  scalars alone cost);
* ``torch_writer``: the same loop with ``torch.utils.tensorboard.SummaryWriter``
  (``add_scalar`` / ``add_histogram``), against ``none_tb`` (the loop without recording)
  in a turn group of their own: whichever run follows torch's writer is slowed (~20-40%,
  for reasons not found), so it stays away from the other rows; its own baseline suffers
  it, which if anything understates torch's overhead;
* ``model``: ``sumlens.Model.train`` without recording (baseline of the collector rows);
* ``collector``: ``Model.train`` + ``SummaryCollector(collect_freq=1,
  collect_tensor_freq=10)``: the workload above (loss and learning rate every step,
  the first 5 parameters' histograms every 10 steps) plus the graph and lineage;
* ``collector_f10``: ``SummaryCollector(collect_freq=10)`` with its defaults (loss and
  learning rate every 10 steps, histograms at most 20 times): what most users run;
* ``digits_model`` / ``digits_collector``: a small CNN on scikit-learn's ``load_digits``
  (8x8 images, batch 32) through ``Model.train``, without and with the default
  ``SummaryCollector(collect_freq=10)`` (also collects the input images).
* ``images96_model`` / ``images96_collector_f10`` / ``images96_collector_f1``: a small
  CNN on images of a real size, 3x96x96 in batches of 64 (synthetic, smooth like photos,
  so they compress as photos do; 8 distinct batches cycled), through ``Model.train``,
  without and with the default ``SummaryCollector`` at collect_freq 10 and 1: 8x8 digits
  hid what input images cost at real sizes.

* ``lightning_none`` / ``lightning_tb`` / ``lightning_sumlens`` / ``lightning_sumlens_cb``:
  the MLP workload trained by ``lightning.Trainer`` without a logger, with Lightning's
  ``TensorBoardLogger`` and with ``SumlensLogger`` (alone, and with ``SumlensCallback``):
  ``benchmarks/lightning_rows.py``; only when Lightning is installed.

The collector rows run only when ``sumlens.SummaryCollector`` exists.

**Method.** This machine's speed drifts by tens of percent for seconds at a time (other
tenants), so runs compared with each other must share the same seconds (the harness's
turn-taking, ``benchmarks/harness/turns.py``). A *round* starts
one fresh process per row (training on its main thread, as usual: torch runs ~2x slower
on other threads here). Each process first makes a short untimed *first run*
(``--first-steps``, one process at a time): its setup and first ``--warmup`` steps beyond
steady steps are the row's *one-time cost* in a fresh process (imports, compiled kernels
loaded, the graph captured). Then the timed runs of all rows take turns: a run trains
``--segment`` steps (100), hands the machine to the next run and waits for its turn
again; only one run works at any time. A run that records flushes its writer at the end
of each turn and is timed until the flush returns, so its writer's work is charged to it,
never to the run after it (this writes every ``--segment`` steps: if anything, it
overstates a writer's cost). Every run has a fresh network (same seed) and summary
directory; each round draws a new turn order (seeded); ``--rounds`` >= 15 by default. A run's
*per-step time* is the mean of its steps ``--warmup + 1 .. steps`` (20 by default), time
waiting for its turn excluded; its *close* time is what closing the writer takes after
the last step. A row's overhead in a round is its per-step time over its baseline's in
the same round, minus 1; reported are the median over rounds, the interquartile range
and min..max, and the medians of the times. The anchor rows and the digits rows take
turns among themselves in later parts of each round.

Targets (issue 6): sumlens <= +10% per step on the MLP; the digits CNN with the default
collector at collect_freq=10 <= +5% per step. Anchor: torch's writer +522% (2 threads).
Issue 16: the 3x96x96 CNN with the default collector <= +5% at collect_freq 10, <= +10% at 1.

Usage: ``.venv/bin/python -m benchmarks.bench_collector [--rounds 15] [--steps 2000]
[--threads 2] [--segment 100] [--quick] [--rows none,sumlens_record,...] [--out FILE.json]``.
``--quick`` (smoke run): 3 rounds of 300 steps, digits and 96x96 images 200 steps.
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib.util
import json
import platform
import shutil
import statistics
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import torch
from torch import nn

import sumlens
from benchmarks.harness.clock import now
from benchmarks.harness.rounds import shuffled
from benchmarks.harness.stats import quartiles
from benchmarks.harness.turns import StepTimer, Turn, conduct, first_runs, start_processes
from benchmarks.lightning_rows import lightning_run
from sumlens import Callback, Model, RunContext, SummaryRecord

HISTOGRAM_EVERY = 10
HISTOGRAM_PARAMS = 5
MLP_BATCH = 64
DIGITS_BATCH = 32
IMAGE_BATCH, IMAGE_BATCHES = 64, 8


def collector_available() -> bool:
    return hasattr(sumlens, "SummaryCollector")


# ---------------------------------------------------------------- workloads


def build_mlp(seed: int = 1) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))


def mlp_data(batches: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    gen = torch.Generator().manual_seed(0)
    return [
        (
            torch.randn(MLP_BATCH, 784, generator=gen),
            torch.randint(0, 10, (MLP_BATCH,), generator=gen),
        )
        for _ in range(batches)
    ]


class DigitsCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(32 * 4 * 4, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.conv1(x))
        x = self.pool(torch.relu(self.conv2(x)))
        return self.fc(x.flatten(1))


class ImageCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.conv3 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        x = torch.relu(self.conv3(x))
        return self.fc(x.mean(dim=(2, 3)))


@functools.cache
def image_data() -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Batches of smooth 3x96x96 images in [0, 1] (coarse noise upsampled, plus grain)."""
    gen = torch.Generator().manual_seed(0)
    batches = []
    for _ in range(IMAGE_BATCHES):
        coarse = torch.rand(IMAGE_BATCH, 3, 12, 12, generator=gen)
        smooth = nn.functional.interpolate(coarse, size=(96, 96), mode="bilinear")
        grain = 0.05 * torch.rand(IMAGE_BATCH, 3, 96, 96, generator=gen)
        labels = torch.randint(0, 10, (IMAGE_BATCH,), generator=gen)
        batches.append(((smooth + grain).clamp(0, 1), labels))
    return batches


@functools.cache
def digits_data() -> list[tuple[torch.Tensor, torch.Tensor]]:
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    labels = torch.tensor(digits.target, dtype=torch.long)
    order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(0))
    images, labels = images[order], labels[order]
    full = len(labels) // DIGITS_BATCH
    return [
        (
            images[i * DIGITS_BATCH : (i + 1) * DIGITS_BATCH],
            labels[i * DIGITS_BATCH : (i + 1) * DIGITS_BATCH],
        )
        for i in range(full)
    ]


class Cycled:
    """``steps`` batches taken from ``data`` in a cycle (a re-iterable with a length)."""

    def __init__(self, data: list, steps: int) -> None:
        self.data, self.steps = data, steps

    def __len__(self) -> int:
        return self.steps

    def __iter__(self):  # type: ignore[no-untyped-def]
        data, n = self.data, len(self.data)
        return (data[i % n] for i in range(self.steps))


# ---------------------------------------------------------------- timing


@dataclass
class RunTimes:
    setup: float  # writer construction
    steps: list[float]  # seconds of each step (its turn's end: with the writer's flush)
    close: float  # closing the writer after the last step


class StepClock(Callback):
    """Reports every training step to the run's timer (placed last in the list)."""

    def __init__(self, timer: StepTimer) -> None:
        self.timer = timer

    def on_train_step_end(self, run_context: RunContext) -> None:
        self.timer.step_done()


# ---------------------------------------------------------------- one run


def hand_loop(data: list, timer: StepTimer, logdir: Path, writer: str) -> RunTimes:
    """The hand-written loop, recording through ``writer`` (none | sumlens | torch)."""
    net = build_mlp()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    named = list(net.named_parameters())[:HISTOGRAM_PARAMS]
    timer.start()
    t0 = now()
    record: Any = None
    tb: Any = None
    histograms = writer != "sumlens_scalars"
    if writer in ("sumlens", "sumlens_scalars"):
        record = SummaryRecord(logdir)
        timer.flush = record.flush
    elif writer == "torch":
        from torch.utils.tensorboard import SummaryWriter

        tb = SummaryWriter(str(logdir))
        timer.flush = tb.flush
    setup = now() - t0
    timer.mark = now()
    n = len(data)
    net.train()
    for step in range(1, timer.total + 1):
        x, y = data[(step - 1) % n]
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if record is not None:
            record.add_value("scalar", "loss", loss.detach())
            record.add_value("scalar", "learning_rate", opt.param_groups[0]["lr"])
            if histograms and step % HISTOGRAM_EVERY == 0:
                for name, param in named:
                    record.add_value("histogram", name, param)
            record.record(step)
        elif tb is not None:
            tb.add_scalar("loss", loss.detach(), step)
            tb.add_scalar("learning_rate", opt.param_groups[0]["lr"], step)
            if step % HISTOGRAM_EVERY == 0:
                for name, param in named:
                    tb.add_histogram(name, param.detach(), step)
        timer.step_done()
    t_last = now()
    if record is not None:
        record.close()
    if tb is not None:
        tb.close()
    return RunTimes(setup, timer.steps, now() - t_last)


def model_run(
    net: nn.Module,
    data: Any,
    timer: StepTimer,
    logdir: Path,
    collect_freq: int | None,
    tensor_freq: int | None = None,
) -> RunTimes:
    """``Model.train`` for one epoch over ``data``, with a collector when ``collect_freq``."""
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    model = Model(net, nn.CrossEntropyLoss(), opt)
    timer.start()
    t0 = now()
    callbacks: list[Callback] = []
    if collect_freq is not None:
        collector = sumlens.SummaryCollector(
            str(logdir), collect_freq=collect_freq, collect_tensor_freq=tensor_freq
        )
        callbacks.append(collector)
        timer.flush = collector.flush
    setup = now() - t0
    callbacks.append(StepClock(timer))
    timer.mark = now()
    model.train(1, data, callbacks=callbacks)  # the collector closes its record on exit
    return RunTimes(setup, timer.steps, now() - timer.mark)


# ---------------------------------------------------------------- rows


@dataclass(frozen=True)
class Row:
    name: str
    baseline: str | None
    needs_collector: bool
    run: Callable[[StepTimer, Path], RunTimes]  # the timer knows the number of steps
    target: float | None = None  # maximum overhead over the baseline
    group: str = "mlp"  # rows take turns with the rows of their group


def make_rows(args: argparse.Namespace) -> list[Row]:
    mlp = mlp_data(args.batches)

    def hand(writer: str) -> Callable[[StepTimer, Path], RunTimes]:
        return lambda timer, logdir: hand_loop(mlp, timer, logdir, writer)

    def mlp_model(freq: int | None, tensor_freq: int | None = None) -> Callable:
        def run(timer: StepTimer, logdir: Path) -> RunTimes:
            data = Cycled(mlp, timer.total)
            return model_run(build_mlp(), data, timer, logdir, freq, tensor_freq)

        return run

    def cnn(freq: int | None) -> Callable[[StepTimer, Path], RunTimes]:
        def run(timer: StepTimer, logdir: Path) -> RunTimes:
            torch.manual_seed(1)
            data = Cycled(digits_data(), timer.total)
            return model_run(DigitsCNN(), data, timer, logdir, freq)

        return run

    def image_cnn(freq: int | None) -> Callable[[StepTimer, Path], RunTimes]:
        def run(timer: StepTimer, logdir: Path) -> RunTimes:
            torch.manual_seed(1)
            data = Cycled(image_data(), timer.total)
            return model_run(ImageCNN(), data, timer, logdir, freq)

        return run

    def lightning(kind: str) -> Callable[[StepTimer, Path], RunTimes]:
        def run(timer: StepTimer, logdir: Path) -> RunTimes:
            data = Cycled(mlp, timer.total)
            net = build_mlp()
            return RunTimes(
                *lightning_run(net, data, timer, logdir, kind, HISTOGRAM_EVERY, HISTOGRAM_PARAMS)
            )

        return run

    rows = [
        Row("none", None, False, hand("none")),
        Row("sumlens_record", "none", False, hand("sumlens"), 0.10),
        Row("sumlens_scalars", "none", False, hand("sumlens_scalars")),
        Row("none_tb", None, False, hand("none"), group="anchor"),
        Row("torch_writer", "none_tb", False, hand("torch"), group="anchor"),
        Row("model", None, True, mlp_model(None)),
        Row("collector", "model", True, mlp_model(1, HISTOGRAM_EVERY), 0.10),
        Row("collector_f10", "model", True, mlp_model(10)),
        Row("digits_model", None, True, cnn(None), group="digits"),
        Row("digits_collector", "digits_model", True, cnn(10), 0.05, group="digits"),
        Row("images96_model", None, True, image_cnn(None), group="images96"),
        Row("images96_collector_f10", "images96_model", True, image_cnn(10), 0.05, "images96"),
        Row("images96_collector_f1", "images96_model", True, image_cnn(1), 0.10, "images96"),
    ]
    if importlib.util.find_spec("lightning") is not None:
        rows += [
            Row("lightning_none", None, False, lightning("none"), group="lightning"),
            Row("lightning_tb", "lightning_none", False, lightning("tb"), group="lightning"),
            Row(
                "lightning_sumlens",
                "lightning_none",
                False,
                lightning("sumlens"),
                group="lightning",
            ),
            Row(
                "lightning_sumlens_cb",
                "lightning_none",
                False,
                lightning("sumlens_cb"),
                group="lightning",
            ),
        ]
    wanted = set(args.rows.split(",")) if args.rows else None
    have_collector = collector_available()
    chosen = []
    for row in rows:
        if wanted is not None and row.name not in wanted:
            continue
        if row.needs_collector and not have_collector:
            continue
        chosen.append(row)
    return chosen


# ---------------------------------------------------------------- processes


def row_process(conn: Connection, args: argparse.Namespace, name: str) -> None:
    """One row in a fresh process: its untimed first run, then its timed run (with turns)."""
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    (row,) = [row for row in make_rows(args) if row.name == name]
    steps = {"digits": args.digits_steps, "images96": args.image_steps}.get(row.group, args.steps)
    conn.send("ready")
    while (message := conn.recv()) is not None:
        kind, logdir = message
        gc.collect()
        if kind == "first":  # alone on the machine: no turns to take
            timer = StepTimer(Turn(conn), args.first_steps, args.first_steps + 1)
        else:
            timer = StepTimer(Turn(conn), steps, args.segment)
        conn.send(("done", row.run(timer, logdir)))


# ---------------------------------------------------------------- statistics


def split_times(times: RunTimes, warmup: int) -> tuple[float, float]:
    """(steady per-step time, one-time cost) of a run."""
    steps = times.steps
    warmup = min(warmup, len(steps) // 2)
    per_step = statistics.fmean(steps[warmup:])
    one_time = times.setup + sum(steps[:warmup]) - warmup * per_step
    return per_step, one_time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--digits-steps", type=int, default=1000)
    parser.add_argument("--image-steps", type=int, default=300, help="steps of the 96x96 CNN")
    parser.add_argument("--batches", type=int, default=50, help="distinct MLP batches")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--segment", type=int, default=100, help="steps per turn")
    parser.add_argument("--first-steps", type=int, default=100, help="steps of the first run")
    parser.add_argument("--rows", default="", help="comma-separated row names (default: all)")
    parser.add_argument("--quick", action="store_true", help="3 rounds of 300 steps")
    parser.add_argument("--out", type=Path, default=None, help="write raw timings as JSON")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.steps, args.digits_steps, args.image_steps = 3, 300, 200, 200
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)

    rows = make_rows(args)
    names = [row.name for row in rows]
    print(
        f"sumlens {sumlens.__version__}, torch {torch.__version__}, python "
        f"{platform.python_version()}, {args.threads} torch thread(s); MLP {args.steps} steps, "
        f"digits {args.digits_steps} steps, {args.rounds} rounds, warmup {args.warmup}"
    )
    if not collector_available():
        print("SummaryCollector not available: collector rows skipped")
    print(f"rows: {', '.join(names)}")

    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in names}
    group_names = ("mlp", "anchor", "digits", "images96", "lightning")
    groups = [[row.name for row in rows if row.group == g] for g in group_names]
    base = Path(tempfile.mkdtemp(prefix="sumlens-bench-collector-"))
    try:
        for round_index in range(args.rounds):
            for group in filter(None, groups):
                order = shuffled(group, round_index)
                conns = start_processes(row_process, args, order)
                try:
                    directory = base / str(round_index)
                    first = first_runs(conns, order, directory)
                    for name, times in conduct(conns, order, directory).items():
                        per_step, _ = split_times(times, args.warmup)
                        _, one_time = split_times(first[name], args.warmup)
                        results[name].append((per_step, one_time, times.close))
                finally:
                    for conn in conns.values():
                        conn.send(None)
                shutil.rmtree(base / str(round_index), ignore_errors=True)
            line = "  ".join(f"{n}={results[n][-1][0] * 1e3:.3f}" for n in names)
            print(f"round {round_index + 1:>2}/{args.rounds}: ms/step {line}", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)

    print()
    header = (
        f"{'row':<22} {'ms/step':>8} {'IQR ms':>15} {'overhead':>9} {'IQR':>17} "
        f"{'min..max':>17} {'one-time ms':>11} {'close ms':>9}  target"
    )
    print(header)
    print("-" * len(header))
    summary: dict[str, Any] = {}
    for row in rows:
        per_step = [r[0] for r in results[row.name]]
        q1, med, q3 = quartiles(per_step)
        one_time = statistics.median(r[1] for r in results[row.name])
        close = statistics.median(r[2] for r in results[row.name])
        entry: dict[str, Any] = {
            "ms_per_step_median": med * 1e3,
            "ms_per_step_iqr": [q1 * 1e3, q3 * 1e3],
            "one_time_ms_median": one_time * 1e3,
            "close_ms_median": close * 1e3,
        }
        overhead_text = f"{'-':>9} {'':>17} {'':>17}"
        verdict = ""
        if row.baseline is not None and row.baseline in results:
            values = [
                mine[0] / theirs[0] - 1
                for mine, theirs in zip(results[row.name], results[row.baseline], strict=True)
            ]
            o1, omed, o3 = quartiles(values)
            overhead_text = (
                f"{omed:>+8.1%} {f'{o1:+.1%}..{o3:+.1%}':>17} "
                f"{f'{min(values):+.1%}..{max(values):+.1%}':>17}"
            )
            entry.update(
                baseline=row.baseline,
                overhead_median=omed,
                overhead_iqr=[o1, o3],
                overhead_min=min(values),
                overhead_max=max(values),
            )
            if row.target is not None:
                verdict = f"<= {row.target:+.0%}: {'met' if omed <= row.target else 'MISSED'}"
                entry["target"] = row.target
        print(
            f"{row.name:<22} {med * 1e3:>8.3f} {f'{q1 * 1e3:.3f}..{q3 * 1e3:.3f}':>15} "
            f"{overhead_text} {one_time * 1e3:>11.1f} {close * 1e3:>9.1f}  {verdict}"
        )
        summary[row.name] = entry
    if results.get("lightning_sumlens") and results.get("lightning_tb"):
        ratios = [
            a[0] / b[0]
            for a, b in zip(results["lightning_tb"], results["lightning_sumlens"], strict=True)
        ]
        faster = statistics.median(ratios)
        print(
            f"Lightning: TensorBoardLogger / SumlensLogger per step: {faster:.2f}x "
            f"(target: SumlensLogger's overhead lower: {'met' if faster > 1 else 'MISSED'})"
        )
    if results.get("collector") and results.get("none"):
        across = [
            a[0] / b[0] - 1 for a, b in zip(results["collector"], results["none"], strict=True)
        ]
        print(f"collector against the hand-written loop (none): {statistics.median(across):+.1%}")
    print(
        "overhead: per-round ratio to the baseline row (none / model / digits_model), median "
        "over rounds; one-time: a fresh process's first run, construction + first steps "
        "beyond steady state (imports, kernels, graph capture)"
    )
    if args.out is not None:
        args.out.write_text(
            json.dumps(
                {
                    "config": {
                        k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()
                    },
                    "torch": torch.__version__,
                    "summary": summary,
                    "raw": {n: [list(r) for r in results[n]] for n in names},
                },
                indent=1,
            )
        )
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
