"""Hyper-parameters for the runs of :mod:`helpers.seed_groups`, as torch users record them
(``sumlens.SummaryWriter(...).add_hparams``), to group the runs by a field.

Every member but ``./lr0.01/seed3`` gets ``lr`` (its learning rate), ``seed`` and
``opt``; that one and ``./base`` have none, so grouping by ``hparam/lr`` leaves them single.
"""

from __future__ import annotations

from pathlib import Path

import sumlens
from helpers.seed_groups import MEMBERS

WITHOUT = "./lr0.01/seed3"
"""The member that records no hyper-parameters."""
BY_LR = {f"lr={lr}": [run for run in runs if run != WITHOUT] for lr, runs in MEMBERS.items()}
"""The groups of ``hparam/lr``: each one's name and members."""


def write_hparams(base: Path) -> None:
    """Add the hyper-parameters to the runs under ``base`` (a file of their own in each)."""
    for lr, runs in MEMBERS.items():
        for seed, run in enumerate(runs, start=1):
            if run == WITHOUT:
                continue
            with sumlens.SummaryWriter(str(base / run[2:])) as writer:
                writer.add_hparams({"lr": float(lr), "seed": seed, "opt": "adam"}, {})
