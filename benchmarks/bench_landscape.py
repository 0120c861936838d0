"""Loss-landscape speed: sumlens against the point-by-point loop of issue 7 and loss-landscapes.

Workload (issue 7): the digits CNN of ``benchmarks/digits.py`` (the tests' one), briefly
trained; a 40 x 40 grid
of the plane of two random directions (normalised per tensor, seed 0) around its
weights; the mean batch loss over the first 1,024 digits, in batches of ``--batch``.

* **baseline**: for each point, ``with torch.no_grad()``, copy ``base + a*d1 + b*d2`` into
  the parameters in place, ``net.eval()``, then the mean of the losses of the pre-made
  batch tensors (the issue's loop);
* **sumlens**: ``compute_landscape(kind="result")`` in this process, the same plane
  (checked: every height equal to the baseline's within 1e-5, relative);
* **loss-landscapes** (3.0.6, if installed): ``planar_interpolation`` over the same plane,
  40 x 40 points at the same spacing, its ``Loss`` metric on all 1,024 samples as one
  batch (the package's usual use; it keeps autograd on).

All methods run with the same torch thread count (each of ``--threads`` in turn), in
one process, in interleaved rounds; the table gives the median seconds per landscape
and the median of the per-round ratios. Results go to ``benchmarks/results/landscape.md``.

    .venv/bin/python -m benchmarks.bench_landscape           # 1 and 2 threads, batch 32 and 128
    .venv/bin/python -m benchmarks.bench_landscape --quick   # 12 x 12, one round
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import nn

from benchmarks.digits import DigitsCNN, batches, digits
from benchmarks.harness.clock import timed
from benchmarks.harness.paths import RESULTS_DIR
from sumlens.landscape import compute_landscape, grid
from sumlens.landscape.compute import numpy_state
from sumlens.landscape.directions import random_plane

RESULTS = RESULTS_DIR / "landscape.md"
SEED = 0


def trained_network() -> nn.Module:
    """The digits CNN after two seeded epochs on the digits not used for the landscape."""
    torch.manual_seed(SEED)
    network = DigitsCNN()
    optimizer = torch.optim.SGD(network.parameters(), lr=0.1, momentum=0.9)
    x, y = digits(SEED)
    for _ in range(2):
        for images, labels in batches(x[1024:], y[1024:], 64):
            optimizer.zero_grad()
            nn.functional.cross_entropy(network(images), labels).backward()
            optimizer.step()
    return network.eval()


def baseline(
    network: nn.Module,
    data: list[tuple[torch.Tensor, torch.Tensor]],
    directions: tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]],
    points: np.ndarray,
) -> np.ndarray:
    """The issue's loop: in-place weights per point, eval mode, mean of the batch losses."""
    loss_fn = nn.CrossEntropyLoss()
    params = dict(network.named_parameters())
    base = {name: p.detach().clone() for name, p in params.items()}
    d1, d2 = directions
    heights = []
    for a, b in points:
        with torch.no_grad():
            for name, p in params.items():
                p.copy_(base[name] + float(a) * d1[name] + float(b) * d2[name])
            network.eval()
            heights.append(sum(float(loss_fn(network(x), y)) for x, y in data) / len(data))
    with torch.no_grad():
        for name, p in params.items():
            p.copy_(base[name])
    return np.array(heights)


def with_sumlens(
    network: nn.Module, data: list[tuple[torch.Tensor, torch.Tensor]], size: int, samples: int
) -> np.ndarray:
    landscape = compute_landscape(
        [network.state_dict()],
        (DigitsCNN(), data, nn.CrossEntropyLoss()),
        kind="result",
        landscape_size=size,
        num_samples=samples,
        seed=SEED,
        progress=False,
    )
    return landscape.z.reshape(-1)


def loss_landscapes_runner(
    network: nn.Module,
    directions: tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]],
    x: torch.Tensor,
    y: torch.Tensor,
    size: int,
) -> Callable[[], np.ndarray] | None:
    """The same plane with loss-landscapes' ``planar_interpolation``; None if not installed."""
    try:
        import loss_landscapes
        from loss_landscapes.metrics import Loss
    except ImportError:
        return None
    d1, d2 = directions

    def moved(shift: dict[str, torch.Tensor]) -> nn.Module:
        model = DigitsCNN().eval()
        model.load_state_dict({k: v + shift.get(k, 0) for k, v in network.state_dict().items()})
        return model

    # start = base - d1 - d2; ends 2 * d_i away: steps of 2 / size, as our axis over [-1, 1]
    start = moved({k: -d1[k] - d2[k] for k in d1})
    one = moved({k: d1[k] - d2[k] for k in d1})
    two = moved({k: -d1[k] + d2[k] for k in d1})
    metric = Loss(nn.CrossEntropyLoss(), x, y)

    def run() -> np.ndarray:
        return np.asarray(
            loss_landscapes.planar_interpolation(
                start, one, two, metric, steps=size, deepcopy_model=True
            )
        ).reshape(-1)

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=40, help="points per axis")
    parser.add_argument("--samples", type=int, default=1024)
    parser.add_argument("--batch", default="32,128", help="batch sizes, comma separated")
    parser.add_argument("--threads", default="1,2", help="torch thread counts, comma separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="12 x 12, one round, no file")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.quick:
        args.size, args.rounds = 12, 1

    network = trained_network()
    x, y = digits(SEED)
    x, y = x[: args.samples], y[: args.samples]
    state = numpy_state(network.state_dict())
    v, w = random_plane(state, "tensor", SEED)  # what compute_landscape draws for seed 0
    directions = (
        {k: torch.from_numpy(a).float() for k, a in v.items()},
        {k: torch.from_numpy(a).float() for k, a in w.items()},
    )
    axis = grid.result_axis(args.size)
    points = grid.grid_points(axis, axis)
    other = loss_landscapes_runner(network, directions, x, y, args.size)

    rows = []
    for threads in [int(t) for t in args.threads.split(",")]:
        torch.set_num_threads(threads)
        for batch in [int(b) for b in args.batch.split(",")]:
            times = measure(args, network, batches(x, y, batch), directions, points, other)
            rows.append((threads, batch, times))
            for name, values in times.items():
                if values:
                    print(
                        f"threads {threads}  batch {batch:4d}  {name:16s} "
                        f"{statistics.median(values):7.2f} s "
                        f"({statistics.median(values) / len(points) * 1e3:5.2f} ms/point)  "
                        f"baseline/this {ratio(times, name):5.2f}x"
                    )
    if other is None:
        print("loss-landscapes is not installed: pip install loss-landscapes==3.0.6 to compare")
    if not args.quick:
        write_report(args, rows, len(points), other is not None)


def measure(
    args: argparse.Namespace,
    network: nn.Module,
    data: list[tuple[torch.Tensor, torch.Tensor]],
    directions: tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]],
    points: np.ndarray,
    other: Callable[[], np.ndarray] | None,
) -> dict[str, list[float]]:
    """Seconds per landscape of each method, rounds interleaved; sumlens checked each time."""
    times: dict[str, list[float]] = {"baseline": [], "sumlens": [], "loss-landscapes": []}
    for _ in range(args.rounds):
        seconds, reference = timed(lambda: baseline(network, data, directions, points))
        times["baseline"].append(seconds)
        seconds, ours = timed(lambda: with_sumlens(network, data, args.size, args.samples))
        times["sumlens"].append(seconds)
        worst = float(np.max(np.abs(ours - reference) / np.abs(reference)))
        if worst > 1e-5:
            raise SystemExit(f"sumlens differs from the baseline by {worst:.2e} (relative)")
        if other is not None:
            times["loss-landscapes"].append(timed(other)[0])
    return times


def ratio(times: dict[str, list[float]], name: str) -> float:
    """The median over rounds of baseline time / this method's time (same round)."""
    return statistics.median(b / t for b, t in zip(times["baseline"], times[name], strict=True))


def write_report(
    args: argparse.Namespace,
    rows: list[tuple[int, int, dict[str, list[float]]]],
    points: int,
    with_other: bool,
) -> None:
    lines = [
        "# Loss landscape: sumlens vs the point-by-point loop and loss-landscapes",
        "",
        f"`.venv/bin/python -m benchmarks.bench_landscape --threads {args.threads} "
        f"--rounds {args.rounds}`: {args.size} x {args.size} grid = {points} points, "
        f"{args.samples} digits, interleaved rounds, medians; {platform.machine()}, "
        f"{os.cpu_count()} CPUs, torch {torch.__version__}; every method with the same "
        "torch thread count.",
        "",
        "| threads | batch | method | s per landscape | ms per point | baseline / method |",
        "|---:|---:|---|---:|---:|---:|",
    ]
    for threads, batch, times in rows:
        for name, values in times.items():
            if values:
                median = statistics.median(values)
                lines.append(
                    f"| {threads} | {batch} | {name} | {median:.2f} | "
                    f"{median / points * 1e3:.2f} | {ratio(times, name):.2f}x |"
                )
    if not with_other:
        lines += ["", "loss-landscapes was not installed for this run."]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
