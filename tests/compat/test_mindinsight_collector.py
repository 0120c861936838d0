"""What the real MindInsight 2.3.1 shows for a run recorded by a default ``SummaryCollector``.

A small CNN is trained for two epochs on scikit-learn's bundled digits (8x8 grey images)
through ``sumlens.Model`` with ``SummaryCollector(collect_freq=10, custom_lineage_data=...)``
and otherwise default settings, then evaluated with the same collector. The run is one
train job, ``./digits``, probed by ``mindinsight_probe.py`` (every route it knows). The
checks: the loss and ``learning_rate/auto`` scalars, the histograms of the first five
parameters, the input images, the operator graph with one scope per layer, the train and
eval lineage, the dataset graph and the custom lineage fields; and MindInsight logs no
load error. The normalized probe output is compared with
``tests/data/mindinsight/collector_runs.json``; regenerate it with
``SUMLENS_UPDATE_MINDINSIGHT_EXPECTED=1`` after an intended change (and review the diff).

Training runs seeded, on one thread, with deterministic algorithms, yet its last bits
still differ between CPUs (and between processes on one CPU); so in the committed file the
numbers that come out of training (losses, parameter histograms, accuracy) are rounded to
four significant digits, and the comparison allows for that noise (``within_training_noise``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from helpers.digits import DigitsCNN, reproducible
from helpers.mindinsight import (
    IMAGE_BYTES_KEYS,
    Probe,
    assert_matches_committed,
    coarse,
    event_file_names,
    mindinsight_bin,
    replace_strings,
    run_dir,
    run_probes,
    within_training_noise,
    without_keys,
)
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import sumlens
from sumlens.train.summary_collector import INPUT_IMAGES

pytestmark = pytest.mark.mindinsight

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
EXPECTED_JSON = REPO / "tests" / "data" / "mindinsight" / "collector_runs.json"
TRAIN_ID = "./digits"

EPOCHS = 2
TRAIN_SAMPLES, TRAIN_BATCH = 1500, 60  # 25 steps per epoch, 50 in all
VALID_BATCH = 99  # the 297 remaining digits: 3 batches
LEARNING_RATE = 0.05
COLLECT_FREQ = 10
CUSTOM_LINEAGE = {"author": "sumlens", "seed": 0}
TOTAL_STEPS = EPOCHS * TRAIN_SAMPLES // TRAIN_BATCH
COLLECTED_STEPS = [1, *range(COLLECT_FREQ, TOTAL_STEPS + 1, COLLECT_FREQ)]
LAYERS = {name: type(module).__name__ for name, module in DigitsCNN().named_children()}
FIRST_FIVE_PARAMETERS = [name for name, _ in DigitsCNN().named_parameters()][:5]


def _digits() -> tuple[torch.Tensor, torch.Tensor]:
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0  # in [0, 1]
    return images, torch.tensor(digits.target, dtype=torch.int64)


def train_and_eval(log_dir: Path) -> dict[str, float]:
    """Train and evaluate the CNN with a default collector; ``Model.eval``'s result."""
    with reproducible():
        torch.manual_seed(0)
        images, labels = _digits()
        train_loader = DataLoader(
            TensorDataset(images[:TRAIN_SAMPLES], labels[:TRAIN_SAMPLES]),
            batch_size=TRAIN_BATCH,
            shuffle=True,
            generator=torch.Generator().manual_seed(0),
        )
        valid_loader = DataLoader(
            TensorDataset(images[TRAIN_SAMPLES:], labels[TRAIN_SAMPLES:]), batch_size=VALID_BATCH
        )
        net = DigitsCNN()
        model = sumlens.Model(
            net,
            loss_fn=nn.CrossEntropyLoss(),
            optimizer=torch.optim.SGD(net.parameters(), lr=LEARNING_RATE, momentum=0.9),
            metrics={"Accuracy": sumlens.metrics.Accuracy()},
        )
        collector = sumlens.SummaryCollector(
            log_dir, collect_freq=COLLECT_FREQ, custom_lineage_data=dict(CUSTOM_LINEAGE)
        )
        model.train(EPOCHS, train_loader, callbacks=[collector])
        return model.eval(valid_loader, callbacks=[collector])


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Probe, dict[str, float]]:
    exe = mindinsight_bin()
    tmp = tmp_path_factory.mktemp("mindinsight_collector")
    base = tmp / "runs"
    result = train_and_eval(run_dir(base, TRAIN_ID))
    (probe,) = run_probes(exe, [base], tmp)
    return probe, result


@pytest.fixture(scope="module")
def shown(run: tuple[Probe, dict[str, float]]) -> dict[str, Any]:
    probe, _ = run
    if probe.returncode != 0:
        pytest.fail(probe.explain(), pytrace=False)
    return probe.data


@pytest.fixture(scope="module")
def job(shown: dict[str, Any]) -> dict[str, Any]:
    return shown["jobs"][TRAIN_ID]


@pytest.fixture(scope="module")
def lineage(shown: dict[str, Any]) -> dict[str, Any]:
    (row,) = shown["lineage"]["object"]
    assert row["summary_dir"] == TRAIN_ID
    return row


def _graph(job: dict[str, Any]) -> dict[str, Any]:
    (graph,) = [v for k, v in job["graphs"].items() if k.startswith("graph:")]
    return graph


def test_loads_without_errors_or_warnings(shown: dict[str, Any], job: dict[str, Any]) -> None:
    assert shown["mindinsight_log"] == {"errors": [], "warnings": []}
    assert list(shown["jobs"]) == [TRAIN_ID]
    assert job["train_job"]["cache_status"] == "CACHED"
    assert job["train_job"]["is_integrity"] is True


def test_scalars(job: dict[str, Any]) -> None:
    plugins = job["plugins"]["plugins"]
    assert plugins["scalar"] == ["learning_rate/auto/scalar", "loss/auto/scalar"]
    lr = job["scalars"]["learning_rate/auto/scalar"]["metadatas"]
    assert [(m["step"], m["value"]) for m in lr] == [(s, LEARNING_RATE) for s in COLLECTED_STEPS]
    loss = job["scalars"]["loss/auto/scalar"]["metadatas"]
    assert [m["step"] for m in loss] == COLLECTED_STEPS
    assert all(0 < m["value"] < 5 for m in loss)
    assert loss[-1]["value"] < loss[0]["value"]  # it learned something


def test_histograms_of_the_first_five_parameters(job: dict[str, Any]) -> None:
    tags = [f"{name}/auto/histogram" for name in FIRST_FIVE_PARAMETERS]
    assert job["plugins"]["plugins"]["histogram"] == sorted(tags)
    parameters = dict(DigitsCNN().named_parameters())
    for tag, name in zip(tags, FIRST_FIVE_PARAMETERS, strict=True):
        histograms = job["histograms"][tag]["histograms"]
        assert [h["step"] for h in histograms] == COLLECTED_STEPS, tag
        for h in histograms:
            # MindInsight re-bins into its own buckets and rounds each share of a count,
            # so the counts it shows add up to the parameter's size only within rounding
            shown = sum(bucket[2] for bucket in h["buckets"])
            assert abs(shown - parameters[name].numel()) <= len(h["buckets"]), (tag, h["step"])


def test_input_images(job: dict[str, Any]) -> None:
    assert job["plugins"]["plugins"]["image"] == ["input_data/auto/image"]
    images = job["images"]["input_data/auto/image"]
    steps = [m["step"] for m in images["metadata"]["metadatas"]]
    assert steps == COLLECTED_STEPS
    for step in steps:  # a sample of the batch: its first images, side by side
        info = images["single_image_by_step"][str(step)]
        assert (info["format"], info["width"], info["height"]) == ("PNG", 8 * INPUT_IMAGES, 8)
        assert "pixels_sha256" in info, "Pillow missing in the probe's interpreter"


def test_graph_has_one_scope_per_layer(job: dict[str, Any]) -> None:
    graph = _graph(job)
    assert [(n["name"], n["type"]) for n in graph["root"]["nodes"]] == [("Default", "name_scope")]
    children = {n["name"]: n for n in graph["children"]["Default"]["nodes"]}
    assert {name: n["type"] for name, n in children.items()} == {
        f"Default/{name}-{kind}": "name_scope" for name, kind in LAYERS.items()
    }
    operators = graph["search_op_nodes"]["names"]
    for name, kind in LAYERS.items():
        scope = f"Default/{name}-{kind}"
        assert children[scope]["subnode_count"] >= 1, scope
        assert any(op.startswith(f"{scope}/") and "-op" in op for op in operators), scope
    assert "Default/conv1-Conv2d/Conv2d-op0" in operators
    assert children["Default/conv1-Conv2d"]["output"] == ["Default/relu1-ReLU/Relu-op0"]


def test_train_and_eval_lineage(
    run: tuple[Probe, dict[str, float]], lineage: dict[str, Any], job: dict[str, Any]
) -> None:
    _, result = run
    model = lineage["model_lineage"]
    assert model["learning_rate"] == LEARNING_RATE
    assert model["optimizer"] == "SGD"
    assert model["loss_function"] == "CrossEntropyLoss"
    assert model["network"] == "DigitsCNN"
    assert (model["epoch"], model["batch_size"]) == (EPOCHS, TRAIN_BATCH)
    assert model["metric"] == {"Accuracy": pytest.approx(result["Accuracy"], rel=1e-5)}
    images, _ = _digits()
    assert model["train_dataset_count"] == TRAIN_SAMPLES
    assert model["test_dataset_count"] == len(images) - TRAIN_SAMPLES
    last_loss = job["scalars"]["loss/auto/scalar"]["metadatas"][-1]
    assert last_loss["step"] == TOTAL_STEPS
    assert model["loss"] == pytest.approx(last_loss["value"], rel=1e-5)


def test_dataset_graph(lineage: dict[str, Any], job: dict[str, Any]) -> None:
    graph = lineage["dataset_graph"]
    assert graph["op_type"] == "Batch"
    assert (graph["batch_size"], graph["shuffle"], graph["drop_last"]) == (TRAIN_BATCH, True, False)
    assert graph["sampler"]["sampler_name"] == "RandomSampler"
    (tensors,) = graph["children"]
    assert (tensors["op_type"], tensors["num_samples"]) == ("TensorDataset", TRAIN_SAMPLES)
    assert job["dataset_graph"]["dataset_graph"] == graph


def test_custom_lineage(shown: dict[str, Any], lineage: dict[str, Any]) -> None:
    assert lineage["model_lineage"]["user_defined"] == CUSTOM_LINEAGE
    customized = shown["lineage"]["customized"]
    assert customized["user_defined/author"]["type"] == "str"
    assert customized["user_defined/seed"]["type"] == "int"
    assert customized["metric/Accuracy"]["type"] == "float"


# ---------------------------------------------------------------- the committed view


def committed_view(data: dict[str, Any]) -> dict[str, Any]:
    """The probe output without what varies between runs or machines.

    Event-file names (seconds and host) become ``<summary file #i>`` / ``<lineage file
    #i>``, the base path ``<base>``; PNG byte hashes go (decoded-pixel hashes stay);
    timings go; and the numbers that come out of training are rounded (``coarse``).
    """
    base = data["summary_base_dir"]
    directory = run_dir(Path(base), TRAIN_ID)
    names = {base: "<base>"}
    for kind in ("summary", "lineage"):
        for i, name in enumerate(event_file_names(directory, kind)):
            names[name] = f"<{kind} file #{i}>"
    job = without_keys(data["jobs"][TRAIN_ID], IMAGE_BYTES_KEYS)
    view = {
        "mindinsight_log": data["mindinsight_log"],
        "train_jobs_listing": data["train_jobs_listing"],
        "job": job,
        "lineage": data["lineage"],
    }
    return coarse(replace_strings(view, names))


def test_matches_committed_output(shown: dict[str, Any]) -> None:
    fresh = committed_view(shown)
    assert_matches_committed(fresh, EXPECTED_JSON, "the collector run", within_training_noise)
