"""The lineage view's routes (``board/api/lineage.py``): ``/api/v1/lineage`` and
``/api/v1/dataset-graph``, over an in-memory read surface.

The golden MindSpore runs (their files as bytes) and runs of lineage records built here at
three learning rates: the table holds every run that recorded lineage with its learning
rate, accuracy and dataset sizes, typed columns of the right kinds, the dataset graphs; a
run whose lineage file changed is read again (and only then); damaged records and bad
parameters are reported in one line. The runs are those of ``helpers/lineage_data.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.board import route_client
from helpers.lineage_data import (
    EVAL_SIZE,
    GOLDEN,
    TRAIN_SIZE,
    WRITTEN,
    XSS_LINEAGE,
    XSS_RUN,
    pipeline,
)
from helpers.memory_runs import add_directory, add_records
from helpers.memory_surface import MemorySurface
from starlette.testclient import TestClient

from sumlens._proto import lineage_pb2
from sumlens.board.query.lineage_values import read_run_lineage
from sumlens.lineage import EvaluationLineage, TrainLineage, UserDefinedInfo

ALL_RUNS = [*GOLDEN, *WRITTEN, XSS_RUN]
LINEAGE_FILE = "events.out.events.summary.1700000000.0.host_lineage"


def column(table: dict[str, Any], column_id: str) -> dict[str, Any]:
    """The values of one column by run id, with its kind and type."""
    found = next(c for c in table["columns"] if c["id"] == column_id)
    return {**found, "by_run": dict(zip(table["runs"], found["values"], strict=True))}


def _event(**what: Any) -> bytes:
    """One lineage record: a LineageEvent holding ``what`` (one field)."""
    return lineage_pb2.LineageEvent(wall_time=1_700_000_000.0, **what).SerializeToString()


def lineage_records(learning_rate: float, accuracy: float, batch_size: int) -> list[bytes]:
    """The lineage records SummaryRecord writes for ``helpers.lineage_data.write_lineage_run``."""
    train = TrainLineage(optimizer="SGD", learning_rate=learning_rate,
                         loss_function="CrossEntropyLoss", epoch=3, batch_size=batch_size,
                         train_dataset_path="/data/mnist", train_dataset_size=TRAIN_SIZE,
                         network="LeNet5", loss=0.25)  # fmt: skip
    evaluation = EvaluationLineage(metrics={"accuracy": accuracy}, valid_dataset_size=EVAL_SIZE)
    return [
        _event(train_lineage=train.to_proto()),
        _event(evaluation_lineage=evaluation.to_proto()),
        _event(user_defined_info=UserDefinedInfo({"seed": 7}).to_proto()),
        _event(dataset_graph=pipeline(batch_size).to_proto()),
    ]


def lineage_surface(golden_dir: Path) -> MemorySurface:
    """The golden runs, the ``WRITTEN`` runs, the markup-named one, one holding custom
    lineage only and one without lineage."""
    surface = MemorySurface()
    for run in GOLDEN:
        add_directory(surface, run, golden_dir / run[2:])
    for run, (rate, accuracy, batch) in [*WRITTEN.items(), (XSS_RUN, XSS_LINEAGE)]:
        surface.add_scalars(run, "loss", [1, 2, 3], [rate, rate / 2, rate / 3])
        add_records(surface, run, LINEAGE_FILE, lineage_records(rate, accuracy, batch))
    custom = UserDefinedInfo({"seed": 3, "arch": "vit"}).to_proto()
    add_records(surface, "./only_custom", LINEAGE_FILE, [_event(user_defined_info=custom)])
    surface.add_scalars("./plain", "loss", [1], [1.0])
    return surface


@pytest.fixture(scope="module")
def client(golden_dir: Path) -> Iterator[TestClient]:
    with route_client(lineage_surface(golden_dir)) as found:
        yield found


def _table(client: TestClient, **params: str) -> dict[str, Any]:
    response = client.get("/api/v1/lineage", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_every_run_with_lineage_is_a_row_with_its_values(client: TestClient) -> None:
    table = _table(client)
    assert set(table["runs"]) == {*ALL_RUNS, "./only_custom"} and "./plain" not in table["runs"]
    assert table["problems"] == []
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
        assert rate["by_run"][run] == lr  # float32 in the record, shown as written
        assert accuracy["by_run"][run] == acc
        assert train_size["by_run"][run] == TRAIN_SIZE
        assert eval_size["by_run"][run] == EVAL_SIZE
    assert column(table, "optimizer")["by_run"]["./collector"] == "Momentum"
    assert column(table, "network")["by_run"]["./sweep/lr_0.1"] == "LeNet5"
    assert column(table, "model_size")["by_run"]["./collector"] == 915
    assert column(table, "model_path")["by_run"]["./collector"].endswith("golden-2_2.ckpt")
    assert column(table, "custom/author")["by_run"]["./all_plugins"] == "golden"
    assert column(table, "custom/seed")["by_run"]["./sweep/lr_0.01"] == 7
    assert column(table, "learning_rate")["by_run"][XSS_RUN] == XSS_LINEAGE[0]
    listed = {run["id"]: run["updated"] for run in client.get("/api/v1/runs").json()["runs"]}
    assert table["updated"] == [listed[run] for run in table["runs"]]


def test_columns_have_kinds_and_types(client: TestClient) -> None:
    table = _table(client)
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
    labels = {c["id"]: c["label"] for c in table["columns"]}
    assert (labels["learning_rate"], labels["metric/accuracy"]) == ("learning rate", "accuracy")
    order = [c["kind"] for c in table["columns"]]
    assert order == sorted(order, key=["hyper", "metric", "dataset", "model", "custom"].index)
    for found in table["columns"]:
        assert len(found["values"]) == len(table["runs"])
        if found["type"] == "number":
            assert all(v is None or isinstance(v, int | float) for v in found["values"])


def test_a_run_with_custom_lineage_only_is_listed(client: TestClient) -> None:
    table = _table(client)
    assert column(table, "custom/arch")["by_run"]["./only_custom"] == "vit"
    assert column(table, "learning_rate")["by_run"]["./only_custom"] is None


def test_dataset_graphs(client: TestClient) -> None:
    runs = ["./collector", "./sweep/lr_0.1", "./all_plugins"]
    response = client.get("/api/v1/dataset-graph", params={"run": [*runs, "./collector"]})
    assert response.status_code == 200
    graphs = {entry["run"]: entry["graph"] for entry in response.json()["graphs"]}
    assert list(graphs) == runs  # in the order asked, each once
    collector = graphs["./collector"]
    assert collector["op_type"] == "Batch" and collector["batch_size"] == 4
    assert [child["op_type"] for child in collector["children"]] == ["GeneratorDataset"]
    ours = graphs["./sweep/lr_0.1"]
    assert (ours["op_type"], ours["batch_size"], ours["drop_remainder"]) == ("Batch", 32, True)
    shuffle = ours["children"][0]
    assert (shuffle["op_type"], shuffle["buffer_size"]) == ("Shuffle", 1000)
    assert shuffle["children"][0]["op_type"] == "MnistDataset"
    assert graphs["./all_plugins"] is None
    plain = client.get("/api/v1/dataset-graph", params={"run": "./plain"}).json()
    assert plain == {"graphs": [{"run": "./plain", "graph": None}]}  # no lineage: null
    table = _table(client)
    pipelines = column(table, "pipeline")["by_run"]
    assert pipelines["./sweep/lr_0.1"] == "MnistDataset → Shuffle → Batch"
    assert pipelines["./collector"] == "GeneratorDataset → Batch"
    has_graph = dict(zip(table["runs"], table["graph"], strict=True))
    assert has_graph["./collector"] and not has_graph["./all_plugins"]


def test_known_key_answers_unchanged(client: TestClient) -> None:
    table = _table(client)
    assert _table(client, known=table["key"]) == {"key": table["key"], "unchanged": True}
    other = _table(client, known="0000")
    assert other["runs"] == table["runs"]


@pytest.mark.parametrize(
    ("query", "status", "says"),
    [
        ("dataset-graph", 422, "run"),
        ("dataset-graph?run=./nowhere", 404, "run='./nowhere' is not a run being served"),
        ("dataset-graph?" + "&".join(f"run=./r{i}" for i in range(51)), 422, "at most 50"),
        (f"lineage?known={'x' * 65}", 422, "known"),
    ],
)
def test_bad_parameters_are_one_line_errors(
    client: TestClient, query: str, status: int, says: str
) -> None:
    response = client.get(f"/api/v1/{query}")
    detail = response.json()["detail"]
    assert response.status_code == status and says in detail and "\n" not in detail


def test_a_changed_run_is_read_again_and_damage_is_reported(golden_dir: Path) -> None:
    surface = lineage_surface(golden_dir)
    with route_client(surface) as client:
        before = _table(client)
        surface.add_scalars("./sweep/lr_0.1", "loss", [4], [0.01])  # not a lineage file
        assert _table(client)["key"] == before["key"]
        records = [*lineage_records(*WRITTEN["./sweep/lr_0.1"]), b"not a lineage event"]
        add_records(surface, "./sweep/lr_0.1", LINEAGE_FILE, records)  # the file grew
        after = _table(client)
    assert after["key"] != before["key"]
    problems = dict(after["problems"])
    assert problems["./sweep/lr_0.1"] == f"{LINEAGE_FILE}: 1 record(s) could not be read"
    assert column(after, "learning_rate")["by_run"]["./sweep/lr_0.1"] == 0.1
    assert set(problems) == {"./sweep/lr_0.1"}


def test_metrics_nested_past_the_stack_are_a_problem_not_a_crash(golden_dir: Path) -> None:
    surface = lineage_surface(golden_dir)
    deep = '{"a":' * 5000 + "1" + "}" * 5000  # json.loads raises RecursionError on it
    evaluation = lineage_pb2.EvaluationLineage(metric=deep)
    name = "events.out.events.summary.1700000000.crafted_lineage"
    add_records(surface, "./crafted_metric", name, [_event(evaluation_lineage=evaluation)])
    with route_client(surface) as client:
        table = _table(client)
    assert "not JSON that can be read" in dict(table["problems"])["./crafted_metric"]
    assert set(ALL_RUNS) <= set(table["runs"])  # every other run still listed


def test_a_file_the_run_no_longer_has_is_a_problem(golden_dir: Path) -> None:
    """Between listing a run's files and reading one, the file may go: said, not fatal."""
    surface = lineage_surface(golden_dir)
    gone = "events.out.events.summary.1700000001.0.host_lineage"
    lineage = read_run_lineage(
        {LINEAGE_FILE: surface.record_file("./sweep/lr_0.1", LINEAGE_FILE), gone: None}
    )
    assert lineage is not None and lineage.values["learning_rate"] == 0.1
    assert lineage.problems == [f"{gone}: the run no longer has this file"]
