"""Runs of 3 seeds x 2 learning rates (``./lr0.1/seed1`` ...) and the numpy reference of
their groups, for the groups route and page tests.

Each run's ``loss`` is a decay that depends on the learning rate plus seeded noise. Two
members lack steps: ``./lr0.01/seed3`` has no point at every third step and
``./lr0.1/seed2`` stops at step 150, so the groups' member counts vary by step. ``./base``
matches no pattern of the tests: it stays single.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from sumlens import SummaryRecord

STEPS = 200
LRS = ("0.1", "0.01")
SEEDS = (1, 2, 3)
MEMBERS = {lr: [f"./lr{lr}/seed{seed}" for seed in SEEDS] for lr in LRS}
SINGLE = "./base"
REGEX = r"lr([0-9.]+)/seed\d"


def _steps(run: str) -> np.ndarray:
    steps = np.arange(1, STEPS + 1)
    if run == "./lr0.01/seed3":
        return steps[steps % 3 != 0]
    if run == "./lr0.1/seed2":
        return steps[steps <= 150]
    return steps


def losses(run: str) -> tuple[np.ndarray, np.ndarray]:
    """The steps and loss values of ``run`` as read back (float32, as the record keeps them)."""
    steps = _steps(run)
    seed = sum(map(ord, run))
    noise = np.random.default_rng(seed).normal(0.0, 0.1, steps.size)
    rate = float(run.split("/")[1][2:]) if run != SINGLE else 0.5
    values = np.exp(-rate * steps / 20.0) + noise
    return steps, values.astype(np.float32).astype(np.float64)


def write_runs(base: Path) -> list[str]:
    """Write every run under ``base``; their ids."""
    runs = [*MEMBERS["0.1"], *MEMBERS["0.01"], SINGLE]
    for run in runs:
        steps, values = losses(run)
        with SummaryRecord(base / run[2:]) as record:
            for step, value in zip(steps.tolist(), values.tolist(), strict=True):
                record.add_value("scalar", "loss", value)
                record.record(step)
    return runs


def grid(
    runs: list[str], smooth: Callable[[np.ndarray], np.ndarray] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The members' values on the union of their steps (NaN where one lacks a step), each
    member passed through ``smooth(values)`` first when given."""
    every = np.unique(np.concatenate([losses(run)[0] for run in runs]))
    table = np.full((len(runs), every.size), np.nan)
    for row, run in enumerate(runs):
        steps, values = losses(run)
        table[row, np.searchsorted(every, steps)] = smooth(values) if smooth else values
    return every, table
