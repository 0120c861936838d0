"""What the real MindInsight 2.3.1 shows for files written by ``sumlens.SummaryRecord``.

One summary base dir holds a copy of MindSpore's golden ``all_plugins`` run and three runs
written by sumlens, each a train job of its own:

* ``sumlens_all_plugins``: the inputs of the golden run (no network graph yet, so graphs
  are not compared), which must show exactly as the golden run does;
* ``sumlens_rotated``: the same inputs with a small ``max_file_size``, so the steps are
  spread over several files; every step must show exactly once, as in the unrotated run;
* ``sumlens_two_writers``: two records opened in the same second in the same directory,
  writing distinct tags; both files and all tags must show.

MindInsight is started once over that dir by ``mindinsight_probe.py`` (a copy of
``shared/tools/mindinsight_probe.py``), which queries every route and writes one
normalized JSON. Besides the comparisons with the golden run, the probe output of our
runs is compared with ``tests/data/mindinsight/sumlens_runs.json`` so that a format
regression is caught even if the comparison code here changes. After an intended change,
regenerate that file with ``SUMLENS_UPDATE_MINDINSIGHT_EXPECTED=1`` (and review the diff).

MindInsight is found through ``$MINDINSIGHT_BIN``, which ``make test`` always sets (the
``mindinsight`` target installs it into ``~/.cache/sumlens/mindinsight-venv``).
"""

from __future__ import annotations

import filecmp
import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.mindinsight import (
    IMAGE_BYTES_KEYS,
    PROBE,
    Probe,
    assert_matches_committed,
    assert_same,
    event_file_names,
    mindinsight_bin,
    replace_strings,
    run_dir,
    run_probes,
    without_keys,
)

from sumlens import SummaryRecord
from sumlens.lineage import EvaluationLineage, TrainLineage, UserDefinedInfo

pytestmark = pytest.mark.mindinsight

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SHARED_PROBE = REPO.parent / "shared" / "tools" / "mindinsight_probe.py"
EXPECTED_JSON = REPO / "tests" / "data" / "mindinsight" / "sumlens_runs.json"

GOLDEN = "./all_plugins"
OURS = "./sumlens_all_plugins"
ROTATED = "./sumlens_rotated"
TWO_WRITERS = "./sumlens_two_writers"
OUR_JOBS = (OURS, ROTATED, TWO_WRITERS)
LINEAGE_ROTATED = "./sumlens_lineage_rotated"

STEPS = (1, 2, 3)
ROTATED_MAX_FILE_SIZE = 1200
"""One step of the all_plugins inputs is about 840 bytes: one step per file."""
LINEAGE_ROTATED_MAX_FILE_SIZE = 150
"""Below the three lineage records together (264 bytes): the lineage file rotates too."""
TENSOR_PLUGINS = ("scalar", "image", "histogram", "tensor")


# ---------------------------------------------------------------- writing the runs


def _lineage_values() -> list[tuple[str, Any]]:
    """The lineage of the golden all_plugins run (its README), as sumlens builders."""
    return [
        ("custom_lineage_data", UserDefinedInfo({"author": "golden", "batch_size": 2, "lr": 0.01})),
        (
            "train_lineage",
            TrainLineage(
                optimizer="Momentum",
                learning_rate=0.01,
                loss_function="SoftmaxCrossEntropyWithLogits",
                epoch=1,
                parallel_mode="stand_alone",
                device_num=1,
                batch_size=2,
                train_dataset_size=6,
                network="TinyNet",
                loss=0.3333333,
                model_path="",
                model_size=0,
            ),
        ),
        ("eval_lineage", EvaluationLineage(metrics={"accuracy": 0.5}, valid_dataset_size=4)),
    ]


def write_all_plugins(log_dir: Path, max_file_size: int | None = None) -> None:
    """The inputs of the golden all_plugins run, without its network graph."""
    with SummaryRecord(log_dir, max_file_size=max_file_size, raise_exception=True) as record:
        for plugin, value in _lineage_values():
            record.add_value(plugin, plugin, value)
        record.record(0)
        rng = np.random.default_rng(1234)
        for step in STEPS:
            record.add_value("scalar", "loss", np.float32(1 / step))
            record.add_value("image", "img", rng.random((2, 3, 8, 8)).astype(np.float32))
            record.add_value("histogram", "w", rng.standard_normal(100).astype(np.float32))
            record.add_value("tensor", "t", (np.arange(6, dtype=np.float32) * step).reshape(2, 3))
            record.record(step)


def write_two_writers(log_dir: Path) -> None:
    """Two records opened back to back (same second), writing distinct tags step by step."""
    for _ in range(5):
        first, second = SummaryRecord(log_dir), SummaryRecord(log_dir)
        if Path(first.log_dir).name == Path(second.log_dir).name:
            break  # both were opened in the same second
        first.close()  # a second boundary fell between them; nothing was written yet
        second.close()
    else:
        pytest.fail("could not open two SummaryRecords within one second")
    with first, second:
        for step in STEPS:
            first.add_value("scalar", "first_loss", float(step))
            first.add_value(
                "tensor", "first_t", np.arange(4, dtype=np.float32).reshape(2, 2) * step
            )
            first.record(step)
            second.add_value("scalar", "second_loss", -float(step))
            second.add_value(
                "histogram", "second_w", np.linspace(-1, 1, 50, dtype=np.float32) * step
            )
            second.record(step)


def write_lineage_rotated(log_dir: Path) -> None:
    """The golden lineage and a scalar per step, with a max_file_size that splits the lineage."""
    with SummaryRecord(log_dir, max_file_size=LINEAGE_ROTATED_MAX_FILE_SIZE) as record:
        for plugin, value in _lineage_values():
            record.add_value(plugin, plugin, value)
        record.record(0)
        for step in STEPS:
            record.add_value("scalar", "loss", np.float32(1 / step))
            record.record(step)


# ---------------------------------------------------------------- probing


@pytest.fixture(scope="module")
def probes(tmp_path_factory: pytest.TempPathFactory, golden_dir: Path) -> dict[str, Probe]:
    """``main``: the golden copy and our three runs; ``lineage_rotated``: a run of its own."""
    exe = mindinsight_bin()
    if SHARED_PROBE.exists() and not filecmp.cmp(SHARED_PROBE, PROBE, shallow=False):
        warnings.warn(
            f"{PROBE.relative_to(REPO)} differs from {SHARED_PROBE}; copy the newer tool",
            stacklevel=1,
        )
    tmp = tmp_path_factory.mktemp("mindinsight")
    main, lineage_rotated = tmp / "main", tmp / "lineage_rotated"
    shutil.copytree(golden_dir / "all_plugins", run_dir(main, GOLDEN))
    write_all_plugins(run_dir(main, OURS))
    write_all_plugins(run_dir(main, ROTATED), max_file_size=ROTATED_MAX_FILE_SIZE)
    write_two_writers(run_dir(main, TWO_WRITERS))
    write_lineage_rotated(run_dir(lineage_rotated, LINEAGE_ROTATED))
    found = run_probes(exe, [main, lineage_rotated], tmp)
    return {"main": found[0], "lineage_rotated": found[1]}


@pytest.fixture(scope="module")
def shown(probes: dict[str, Probe]) -> dict[str, Any]:
    """What MindInsight showed for the golden copy and our three runs (no load errors)."""
    probe = probes["main"]
    if probe.returncode != 0:
        pytest.fail(probe.explain(), pytrace=False)
    return probe.data


# ---------------------------------------------------------------- views for comparing


def job_view(data: dict[str, Any], train_id: str, section: str) -> Any:
    """One section of a job's probe output with its own train id made anonymous."""
    value = data["jobs"][train_id][section]
    if section == "images":
        value = without_keys(value, IMAGE_BYTES_KEYS)
    return replace_strings(value, {train_id: "<train_id>"})


def lineage_of(data: dict[str, Any], train_id: str) -> dict[str, Any]:
    """The lineage row of a train job, without its summary_dir."""
    rows = [row for row in data["lineage"]["object"] if row["summary_dir"] == train_id]
    assert len(rows) == 1, f"MindInsight shows {len(rows)} lineage rows for {train_id}"
    return {k: v for k, v in rows[0].items() if k != "summary_dir"}


def steps_shown(job: dict[str, Any], plugin: str, tag: str) -> list[int]:
    """The steps MindInsight lists for ``tag`` (without the ``/plugin`` part)."""
    key = f"{tag}/{plugin}"
    if plugin == "scalar":
        items = job["scalars"][key]["metadatas"]
    elif plugin == "image":
        items = job["images"][key]["metadata"]["metadatas"]
    elif plugin == "histogram":
        items = job["histograms"][key]["histograms"]
    else:
        items = job["tensors"][key]["stats"]["tensors"][0]["values"]
    return [item["step"] for item in items]


def expected_view(data: dict[str, Any], base: Path) -> dict[str, Any]:
    """Our runs' part of the probe output, without what varies from run to run.

    Event-file names (they hold the seconds and the host) become ``<summary file #i>`` /
    ``<lineage file #i>`` in MindInsight's order; the base path becomes ``<base>``; the
    PNG bytes' hashes go (pixel hashes stay). Wall times, ids that MindInsight draws at
    random and timings are already gone or left out.
    """
    view: dict[str, Any] = {
        "mindinsight_log": replace_strings(data["mindinsight_log"], {str(base): "<base>"}),
        "jobs": {},
        "train_jobs_listing": {},
        "lineage": {},
    }
    for train_id in OUR_JOBS:
        directory = run_dir(base, train_id)
        names = {str(base): "<base>"}
        for kind in ("summary", "lineage"):
            for i, name in enumerate(event_file_names(directory, kind)):
                names[name] = f"<{kind} file #{i}>"
        view["jobs"][train_id] = replace_strings(
            without_keys(data["jobs"][train_id], IMAGE_BYTES_KEYS), names
        )
        view["train_jobs_listing"][train_id] = replace_strings(
            data["train_jobs_listing"][train_id], names
        )
    for row in data["lineage"]["object"]:
        if row["summary_dir"] in OUR_JOBS:
            view["lineage"][row["summary_dir"]] = row
    view["lineage_customized"] = data["lineage"]["customized"]
    return view


# ---------------------------------------------------------------- the checks


def test_loads_without_errors_or_warnings(shown: dict[str, Any]) -> None:
    assert shown["mindinsight_log"] == {"errors": [], "warnings": []}
    assert sorted(shown["jobs"]) == sorted((GOLDEN, *OUR_JOBS))
    for train_id in (GOLDEN, *OUR_JOBS):
        job = shown["jobs"][train_id]["train_job"]
        assert job["cache_status"] == "CACHED", train_id
        assert job["is_integrity"] is True, train_id


def test_every_plugin_we_wrote_is_shown(shown: dict[str, Any]) -> None:
    plugins = shown["jobs"][OURS]["plugins"]["plugins"]
    assert plugins == {
        "graph": [],
        "optimized_graph": [],
        "loss_landscape": [],
        "scalar": ["loss/scalar"],
        "image": ["img/image"],
        "histogram": ["w/histogram"],
        "tensor": ["t/tensor"],
    }
    golden = shown["jobs"][GOLDEN]["plugins"]["plugins"]
    assert {p: golden[p] for p in (*TENSOR_PLUGINS, "loss_landscape")} == {
        p: plugins[p] for p in (*TENSOR_PLUGINS, "loss_landscape")
    }
    for plugin in TENSOR_PLUGINS:
        assert (
            job_view(shown, OURS, "single_job")[plugin]
            == job_view(shown, GOLDEN, "single_job")[plugin]
        )
    lineage = lineage_of(shown, OURS)
    assert lineage["model_lineage"]["user_defined"] == {
        "author": "golden",
        "batch_size": 2,
        "lr": 0.01,
    }
    assert lineage["model_lineage"]["network"] == "TinyNet"
    assert lineage["model_lineage"]["metric"] == {"accuracy": 0.5}


def test_train_job_listing_matches_golden(shown: dict[str, Any]) -> None:
    ours, golden = shown["jobs"][OURS]["train_job"], shown["jobs"][GOLDEN]["train_job"]
    drop = ("train_id", "relative_path")
    assert {k: v for k, v in ours.items() if k not in drop} == {
        k: v for k, v in golden.items() if k not in drop
    }
    assert ours["summary_files"] == 1
    assert ours["lineage_files"] == 1


@pytest.mark.parametrize("section", ["scalars", "scalars_multi", "tensors", "histograms", "images"])
def test_values_match_golden(shown: dict[str, Any], section: str) -> None:
    """Scalars and tensors (values, steps, dims, dtype, statistics), histograms as
    MindInsight re-bins them, images by size and decoded pixels: as the golden run."""
    assert_same(job_view(shown, GOLDEN, section), job_view(shown, OURS, section), section)


def test_tensor_types_and_shapes(shown: dict[str, Any]) -> None:
    stats = shown["jobs"][OURS]["tensors"]["t/tensor"]["stats"]["tensors"][0]["values"]
    assert [(v["step"], v["value"]["data_type"], v["value"]["dims"]) for v in stats] == [
        (step, "DT_FLOAT32", [2, 3]) for step in STEPS
    ]
    data = shown["jobs"][OURS]["tensors"]["t/tensor"]["data_by_step"]
    for step in STEPS:
        value = data[str(step)]["response"]["tensors"][0]["values"][0]["value"]
        assert value["data"] == (np.arange(6.0) * step).reshape(2, 3).tolist()


def test_images_are_pngs_of_the_tiled_batch(shown: dict[str, Any]) -> None:
    images = shown["jobs"][OURS]["images"]["img/image"]["single_image_by_step"]
    for step in STEPS:
        info = images[str(step)]
        assert (info["format"], info["width"], info["height"], info["channels"]) == (
            "PNG",
            16,
            8,
            3,
        )
        assert "pixels_sha256" in info, "Pillow missing in the probe's interpreter"


def test_lineage_matches_golden(shown: dict[str, Any]) -> None:
    assert_same(lineage_of(shown, GOLDEN), lineage_of(shown, OURS), "lineage")
    customized = shown["lineage"]["customized"]
    assert {"metric/accuracy", "user_defined/author", "user_defined/batch_size"} <= set(customized)
    assert customized["user_defined/lr"]["type"] == "float"


def test_rotated_run_shows_every_step_once(shown: dict[str, Any]) -> None:
    directory = run_dir(Path(shown["summary_base_dir"]), ROTATED)
    files = event_file_names(directory, "summary")
    assert len(files) >= len(STEPS), (
        f"max_file_size={ROTATED_MAX_FILE_SIZE} did not rotate: {files}"
    )
    job = shown["jobs"][ROTATED]
    assert job["train_job"]["summary_files"] == len(files)
    for plugin, tag in zip(TENSOR_PLUGINS, ("loss", "img", "w", "t"), strict=True):
        assert steps_shown(job, plugin, tag) == list(STEPS), f"{tag}/{plugin}"
    for section in ("plugins", "scalars", "scalars_multi", "tensors", "histograms", "images"):
        assert_same(job_view(shown, OURS, section), job_view(shown, ROTATED, section), section)
    assert_same(lineage_of(shown, OURS), lineage_of(shown, ROTATED), "lineage")


def test_two_writers_in_one_second_show_all_tags(shown: dict[str, Any]) -> None:
    directory = run_dir(Path(shown["summary_base_dir"]), TWO_WRITERS)
    files = event_file_names(directory, "summary")
    assert len(files) == 2 and files[0] != files[1], files
    assert event_file_names(directory, "lineage") == []
    job = shown["jobs"][TWO_WRITERS]
    assert job["train_job"]["summary_files"] == 2
    plugins = job["plugins"]["plugins"]
    assert plugins["scalar"] == ["first_loss/scalar", "second_loss/scalar"]
    assert plugins["tensor"] == ["first_t/tensor"]
    assert plugins["histogram"] == ["second_w/histogram"]
    for plugin, tag in (
        ("scalar", "first_loss"),
        ("tensor", "first_t"),
        ("scalar", "second_loss"),
        ("histogram", "second_w"),
    ):
        assert steps_shown(job, plugin, tag) == list(STEPS), f"{tag}/{plugin}"
    values = {
        tag: [m["value"] for m in job["scalars"][f"{tag}/scalar"]["metadatas"]]
        for tag in ("first_loss", "second_loss")
    }
    assert values == {"first_loss": [1.0, 2.0, 3.0], "second_loss": [-1.0, -2.0, -3.0]}


def test_matches_committed_probe_output(shown: dict[str, Any]) -> None:
    """Our runs' normalized probe output equals tests/data/mindinsight/sumlens_runs.json."""
    fresh = expected_view(shown, Path(shown["summary_base_dir"]))
    assert_matches_committed(fresh, EXPECTED_JSON, "our runs")


def test_rotated_lineage_keeps_custom_lineage(
    probes: dict[str, Probe], shown: dict[str, Any]
) -> None:
    probe = probes["lineage_rotated"]
    assert probe.returncode == 0, probe.explain()
    assert_same(lineage_of(shown, OURS), lineage_of(probe.data, LINEAGE_ROTATED), "lineage")
