"""Runs written by ``sumlens.SummaryRecord`` for comparing MindInsight's routes with ours.

Each writer makes one train job (a directory of its own) that exercises a part of what
MindInsight's REST API shows:

* :func:`write_all_plugins`: every plugin the writer has (scalars, images, histograms,
  tensors with NaN and infinities, a network graph, lineage of every kind, a dataset graph
  and both kinds of loss landscape);
* with ``max_file_size``, the same values spread over several (rotated) files;
* :func:`write_two_ranks`: ranks 0 and 1 (``$RANK``) writing the same tags into one
  directory, which MindInsight merges into one train job;
* :func:`write_resumed`: a step written again in the same file, and a training resumed
  from a checkpoint in a new file: steps go back (MindInsight's purge of replaced steps);
* :func:`write_sampled`: more values than MindInsight keeps per tag (its reservoirs);
* :func:`write_tensorboard`: TensorBoard files only, which MindInsight does not list.

Values are exact on every machine (no training), so both servers must agree exactly.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from helpers.board import rank_env
from sumlens import SummaryRecord
from sumlens.graph import from_dataloader
from sumlens.landscape import LossLandscape
from sumlens.lineage import EvaluationLineage, TrainLineage, UserDefinedInfo

STEPS = (1, 2, 3)
ROTATED_MAX_FILE_SIZE = 3400
"""Just above the graph record: the graph, steps 1-2 and step 3 each get a file."""


class Mix(nn.Module):
    """Five parameters used in one scope: MindInsight folds them into one node."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.ParameterList(nn.Parameter(torch.full((6,), 1.0 + i)) for i in range(5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.w
        return x * w[0] + w[1] * w[2] - w[3] / w[4]


class RepeatNet(nn.Module):
    """A small network whose graph has every kind of node MindInsight groups.

    Five ``relu`` calls (and additions) in one scope make aggregation scopes; the five
    parameters of ``mix`` a parameter aggregation, laid out apart; ``fc``, ``norm`` and
    ``head`` are name scopes, and the additions of a constant make constant nodes.
    """

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.norm = nn.BatchNorm1d(6)
        self.mix = Mix()
        self.head = nn.Sequential(nn.Linear(6, 3), nn.Tanh(), nn.Linear(3, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.mix(self.norm(self.fc(x)))
        for _ in range(5):
            x = torch.relu(x + 0.5)
        return self.head(x)


def _lineage(record: SummaryRecord) -> None:
    record.add_value(
        "custom_lineage_data",
        "custom",
        UserDefinedInfo({"author": "sumlens", "batch_size": 2, "lr": 0.01}),
    )
    record.add_value(
        "train_lineage",
        "train",
        TrainLineage(
            optimizer="SGD",
            learning_rate=0.05,
            loss_function="CrossEntropyLoss",
            epoch=3,
            parallel_mode="stand_alone",
            device_num=2,
            batch_size=2,
            train_dataset_size=8,
            network="RepeatNet",
            loss=0.25,
            model_path="",
            model_size=0,
        ),
    )
    record.add_value(
        "eval_lineage", "eval", EvaluationLineage(metrics={"accuracy": 0.75}, valid_dataset_size=4)
    )
    data = TensorDataset(torch.arange(16.0).reshape(8, 2), torch.arange(8) % 2)
    record.add_value("dataset_graph", "data", from_dataloader(DataLoader(data, batch_size=2)))


def _landscapes(record: SummaryRecord) -> None:
    grid = np.linspace(-1.0, 1.0, 3)
    z = np.add.outer(grid**2, grid**2) + 1.0
    record.add_value(
        "landscape",
        "landscape_[1, 3]",
        LossLandscape(
            x=grid,
            y=grid,
            z=z,
            intervals=[1, 2, 3],
            path=([0.5, 0.25, 0.0], [0.5, 0.25, 0.0], [1.5, 1.125, 1.0]),
            convergence_point=(0.0, 0.0, 1.0),
            decomposition="PCA",
            unit="step",
            step_per_epoch=1,
        ),
    )
    record.add_value(
        "landscape",
        "landscape_[3]",
        LossLandscape(
            x=grid, y=grid, z=z * 2, convergence_point=(0.0, 0.0, 2.0), decomposition="Random"
        ),
    )


def write_all_plugins(log_dir: Path, max_file_size: int | None = None) -> None:
    """Every plugin at steps 1 to 3 (graph, lineage and landscapes once)."""
    torch.manual_seed(0)
    network = RepeatNet().eval()
    rng = np.random.default_rng(7)
    with SummaryRecord(
        log_dir, network=network, max_file_size=max_file_size, raise_exception=True
    ) as record:
        _lineage(record)
        with torch.no_grad():
            network(torch.ones(2, 4))
        for step in STEPS:
            record.add_value("scalar", "loss", 1.0 / step)
            record.add_value("scalar", "nan_at_two", float("nan") if step == 2 else float(step))
            record.add_value("image", "img", rng.random((2, 3, 8, 8)).astype(np.float32))
            record.add_value("histogram", "w", rng.standard_normal(100).astype(np.float32) * step)
            record.add_value("histogram", "const", np.full(7, float(step), dtype=np.float32))
            record.add_value("tensor", "t", (np.arange(6, dtype=np.float32) * step).reshape(2, 3))
            cube = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / step
            cube[0, 0, :3] = [np.nan, np.inf, -np.inf]
            record.add_value("tensor", "cube", cube)
            if step == STEPS[-1]:
                _landscapes(record)
            record.record(step)


def write_two_ranks(log_dir: Path) -> None:
    """Ranks 0 and 1 record the same tags, with values that tell them apart."""
    records = []
    for rank in (0, 1):
        with rank_env(rank):
            records.append(SummaryRecord(log_dir, raise_exception=True))
    for rank, record in enumerate(records):
        with record:
            if rank == 0:
                record.add_value("train_lineage", "train", TrainLineage(network="Net", epoch=2))
            for step in STEPS:
                record.add_value("scalar", "loss", 10.0 * rank + step)
                record.add_value("tensor", "t", np.full((2, 2), rank + step, dtype=np.float32))
                record.add_value("histogram", "w", np.linspace(-1, 1, 20, dtype=np.float32) + rank)
                record.record(step)


def _resumed_steps(record: SummaryRecord, offset: int, steps: list[int]) -> None:
    for step in steps:
        record.add_value("scalar", "loss", float(offset + step))
        record.add_value("image", "img", np.full((1, 1, 2, 2), step / 10, np.float32))
        record.add_value("histogram", "w", np.arange(10, dtype=np.float32) * (offset + step))
        record.record(step)


def write_resumed(log_dir: Path) -> None:
    """Steps 1 to 6 and step 2 again in one file, then a second record (a later file)
    resuming at step 4 up to 8; each part adds an offset of its own to the values."""
    with SummaryRecord(log_dir, raise_exception=True) as record:
        _resumed_steps(record, 0, [1, 2, 3, 4, 5, 6])
        _resumed_steps(record, 100, [2])
    with SummaryRecord(log_dir, raise_exception=True) as record:
        _resumed_steps(record, 200, [4, 5, 6, 7, 8])


def write_sampled(log_dir: Path) -> None:
    """More steps than MindInsight keeps of images (10), histograms (50), tensors (20)."""
    with SummaryRecord(log_dir, raise_exception=True) as record:
        for step in range(1, 61):
            record.add_value("scalar", "loss", 1.0 / step)
            record.add_value("histogram", "w", np.linspace(0, 1, 30, dtype=np.float32) * step)
            if step <= 15:
                record.add_value("image", "img", np.full((1, 1, 2, 2), step / 20, np.float32))
            if step <= 25:
                record.add_value("tensor", "t", np.arange(3, dtype=np.float32) + step)
            record.record(step)


def write_tensorboard(log_dir: Path) -> None:
    """A TensorBoard run (without lineage, which would go to a MindSpore file)."""
    with SummaryRecord(log_dir, file_format="tensorboard", raise_exception=True) as record:
        for step in STEPS:
            record.add_value("scalar", "loss", 1.0 / step)
            record.record(step)


WRITERS = {
    "./sumlens_all_plugins": write_all_plugins,
    "./sumlens_rotated": lambda d: write_all_plugins(d, max_file_size=ROTATED_MAX_FILE_SIZE),
    "./sumlens_two_ranks": write_two_ranks,
    "./sumlens_resumed": write_resumed,
    "./sumlens_sampled": write_sampled,
    "./sumlens_tensorboard": write_tensorboard,
}
"""Train id -> the writer of that train job."""


def write_runs(base: Path) -> None:
    """Every run of :data:`WRITERS` under ``base``."""
    for train_id, write in WRITERS.items():
        write(base / train_id.removeprefix("./"))
