"""Objectives and runs shared by the landscape tests (module level: worker processes import it).

The data are the first ``SAMPLES`` scikit-learn digits in batches of ``BATCH``; the
network is the shared digits CNN. ``COUNT_DIR_ENV`` names a directory where
:class:`CountingLoss` leaves one byte per loss call, in every process, which lets the
resume tests count the points a run really evaluated (:func:`points_evaluated`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch
from torch import nn

import sumlens
from helpers.digits import DigitsCNN, batches, digits
from sumlens.metrics import Loss

SAMPLES = 256
BATCH = 32
TRAIN_SAMPLES = 512
EPOCHS = 4
COUNT_DIR_ENV = "SUMLENS_TEST_LANDSCAPE_COUNT_DIR"


def digit_batches() -> list[tuple[torch.Tensor, torch.Tensor]]:
    x, y = digits(0)
    return batches(x[:SAMPLES], y[:SAMPLES], BATCH)


def mindspore_style() -> tuple[Any, ...]:
    """MindSpore's 4-tuple: Model(network, loss, metrics) without optimizer."""
    network = DigitsCNN()
    metrics = {"Loss": Loss()}
    model = sumlens.Model(network, nn.CrossEntropyLoss(), metrics=metrics)
    return model, network, digit_batches(), metrics


def plain() -> tuple[Any, ...]:
    """The PyTorch 3-tuple."""
    return DigitsCNN(), digit_batches(), nn.CrossEntropyLoss()


class CountingLoss(nn.Module):
    """Cross-entropy that also appends a byte to ``$COUNT_DIR_ENV/<pid>`` per call."""

    def __init__(self) -> None:
        super().__init__()
        self.directory = os.environ[COUNT_DIR_ENV]

    def forward(self, outputs: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        with open(os.path.join(self.directory, str(os.getpid())), "ab") as handle:
            handle.write(b".")
        return nn.functional.cross_entropy(outputs, labels)


def counting() -> tuple[Any, ...]:
    return DigitsCNN(), digit_batches(), CountingLoss()


def points_evaluated(directory: Path) -> int:
    """Points evaluated so far in every process (counts then forgotten).

    All ``SAMPLES`` fit one pass and ``SAMPLES // BATCH`` (8) batches are too few for
    the evaluator to vmap the loss, so it calls the loss once per batch and point.
    """
    calls = 0
    for path in directory.iterdir():
        calls += path.stat().st_size
        path.unlink()
    per_point = SAMPLES // BATCH
    return -(-calls // per_point)  # a point a killed worker had begun counts as evaluated


def trained_states(steps: int = 6) -> list[dict[str, torch.Tensor]]:
    """State dicts of the digits CNN after each of ``steps`` SGD steps (seeded)."""
    torch.manual_seed(0)
    network = DigitsCNN()
    optimizer = torch.optim.SGD(network.parameters(), lr=0.1, momentum=0.9)
    x, y = digits(1)
    states = []
    for images, labels in batches(x[: steps * 64], y[: steps * 64], 64):
        optimizer.zero_grad()
        nn.functional.cross_entropy(network(images), labels).backward()
        optimizer.step()
        states.append({k: v.detach().clone() for k, v in network.state_dict().items()})
    return states


def collector_run(summary_dir: Path, landscape_size: int = 5, intervals: Any = None) -> Path:
    """Train the CNN ``EPOCHS`` epochs with a SummaryCollector that keeps landscape weights."""
    torch.manual_seed(0)
    network = DigitsCNN()
    optimizer = torch.optim.SGD(network.parameters(), lr=0.1, momentum=0.9)
    model = sumlens.Model(network, nn.CrossEntropyLoss(), optimizer)
    settings = {
        "landscape_size": landscape_size,
        "unit": "epoch",
        "num_samples": SAMPLES,
        "create_landscape": {"train": True, "result": True},
        "intervals": intervals or [[1, 2, 3, 4]],
    }
    collector = sumlens.SummaryCollector(
        summary_dir,
        collect_specified_data={"collect_landscape": settings},
        keep_default_action=False,
    )
    x, y = digits(0)
    model.train(EPOCHS, batches(x[:TRAIN_SAMPLES], y[:TRAIN_SAMPLES], BATCH), callbacks=[collector])
    return summary_dir
