"""A learning-rate sweep as a torch user writes it: 24 runs ``torch/lr{lr}_seed{seed}``
(lr 0.1, 0.01, 0.001, 0.0001; seeds 0 to 5), each written by torch's own
``SummaryWriter`` with a few loss and accuracy points and ``add_hparams`` (which puts its
records in a sub-run named by the time, as torch does).

The shape of the sweep a user's audit served at laptop width (issue 40): names that share
a long prefix and differ in a decimal number and a seed.
"""

from __future__ import annotations

from pathlib import Path

LRS = (0.1, 0.01, 0.001, 0.0001)
SEEDS = tuple(range(6))
RUNS = [f"./torch/lr{lr}_seed{seed}" for lr in LRS for seed in SEEDS]
"""The run ids of the sweep (the time-named sub-runs of ``add_hparams`` aside)."""
STEPS = 4


def accuracy(lr: float, seed: int) -> float:
    """The final accuracy the sweep records for ``lr`` and ``seed`` (best at 0.01)."""
    return round(0.9 - 0.05 * abs(LRS.index(lr) - 1) - 0.01 * seed, 4)


def write_sweep(base: Path) -> list[str]:
    """Write the sweep under ``base``; its run ids (as :data:`RUNS`)."""
    from torch.utils.tensorboard import SummaryWriter

    for lr in LRS:
        for seed in SEEDS:
            with SummaryWriter(str(base / "torch" / f"lr{lr}_seed{seed}")) as writer:
                for step in range(STEPS):
                    writer.add_scalar("loss", (1.0 + seed / 10) / (1 + step * lr * 10), step)
                writer.add_hparams(
                    {"lr": lr, "seed": seed, "batch_size": 32, "optimizer": "sgd"},
                    {"hparam/accuracy": accuracy(lr, seed)},
                )
    return list(RUNS)
