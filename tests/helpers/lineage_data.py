"""The lineage runs of the lineage view's tests (API and browser).

The golden MindSpore runs with their known lineage (``GOLDEN``), runs our ``SummaryRecord``
writes at three learning rates (``WRITTEN``) and one named like markup (``XSS_RUN``).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from helpers.board import get_json
from sumlens import SummaryRecord
from sumlens.lineage import DatasetGraph, EvaluationLineage, TrainLineage, UserDefinedInfo

GOLDEN = {
    # run: (learning rate, accuracy, train dataset size, evaluation dataset size)
    "./all_plugins": (0.01, 0.5, 6, 4),
    "./collector": (0.01, 0.375, 8, 8),
    "./landscape": (0.05, None, 8, None),
}
WRITTEN = {
    # run: (learning rate, accuracy, pipeline batch size)
    "./sweep/lr_0.1": (0.1, 0.72, 32),
    "./sweep/lr_0.01": (0.01, 0.91, 64),
    "./sweep/lr_0.001": (0.001, 0.64, 64),
}
TRAIN_SIZE, EVAL_SIZE = 60000, 10000
XSS_RUN = "./<img src=x onerror=alert(1)>"
XSS_LINEAGE = (0.5, 0.1, 8)


def pipeline(batch_size: int) -> DatasetGraph:
    """MnistDataset -> Shuffle -> Batch(batch_size)."""
    source = DatasetGraph("MnistDataset", {"dataset_dir": "/data/mnist", "num_samples": 60000})
    shuffle = DatasetGraph("Shuffle", {"buffer_size": 1000}, [source])
    return DatasetGraph("Batch", {"batch_size": batch_size, "drop_remainder": True}, [shuffle])


def write_lineage_run(
    directory: Path, learning_rate: float, accuracy: float, batch_size: int
) -> None:
    """A run of three loss points and its lineage (see ``WRITTEN``)."""
    with SummaryRecord(directory) as record:
        for step in (1, 2, 3):
            record.add_value("scalar", "loss", learning_rate / step)
            record.record(step)
        train = TrainLineage(
            optimizer="SGD",
            learning_rate=learning_rate,
            loss_function="CrossEntropyLoss",
            epoch=3,
            batch_size=batch_size,
            train_dataset_path="/data/mnist",
            train_dataset_size=TRAIN_SIZE,
            network="LeNet5",
            loss=0.25,
        )
        record.add_value("train_lineage", "train_lineage", train)
        evaluation = EvaluationLineage(metrics={"accuracy": accuracy}, valid_dataset_size=EVAL_SIZE)
        record.add_value("eval_lineage", "eval_lineage", evaluation)
        record.add_value("custom_lineage_data", "custom_lineage_data", UserDefinedInfo({"seed": 7}))
        record.add_value("dataset_graph", "dataset_graph", pipeline(batch_size))
        record.record(4)


def write_lineage_base(base: Path, golden_dir: Path) -> None:
    """The golden runs, the ``WRITTEN`` runs and a run named like markup (``XSS_RUN``)."""
    for name in GOLDEN:
        shutil.copytree(golden_dir / name[2:], base / name[2:])
    for run, (rate, accuracy, batch) in WRITTEN.items():
        write_lineage_run(base / run[2:], rate, accuracy, batch)
    write_lineage_run(base / XSS_RUN[2:], *XSS_LINEAGE)


def lineage_ready(url: str, runs: list[str]) -> dict[str, Any] | None:
    """The /lineage table once it lists ``runs`` (None before)."""
    table = get_json(f"{url}/api/v1/lineage")
    return table if table and set(runs) <= set(table["runs"]) else None
