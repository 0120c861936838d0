"""Per-step overhead of ``sumlens.Model.train`` against the equivalent hand-written loop.

Both contenders train the same network (same initial weights) on the same list of batches
with the same optimizer: forward, loss, backward, ``optimizer.step()``,
``optimizer.zero_grad(set_to_none=True)`` per batch. ``Model.train`` runs without
callbacks. Torch threads are fixed (``--threads``, default 1) so the comparison is not
dominated by thread-pool noise.

The two run interleaved: each pair runs both once (which one goes first alternates), and
the overhead of a pair is ``model_time / loop_time - 1``. Reported: the median overhead
over the pairs, its spread (interquartile range, min..max) and the absolute overhead per
step. Target: median <= 5% on the default workload.

Workloads (``--workload``):

* ``mlp`` (default): 64 -> 256 -> 256 -> 10 MLP, batch 64, 100 batches per epoch;
* ``tiny``: 4 -> 8 -> 2, batch 8 -- almost no compute, so it shows the driver's fixed
  per-step cost in microseconds (the percentage is not meaningful here).

Usage: ``.venv/bin/python -m benchmarks.bench_train_loop [--pairs 21] [--epochs 2]``;
``--out FILE`` also writes the raw timings as JSON.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
from pathlib import Path

import torch
from torch import nn

from benchmarks.harness.clock import timed
from benchmarks.harness.rounds import rotated
from benchmarks.harness.stats import quartiles
from sumlens.train import Model

WORKLOADS = {
    # name: (layer sizes, batch size, batches per epoch)
    "mlp": ((64, 256, 256, 10), 64, 100),
    "tiny": ((4, 8, 2), 8, 200),
}


def build_net(sizes: tuple[int, ...], seed: int) -> nn.Module:
    torch.manual_seed(seed)
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def build_data(sizes: tuple[int, ...], batch: int, n_batches: int) -> list[tuple]:
    gen = torch.Generator().manual_seed(0)
    return [
        (
            torch.randn(batch, sizes[0], generator=gen),
            torch.randint(0, sizes[-1], (batch,), generator=gen),
        )
        for _ in range(n_batches)
    ]


def run_model(sizes: tuple[int, ...], data: list[tuple], epochs: int) -> float:
    net = build_net(sizes, seed=1)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    model = Model(net, nn.CrossEntropyLoss(), opt)
    seconds, _ = timed(lambda: model.train(epochs, data))
    return seconds


def run_loop(sizes: tuple[int, ...], data: list[tuple], epochs: int) -> float:
    net = build_net(sizes, seed=1)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    def loop() -> None:
        net.train()
        for _ in range(epochs):
            for x, y in data:
                loss = loss_fn(net(x), y)
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)

    seconds, _ = timed(loop)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=21, help="interleaved pairs (>= 15)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="mlp")
    parser.add_argument("--out", type=Path, default=None, help="JSON results file")
    args = parser.parse_args()
    if args.pairs < 15:
        parser.error("--pairs must be >= 15")
    torch.set_num_threads(args.threads)
    sizes, batch, n_batches = WORKLOADS[args.workload]
    data = build_data(sizes, batch, n_batches)
    steps = n_batches * args.epochs

    for _ in range(2):  # warm-up, untimed
        run_model(sizes, data, 1)
        run_loop(sizes, data, 1)

    model_times: list[float] = []
    loop_times: list[float] = []
    overheads: list[float] = []
    contenders = {"model": run_model, "loop": run_loop}
    for pair in range(args.pairs):  # which one goes first alternates
        times = {
            name: contenders[name](sizes, data, args.epochs)
            for name in rotated(list(contenders), pair)
        }
        t_model, t_loop = times["model"], times["loop"]
        model_times.append(t_model)
        loop_times.append(t_loop)
        overheads.append(t_model / t_loop - 1.0)

    q1, median, q3 = quartiles(overheads)
    per_step_us = [(m - lp) / steps * 1e6 for m, lp in zip(model_times, loop_times, strict=True)]
    print(
        f"workload={args.workload} pairs={args.pairs} epochs={args.epochs} steps/run={steps} "
        f"threads={args.threads} torch={torch.__version__}"
    )
    print(
        f"hand-written loop: median {statistics.median(loop_times) * 1e3:.1f} ms/run "
        f"({statistics.median(loop_times) / steps * 1e6:.1f} us/step)"
    )
    print(
        f"Model.train      : median {statistics.median(model_times) * 1e3:.1f} ms/run "
        f"({statistics.median(model_times) / steps * 1e6:.1f} us/step)"
    )
    print(
        f"overhead: median {median * 100:+.2f}%  IQR [{q1 * 100:+.2f}%, {q3 * 100:+.2f}%]  "
        f"range [{min(overheads) * 100:+.2f}%, {max(overheads) * 100:+.2f}%]  "
        f"= {statistics.median(per_step_us):+.1f} us/step (median)"
    )
    print("target: median overhead <= 5%:", "PASS" if median <= 0.05 else "FAIL")

    if args.out is None:
        return
    record = {
        "workload": args.workload,
        "pairs": args.pairs,
        "epochs": args.epochs,
        "steps_per_run": steps,
        "threads": args.threads,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "model_seconds": model_times,
        "loop_seconds": loop_times,
        "overhead_median": median,
        "overhead_iqr": [q1, q3],
        "overhead_range": [min(overheads), max(overheads)],
        "overhead_us_per_step_median": statistics.median(per_step_us),
    }
    args.out.write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
