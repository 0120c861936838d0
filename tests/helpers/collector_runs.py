"""Runs recorded by ``sumlens.SummaryCollector`` during real (brief) training, for the
dashboard's browser tests: the digits CNN (tests/digits.py) trained one epoch on a quarter
of scikit-learn's digits at each of two learning rates, then evaluated.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

import sumlens
from helpers.digits import DigitsCNN, batches, digits, split

COLLECTOR_RATES = {"./collected/lr_0.05": 0.05, "./collected/lr_0.2": 0.2}
"""Runs ``write_collector_runs`` trains, with their learning rates."""


def write_collector_runs(base: Path) -> dict[str, tuple[float, float]]:
    """Train the digits CNN briefly with ``sumlens.Model`` and a default ``SummaryCollector``
    at each of ``COLLECTOR_RATES``, then evaluate it; {run: (learning rate, accuracy)}."""
    (train_x, train_y), (test_x, test_y) = split(*digits(), train_fraction=0.25)
    found = {}
    for run, rate in COLLECTOR_RATES.items():
        torch.manual_seed(0)
        net = DigitsCNN()
        model = sumlens.Model(
            net,
            loss_fn=nn.CrossEntropyLoss(),
            optimizer=torch.optim.SGD(net.parameters(), lr=rate),
            metrics={"accuracy": sumlens.metrics.Accuracy()},
        )
        collector = sumlens.SummaryCollector(base / run[2:], collect_freq=2)
        model.train(1, batches(train_x, train_y, 64), callbacks=[collector])
        result = model.eval(batches(test_x[:200], test_y[:200], 100), callbacks=[collector])
        found[run] = (rate, float(result["accuracy"]))
    return found
