"""What the real MindInsight 2.3.1 shows for a run written by ``sumlens.SummaryWriter`` in
MindSpore's format: its scalars, images, histograms and lineage (hyper-parameters and
metrics from ``add_hparams``), loaded without an error; what MindSpore's format cannot
hold (text) goes to a TensorBoard file beside, which MindInsight leaves alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.mindinsight import mindinsight_bin, run_dir, run_probes

from sumlens import SummaryWriter

pytestmark = pytest.mark.mindinsight

TRAIN_ID = "./writer"
STEPS = [0, 5, 10]
HPARAMS = {"lr": 0.01, "optimizer": "Adam", "batch_size": 32, "depth": 4}


@pytest.fixture(scope="module")
def shown(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("mindinsight_writer")
    base = tmp / "runs"
    rng = np.random.default_rng(0)
    with SummaryWriter(run_dir(base, TRAIN_ID), file_format="mindspore") as writer:
        for step in STEPS:
            writer.add_scalar("loss", 1.0 / (step + 1), step)
            writer.add_histogram("weights", rng.normal(size=200), step)
            writer.add_image("input", np.full((3, 4, 5), step / 10, dtype=np.float32), step)
        writer.add_text("notes", "trained by **SummaryWriter**", 10)
        writer.add_hparams(HPARAMS, {"accuracy": 0.75})
    (probe,) = run_probes(mindinsight_bin(), [base], tmp)
    if probe.returncode != 0:
        pytest.fail(probe.explain(), pytrace=False)
    return probe.data


def test_loads_without_errors(shown: dict[str, Any]) -> None:
    assert shown["mindinsight_log"]["errors"] == []
    assert list(shown["jobs"]) == [TRAIN_ID]


def test_scalars_images_histograms(shown: dict[str, Any]) -> None:
    job = shown["jobs"][TRAIN_ID]
    plugins = job["plugins"]["plugins"]
    assert plugins["scalar"] == ["accuracy/scalar", "loss/scalar"]
    loss = job["scalars"]["loss/scalar"]["metadatas"]
    assert [(m["step"], m["value"]) for m in loss] == [
        (s, pytest.approx(1.0 / (s + 1), rel=1e-5))
        for s in STEPS  # the probe keeps 6 digits
    ]
    assert plugins["histogram"] == ["weights/histogram"]
    assert [h["step"] for h in job["histograms"]["weights/histogram"]["histograms"]] == STEPS
    assert plugins["image"] == ["input/image"]
    images = job["images"]["input/image"]["metadata"]["metadatas"]
    assert [m["step"] for m in images] == STEPS


def test_hyper_parameters_and_metrics_are_lineage(shown: dict[str, Any]) -> None:
    (row,) = shown["lineage"]["object"]
    model = row["model_lineage"]
    assert model["learning_rate"] == pytest.approx(0.01)
    assert model["optimizer"] == "Adam"
    assert model["batch_size"] == 32
    assert model["metric"] == {"accuracy": pytest.approx(0.75)}
    assert model["user_defined"] == {
        "lr": 0.01,
        "optimizer": "Adam",
        "batch_size": 32,
        "depth": 4,
    }


def test_text_waits_in_a_tensorboard_file_beside(shown: dict[str, Any]) -> None:
    base = Path(shown["summary_base_dir"])
    names = [p.name for p in (base / TRAIN_ID).iterdir()]
    assert any(".tfevents." in name for name in names)
