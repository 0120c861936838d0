"""The lineage view's API: ``/api/v1/lineage`` and ``/api/v1/dataset-graph``.

Over the golden MindSpore runs and runs our ``SummaryRecord`` wrote at three learning
rates, served by the real server: the table holds every run that recorded lineage with
its learning rate, accuracy and dataset sizes, typed columns of the right kinds, the
dataset graphs; a changed run is read again (and only then); damaged files and bad
parameters are reported in one line. The runs come from tests/board/lineage_data.py.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from helpers.board import free_port, get_json, running_server, wait_until
from helpers.lineage_data import (
    EVAL_SIZE,
    GOLDEN,
    TRAIN_SIZE,
    WRITTEN,
    XSS_RUN,
    lineage_ready,
    write_lineage_base,
)

from sumlens import SummaryRecord
from sumlens._proto import lineage_pb2
from sumlens.board.settings import BoardSettings
from sumlens.io import RecordWriter


def column(table: dict[str, Any], column_id: str) -> dict[str, Any]:
    """The values of one column by run id, with its kind and type."""
    found = next(c for c in table["columns"] if c["id"] == column_id)
    return {**found, "by_run": dict(zip(table["runs"], found["values"], strict=True))}


def error_of(url: str) -> tuple[int, str]:
    """The status and ``detail`` of a request that fails."""
    try:
        with urllib.request.urlopen(url, timeout=5):
            pass
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())["detail"]
    raise AssertionError(f"{url} did not fail")


ALL_RUNS = [*GOLDEN, *WRITTEN, XSS_RUN]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory, golden_dir: Path) -> Path:
    found = tmp_path_factory.mktemp("lineage") / "base"
    write_lineage_base(found, golden_dir)
    with SummaryRecord(found / "only_custom") as record:
        record.add_value("custom_lineage_data", "custom_lineage_data", {"seed": 3, "arch": "vit"})
        record.record(0)
    write_run_without_lineage(found / "plain")
    return found


def write_run_without_lineage(directory: Path) -> None:
    with SummaryRecord(directory) as record:
        record.add_value("scalar", "loss", 1.0)
        record.record(1)


@pytest.fixture(scope="module")
def url(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = BoardSettings.create(
        base,
        port=free_port(),
        reload_interval=0.3,
        workspace=tmp_path_factory.mktemp("lineage-workspace"),
    )
    with running_server(settings) as served:
        wait_until(lambda: lineage_ready(served, [*ALL_RUNS, "./only_custom"]), timeout=60)
        yield served


def test_every_run_with_lineage_is_a_row_with_its_values(url: str) -> None:
    table = lineage_ready(url, ALL_RUNS)
    assert table is not None
    assert "./plain" not in table["runs"]
    rate = column(table, "learning_rate")
    accuracy = column(table, "metric/accuracy")
    train_size = column(table, "train_dataset_size")
    eval_size = column(table, "valid_dataset_size")
    for run, (lr, acc, train, evaluation) in GOLDEN.items():
        assert rate["by_run"][run] == lr
        assert accuracy["by_run"][run] == acc
        assert train_size["by_run"][run] == train
        assert eval_size["by_run"][run] == evaluation
    for run, (lr, acc, _) in WRITTEN.items():
        assert rate["by_run"][run] == lr  # float32 on disk, shown as written
        assert accuracy["by_run"][run] == acc
        assert train_size["by_run"][run] == TRAIN_SIZE
        assert eval_size["by_run"][run] == EVAL_SIZE
    assert column(table, "optimizer")["by_run"]["./collector"] == "Momentum"
    assert column(table, "network")["by_run"]["./sweep/lr_0.1"] == "LeNet5"
    assert column(table, "model_size")["by_run"]["./collector"] == 915
    assert column(table, "model_path")["by_run"]["./collector"].endswith("golden-2_2.ckpt")
    assert column(table, "custom/author")["by_run"]["./all_plugins"] == "golden"
    assert column(table, "custom/seed")["by_run"]["./sweep/lr_0.01"] == 7


def test_columns_have_kinds_and_types(url: str) -> None:
    table = lineage_ready(url, ALL_RUNS)
    assert table is not None
    kinds = {c["id"]: (c["kind"], c["type"]) for c in table["columns"]}
    assert kinds["learning_rate"] == ("hyper", "number")
    assert kinds["optimizer"] == ("hyper", "text")
    assert kinds["epoch"] == ("hyper", "number")
    assert kinds["batch_size"] == ("hyper", "number")
    assert kinds["metric/accuracy"] == ("metric", "number")
    assert kinds["train_dataset_size"] == ("dataset", "number")
    assert kinds["pipeline"] == ("dataset", "text")
    assert kinds["network"] == ("model", "text")
    assert kinds["custom/seed"] == ("custom", "number")
    assert kinds["custom/arch"] == ("custom", "text")
    order = [c["kind"] for c in table["columns"]]
    assert order == sorted(order, key=["hyper", "metric", "dataset", "model", "custom"].index)
    for found in table["columns"]:
        assert len(found["values"]) == len(table["runs"])
        if found["type"] == "number":
            assert all(v is None or isinstance(v, int | float) for v in found["values"])


def test_a_run_with_custom_lineage_only_is_listed(url: str) -> None:
    table = lineage_ready(url, ["./only_custom"])
    assert table is not None
    assert column(table, "custom/arch")["by_run"]["./only_custom"] == "vit"
    assert column(table, "learning_rate")["by_run"]["./only_custom"] is None


def test_dataset_graphs(url: str) -> None:
    runs = ["./collector", "./sweep/lr_0.1", "./all_plugins"]
    body = get_json(f"{url}/api/v1/dataset-graph?{urlencode([('run', r) for r in runs])}")
    assert body is not None
    graphs = {entry["run"]: entry["graph"] for entry in body["graphs"]}
    assert list(graphs) == runs
    collector = graphs["./collector"]
    assert collector["op_type"] == "Batch" and collector["batch_size"] == 4
    assert [child["op_type"] for child in collector["children"]] == ["GeneratorDataset"]
    ours = graphs["./sweep/lr_0.1"]
    assert (ours["op_type"], ours["batch_size"], ours["drop_remainder"]) == ("Batch", 32, True)
    shuffle = ours["children"][0]
    assert (shuffle["op_type"], shuffle["buffer_size"]) == ("Shuffle", 1000)
    assert shuffle["children"][0]["op_type"] == "MnistDataset"
    assert graphs["./all_plugins"] is None
    table = lineage_ready(url, runs)
    assert table is not None
    pipelines = column(table, "pipeline")["by_run"]
    assert pipelines["./sweep/lr_0.1"] == "MnistDataset → Shuffle → Batch"
    assert pipelines["./collector"] == "GeneratorDataset → Batch"
    has_graph = dict(zip(table["runs"], table["graph"], strict=True))
    assert has_graph["./collector"] and not has_graph["./all_plugins"]


def test_known_key_answers_unchanged(url: str) -> None:
    table = lineage_ready(url, ALL_RUNS)
    assert table is not None
    again = get_json(f"{url}/api/v1/lineage?known={table['key']}")
    assert again == {"key": table["key"], "unchanged": True}
    other = get_json(f"{url}/api/v1/lineage?known=0000")
    assert other is not None and other["runs"] == table["runs"]


def test_bad_parameters_are_one_line_errors(url: str) -> None:
    status, detail = error_of(f"{url}/api/v1/dataset-graph")
    assert status == 422 and "run" in detail and "\n" not in detail
    status, detail = error_of(f"{url}/api/v1/dataset-graph?run=./nowhere")
    assert status == 404 and "./nowhere" in detail and "\n" not in detail
    many = urlencode([("run", f"./r{i}") for i in range(51)])
    status, detail = error_of(f"{url}/api/v1/dataset-graph?{many}")
    assert status == 422 and "at most 50" in detail
    status, detail = error_of(f"{url}/api/v1/lineage?known={'x' * 65}")
    assert status == 422 and "known" in detail and "\n" not in detail


def test_a_changed_run_is_read_again_and_damage_is_reported(url: str, base: Path) -> None:
    before = lineage_ready(url, ALL_RUNS)
    assert before is not None
    run_dir = base / "sweep" / "lr_0.1"
    lineage_file = next(p for p in run_dir.iterdir() if p.name.endswith("_lineage"))
    with RecordWriter(lineage_file) as writer:
        writer.write(b"not a lineage event")  # a record with a valid CRC and a bad payload

    def changed() -> dict[str, Any] | None:
        table = lineage_ready(url, ALL_RUNS)
        return table if table and table["key"] != before["key"] else None

    after = wait_until(changed, timeout=30)
    problems = dict(after["problems"])
    assert "could not be read" in problems["./sweep/lr_0.1"]
    assert column(after, "learning_rate")["by_run"]["./sweep/lr_0.1"] == 0.1
    assert set(problems) == {"./sweep/lr_0.1"}


def test_metrics_nested_past_the_stack_are_a_problem_not_a_crash(url: str, base: Path) -> None:
    run_dir = base / "crafted_metric"
    run_dir.mkdir()
    deep = '{"a":' * 5000 + "1" + "}" * 5000  # json.loads raises RecursionError on it
    event = lineage_pb2.LineageEvent(wall_time=1.0)
    event.evaluation_lineage.metric = deep
    with RecordWriter(run_dir / "events.out.events.summary.1700000000.crafted_lineage") as writer:
        writer.write(event.SerializeToString())

    def listed() -> dict[str, Any] | None:
        table = get_json(f"{url}/api/v1/lineage")
        return table if table and "./crafted_metric" in table["runs"] else None

    table = wait_until(listed, timeout=30)
    assert "not JSON that can be read" in dict(table["problems"])["./crafted_metric"]
    assert set(ALL_RUNS) <= set(table["runs"])  # every other run still listed
