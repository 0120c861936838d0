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
  (``add_scalar`` / ``add_histogram``);
* ``model``: ``sumlens.Model.train`` without recording (baseline of the collector rows);
* ``collector``: ``Model.train`` + ``SummaryCollector(collect_freq=1,
  collect_tensor_freq=10)``: the workload above (loss and learning rate every step,
  the first 5 parameters' histograms every 10 steps) plus the graph and lineage;
* ``collector_f10``: ``SummaryCollector(collect_freq=10)`` with its defaults (loss and
  learning rate every 10 steps, histograms at most 20 times): what most users run;
* ``digits_model`` / ``digits_collector``: a small CNN on scikit-learn's ``load_digits``
  (8x8 images, batch 32) through ``Model.train``, without and with the default
  ``SummaryCollector(collect_freq=10)`` (also collects the input images).

The collector rows run only when ``sumlens.SummaryCollector`` exists.

**Method.** This machine's speed drifts by tens of percent for seconds at a time (other
tenants), so a row is compared only with a baseline run made right beside it: every round
runs, for each row, the row and its baseline back to back, in an order that alternates
from round to round (baseline first, then row first), ``--rounds`` >= 15 by default. Each
run has a fresh network (same seed), a fresh summary directory and ``gc.collect()``
before it, and stamps ``perf_counter`` after every step (for ``Model`` rows with a tiny
callback placed last, in the baseline too). Its *per-step time* is the mean over steps
``--warmup + 1 .. steps`` (20 by default: the one-time costs, such as the graph capture
at step 1, fall before); its *one-time cost* is the time of the first ``--warmup`` steps
(plus the writer's construction) beyond ``warmup`` steady steps; its *close* time is what
closing the writer takes after the last step (writing what is still queued). A row's
overhead in a round is its per-step time over that of the baseline run beside it, minus
1; reported are the median over rounds, the interquartile range and min..max, and the
medians of the times (a baseline's over all its runs).

Targets (issue 6): sumlens <= +10% per step on the MLP; the digits CNN with the default
collector at collect_freq=10 <= +5% per step. Anchor: torch's writer +522% (2 threads).

Usage: ``.venv/bin/python benchmarks/bench_collector.py [--rounds 15] [--steps 2000]
[--threads 2] [--quick] [--rows none,sumlens_record,...] [--out FILE.json]``.
``--quick`` (smoke run): 3 rounds of 300 steps, digits 200 steps.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

import sumlens
from sumlens import Callback, Model, RunContext, SummaryRecord

HISTOGRAM_EVERY = 10
HISTOGRAM_PARAMS = 5
MLP_BATCH = 64
DIGITS_BATCH = 32


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


# ---------------------------------------------------------------- one run


@dataclass
class RunTimes:
    setup: float  # writer construction
    stamps: list[float]  # perf_counter after each step (index 0: the start of step 1)
    close: float  # closing the writer after the last step


class StepClock(Callback):
    """Stamps ``perf_counter`` after every training step (placed last in the list)."""

    def __init__(self, stamps: list[float]) -> None:
        self.stamps = stamps

    def on_train_step_end(self, run_context: RunContext) -> None:
        self.stamps.append(time.perf_counter())


def hand_loop(data: list, steps: int, logdir: Path, writer: str) -> RunTimes:
    """The hand-written loop, recording through ``writer`` (none | sumlens | torch)."""
    net = build_mlp()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    named = list(net.named_parameters())[:HISTOGRAM_PARAMS]
    t0 = time.perf_counter()
    record: Any = None
    tb: Any = None
    histograms = writer != "sumlens_scalars"
    if writer in ("sumlens", "sumlens_scalars"):
        record = SummaryRecord(logdir)
    elif writer == "torch":
        from torch.utils.tensorboard import SummaryWriter

        tb = SummaryWriter(str(logdir))
    t1 = time.perf_counter()
    stamps = [t1]
    n = len(data)
    net.train()
    for step in range(1, steps + 1):
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
        stamps.append(time.perf_counter())
    if record is not None:
        record.close()
    if tb is not None:
        tb.close()
    t_end = time.perf_counter()
    return RunTimes(t1 - t0, stamps, t_end - stamps[-1])


def model_run(
    net: nn.Module,
    data: Any,
    logdir: Path,
    collect_freq: int | None,
    tensor_freq: int | None = None,
) -> RunTimes:
    """``Model.train`` for one epoch over ``data``, with a collector when ``collect_freq``."""
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    model = Model(net, nn.CrossEntropyLoss(), opt)
    t0 = time.perf_counter()
    callbacks: list[Callback] = []
    if collect_freq is not None:
        collector = sumlens.SummaryCollector(
            str(logdir), collect_freq=collect_freq, collect_tensor_freq=tensor_freq
        )
        callbacks.append(collector)
    t1 = time.perf_counter()
    stamps = [t1]
    callbacks.append(StepClock(stamps))
    model.train(1, data, callbacks=callbacks)  # the collector closes its record on exit
    t_end = time.perf_counter()
    return RunTimes(t1 - t0, stamps, t_end - stamps[-1])


# ---------------------------------------------------------------- rows


@dataclass(frozen=True)
class Row:
    name: str
    baseline: str | None
    needs_collector: bool
    run: Callable[[Path], RunTimes]
    target: float | None = None  # maximum overhead over the baseline


def make_rows(args: argparse.Namespace) -> list[Row]:
    mlp = mlp_data(args.batches)
    steps = args.steps
    mlp_steps = Cycled(mlp, steps)
    rows = [
        Row("none", None, False, lambda d: hand_loop(mlp, steps, d, "none")),
        Row("sumlens_record", "none", False, lambda d: hand_loop(mlp, steps, d, "sumlens"), 0.10),
        Row(
            "sumlens_scalars",
            "none",
            False,
            lambda d: hand_loop(mlp, steps, d, "sumlens_scalars"),
        ),
        Row("torch_writer", "none", False, lambda d: hand_loop(mlp, steps, d, "torch")),
        Row("model", None, True, lambda d: model_run(build_mlp(), mlp_steps, d, None)),
        Row(
            "collector",
            "model",
            True,
            lambda d: model_run(build_mlp(), mlp_steps, d, 1, HISTOGRAM_EVERY),
            0.10,
        ),
        Row("collector_f10", "model", True, lambda d: model_run(build_mlp(), mlp_steps, d, 10)),
    ]
    digits = Cycled(digits_data(), args.digits_steps)

    def cnn() -> nn.Module:
        torch.manual_seed(1)
        return DigitsCNN()

    rows += [
        Row("digits_model", None, True, lambda d: model_run(cnn(), digits, d, None)),
        Row(
            "digits_collector",
            "digits_model",
            True,
            lambda d: model_run(cnn(), digits, d, 10),
            0.05,
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


# ---------------------------------------------------------------- statistics


def split_times(times: RunTimes, warmup: int) -> tuple[float, float]:
    """(steady per-step time, one-time cost) of a run."""
    stamps = times.stamps
    steps = len(stamps) - 1
    warmup = min(warmup, steps // 2)
    per_step = (stamps[-1] - stamps[warmup]) / (steps - warmup)
    one_time = times.setup + (stamps[warmup] - stamps[0]) - warmup * per_step
    return per_step, one_time


def quartiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) < 2:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--digits-steps", type=int, default=1000)
    parser.add_argument("--batches", type=int, default=50, help="distinct MLP batches")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rows", default="", help="comma-separated row names (default: all)")
    parser.add_argument("--quick", action="store_true", help="3 rounds of 300 steps")
    parser.add_argument("--out", type=Path, default=None, help="write raw timings as JSON")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.steps, args.digits_steps = 3, 300, 200
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
    ratios: dict[str, list[float]] = {row.name: [] for row in rows if row.baseline in names}
    by_name = {row.name: row for row in rows}
    pairs = [(by_name[row.baseline], row) for row in rows if row.name in ratios]
    lone = [row for row in rows if row.baseline is None and not any(b is row for b, _ in pairs)]
    base = Path(tempfile.mkdtemp(prefix="sumlens-bench-collector-"))

    def measure(row: Row, round_index: int) -> float:
        logdir = base / f"{row.name}-{round_index}-{len(results[row.name])}"
        gc.collect()
        times = row.run(logdir)
        per_step, one_time = split_times(times, args.warmup)
        results[row.name].append((per_step, one_time, times.close))
        shutil.rmtree(logdir, ignore_errors=True)
        return per_step

    try:
        for round_index in range(args.rounds):
            line = []
            for k, (baseline, row) in enumerate(pairs):
                if (round_index + k) % 2 == 0:
                    theirs, mine = measure(baseline, round_index), measure(row, round_index)
                else:
                    mine, theirs = measure(row, round_index), measure(baseline, round_index)
                ratios[row.name].append(mine / theirs - 1)
                line.append(f"{row.name}={mine * 1e3:.3f} ({mine / theirs - 1:+.1%})")
            for row in lone:
                line.append(f"{row.name}={measure(row, round_index) * 1e3:.3f}")
            print(
                f"round {round_index + 1:>2}/{args.rounds}: ms/step " + "  ".join(line), flush=True
            )
    finally:
        shutil.rmtree(base, ignore_errors=True)

    print()
    header = (
        f"{'row':<17} {'ms/step':>8} {'IQR ms':>15} {'overhead':>9} {'IQR':>17} "
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
        if row.name in ratios:
            values = ratios[row.name]
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
            f"{row.name:<17} {med * 1e3:>8.3f} {f'{q1 * 1e3:.3f}..{q3 * 1e3:.3f}':>15} "
            f"{overhead_text} {one_time * 1e3:>11.1f} {close * 1e3:>9.1f}  {verdict}"
        )
        summary[row.name] = entry
    if results.get("collector") and results.get("none"):
        across = statistics.median(r[0] for r in results["collector"]) / statistics.median(
            r[0] for r in results["none"]
        )
        print(f"collector against the hand-written loop (none), medians: {across - 1:+.1%}")
    print(
        "overhead: ratio to the baseline run beside it (none / model / digits_model), median "
        "over rounds; one-time: construction + first steps beyond steady state (graph capture)"
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
