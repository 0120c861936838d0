"""What the real MindInsight 2.3.1 shows for the landscapes of ``SummaryLandscape``.

The digits CNN is trained for four epochs through ``sumlens.Model`` with a
``SummaryCollector`` that keeps the weights of epochs 1 to 4 for a landscape (and
nothing else); ``SummaryLandscape`` then computes the train landscape of that interval
(PCA plane and training path) and the result landscape (random directions), 5 x 5 each,
into the same directory: one train job, ``./digits_landscape``, probed by
``mindinsight_probe.py``. The checks: MindInsight loads it without errors, lists both
landscapes and the interval, and shows the grid, the path and the convergence points
that SummaryLandscape returned. The normalized probe output is compared with
``tests/data/mindinsight/landscape_runs.json``; regenerate it with
``SUMLENS_UPDATE_MINDINSIGHT_EXPECTED=1`` after an intended change (and review the diff).

Training and the landscape run seeded on one thread with deterministic algorithms; in
the committed file the losses and coordinates are rounded to four significant digits,
and compared within the collector test's allowance for another CPU's kernels.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from helpers.digits import DigitsCNN, batches, digits, reproducible
from helpers.mindinsight import (
    Probe,
    assert_matches_committed,
    coarse,
    event_file_names,
    mindinsight_bin,
    replace_strings,
    run_dir,
    run_probes,
    within_training_noise,
)
from torch import nn

import sumlens
from sumlens.landscape import LossLandscape, SummaryLandscape
from sumlens.metrics import Loss

pytestmark = pytest.mark.mindinsight

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
EXPECTED_JSON = REPO / "tests" / "data" / "mindinsight" / "landscape_runs.json"
TRAIN_ID = "./digits_landscape"

EPOCHS = 4
TRAIN_SAMPLES, TRAIN_BATCH = 512, 32  # 16 steps per epoch
SIZE = 5
NUM_SAMPLES = 256
INTERVAL = [1, 2, 3, 4]


def callback_fn() -> tuple[Any, ...]:
    """MindSpore's form: a Model without optimizer, the network, batches, {"Loss": ...}."""
    network = DigitsCNN()
    metrics = {"Loss": Loss()}
    x, y = digits(0)
    model = sumlens.Model(network, nn.CrossEntropyLoss(), metrics=metrics)
    return model, network, batches(x[TRAIN_SAMPLES:], y[TRAIN_SAMPLES:], TRAIN_BATCH), metrics


def train_and_draw(log_dir: Path) -> list[LossLandscape]:
    """Train with a landscape-collecting SummaryCollector, then draw both landscapes."""
    with reproducible():
        torch.manual_seed(0)
        network = DigitsCNN()
        optimizer = torch.optim.SGD(network.parameters(), lr=0.1, momentum=0.9)
        model = sumlens.Model(network, nn.CrossEntropyLoss(), optimizer)
        settings = {
            "landscape_size": SIZE,
            "unit": "epoch",
            "num_samples": NUM_SAMPLES,
            "create_landscape": {"train": True, "result": True},
            "intervals": [INTERVAL],
        }
        collector = sumlens.SummaryCollector(
            log_dir,
            collect_specified_data={"collect_landscape": settings},
            keep_default_action=False,
        )
        x, y = digits(0)
        train = batches(x[:TRAIN_SAMPLES], y[:TRAIN_SAMPLES], TRAIN_BATCH)
        model.train(EPOCHS, train, callbacks=[collector])
        return SummaryLandscape(log_dir).gen_landscapes_with_multi_process(
            callback_fn, progress=False
        )


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Probe, list[LossLandscape]]:
    exe = mindinsight_bin()
    tmp = tmp_path_factory.mktemp("mindinsight_landscape")
    base = tmp / "runs"
    landscapes = train_and_draw(run_dir(base, TRAIN_ID))
    (probe,) = run_probes(exe, [base], tmp)
    return probe, landscapes


@pytest.fixture(scope="module")
def shown(run: tuple[Probe, list[LossLandscape]]) -> dict[str, Any]:
    probe, _ = run
    if probe.returncode != 0:
        pytest.fail(probe.explain(), pytrace=False)
    return probe.data


@pytest.fixture(scope="module")
def drawn(run: tuple[Probe, list[LossLandscape]]) -> list[LossLandscape]:
    return run[1]


@pytest.fixture(scope="module")
def landscape(shown: dict[str, Any]) -> dict[str, Any]:
    return shown["jobs"][TRAIN_ID]["landscape"]


def close(shown: Any, ours: Any) -> None:
    """MindInsight's numbers (float32 on disk, 6 significant digits from the probe) vs ours."""
    np.testing.assert_allclose(np.asarray(shown, dtype=float), ours, rtol=6e-6, atol=1e-12)


def test_loads_without_errors_and_lists_both_landscapes(shown: dict[str, Any]) -> None:
    assert shown["mindinsight_log"] == {"errors": [], "warnings": []}
    job = shown["jobs"][TRAIN_ID]
    assert job["train_job"]["cache_status"] == "CACHED"
    assert job["plugins"]["plugins"]["loss_landscape"] == [
        "landscape_[1, 4]/loss_landscape",
        "landscape_[4]/loss_landscape",
    ]


def test_the_train_landscape_with_its_path(
    landscape: dict[str, Any], drawn: list[LossLandscape]
) -> None:
    assert [item["value"] for item in landscape["intervals"]["intervals"]] == [[1, 4]]
    (shown,) = landscape["interval"]["1-4"]["landscapes"]
    ours = drawn[0]
    assert ours.path is not None
    assert shown["metadata"]["decomposition"] == "PCA"
    assert (shown["metadata"]["unit"], shown["metadata"]["step_per_epoch"]) == (
        "epoch",
        TRAIN_SAMPLES // TRAIN_BATCH,
    )
    points = shown["points"]
    assert len(points["x"]) == len(points["y"]) == SIZE
    assert [len(row) for row in points["z"]] == [SIZE] * SIZE
    close(points["x"], ours.x)
    close(points["y"], ours.y)
    close(points["z"], ours.z)
    path = shown["path"]
    assert path["intervals"] == INTERVAL
    for axis, values in zip("xyz", ours.path, strict=True):
        close(path[axis], values)
    assert path["x"][-1] == path["y"][-1] == 0.0
    assert shown["convergence_point"] == [0.0, 0.0, path["z"][-1]]


def test_the_result_landscape(landscape: dict[str, Any], drawn: list[LossLandscape]) -> None:
    (shown,) = landscape["final"]["landscapes"]
    ours = drawn[1]
    assert shown["metadata"]["decomposition"] == "Random"
    assert "path" not in shown or not shown["path"]
    close(shown["points"]["x"], np.linspace(-1, 1, SIZE))
    close(shown["points"]["z"], ours.z)
    centre = SIZE // 2
    close(shown["convergence_point"], [0.0, 0.0, ours.z[centre, centre]])


def committed_view(data: dict[str, Any]) -> dict[str, Any]:
    """The probe output without file names, paths and timings; numbers rounded."""
    base = data["summary_base_dir"]
    directory = run_dir(Path(base), TRAIN_ID)
    names = {base: "<base>"}
    for i, name in enumerate(event_file_names(directory, "summary")):
        names[name] = f"<summary file #{i}>"
    job = data["jobs"][TRAIN_ID]
    view = {
        "mindinsight_log": data["mindinsight_log"],
        "train_jobs_listing": data["train_jobs_listing"],
        "plugins": job["plugins"],
        "landscape": job["landscape"],
    }
    return coarse(replace_strings(view, names))


def test_matches_committed_output(shown: dict[str, Any]) -> None:
    fresh = committed_view(shown)
    assert_matches_committed(fresh, EXPECTED_JSON, "the landscapes", within_training_noise)
