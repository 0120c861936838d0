"""TensorBoard's hyper-parameters in the lineage table (``board/query/hparams_values.py``).

Over an in-memory read surface: a run's hparams messages become typed ``hparam/<name>``
columns, its experiment's metrics the last value of their scalar tags, its session end the
status; a run with MindSpore lineage shows both; the run torch's ``add_hparams`` makes in a
directory named by the time is its parent's row (unless that cannot be told apart);
Lightning's ``hp_metric = -1`` is no result; new messages and points change the table and
its key; crafted messages are problems, bounded. Over real files: runs torch's
``SummaryWriter`` and Lightning's ``TensorBoardLogger`` wrote, through the real server and
loader, compared with TensorBoard's own reader.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import struct_pb2
from helpers.board import free_port, get_json, route_client, running_server, wait_until
from helpers.memory_runs import add_records
from helpers.memory_surface import Damaged, MemorySurface
from helpers.tb_logs import (
    HPARAMS,
    HPARAMS_METRICS,
    LIGHTNING_HPARAMS_METRICS,
    lightning_tensorboard_run,
    torch_every_method,
)

from sumlens._proto import lineage_pb2
from sumlens._proto.tensorboard_plugins_pb2 import (
    Experiment,
    HParamsPluginData,
    MetricInfo,
    MetricName,
    SessionEndInfo,
    SessionStartInfo,
)
from sumlens.board.query.lineage_values import MAX_FIELDS
from sumlens.board.settings import BoardSettings
from sumlens.lineage import TrainLineage

EXPERIMENT, START, END = (
    "_hparams_/experiment",
    "_hparams_/session_start_info",
    "_hparams_/session_end_info",
)
SUCCESS = 1


def experiment(*tags: str, group: str = "") -> HParamsPluginData:
    infos = [MetricInfo(name=MetricName(group=group, tag=tag)) for tag in tags]
    return HParamsPluginData(version=0, experiment=Experiment(metric_infos=infos))


def start(**hparams: Any) -> HParamsPluginData:
    info = SessionStartInfo()
    for name, value in hparams.items():
        if isinstance(value, struct_pb2.Value):
            info.hparams[name].CopyFrom(value)
        elif isinstance(value, bool):
            info.hparams[name].bool_value = value
        elif isinstance(value, str):
            info.hparams[name].string_value = value
        else:
            info.hparams[name].number_value = value
    return HParamsPluginData(version=0, session_start_info=info)


def end(status: int = SUCCESS) -> HParamsPluginData:
    return HParamsPluginData(version=0, session_end_info=SessionEndInfo(status=status))


def add_session(
    surface: MemorySurface,
    run: str,
    metrics: tuple[str, ...],
    step: int = 0,
    status: int | None = SUCCESS,
    **hparams: Any,
) -> None:
    """The three messages torch's ``hparams()`` makes, as the loader keeps them."""
    surface.add_value(run, "hparams", EXPERIMENT, step, experiment(*metrics))
    surface.add_value(run, "hparams", START, step, start(**hparams))
    if status is not None:
        surface.add_value(run, "hparams", END, step, end(status))


def table(surface: MemorySurface, known: str | None = None) -> dict[str, Any]:
    with route_client(surface) as client:
        answer = client.get("/api/v1/lineage", params={} if known is None else {"known": known})
    assert answer.status_code == 200, answer.text
    return answer.json()


def columns(found: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each column by id, with its values by run id."""
    return {
        c["id"]: {**c, "by_run": dict(zip(found["runs"], c["values"], strict=True))}
        for c in found["columns"]
    }


def test_hyper_parameters_metrics_and_status_are_typed_columns() -> None:
    surface = MemorySurface()
    add_session(surface, "./a", ("hp/acc", "hp/none"), lr=0.1, layers=3.0, opt="sgd",
                dropout=False, unset=struct_pb2.Value())  # fmt: skip
    surface.add_scalars("./a", "hp/acc", [0, 5, 9], [0.5, 0.7, 0.75])
    surface.add_scalars("./a", "loss", [0, 1], [1.0, 0.5])  # a scalar, not a metric
    found = table(surface)
    by_id = columns(found)
    assert found["runs"] == ["./a"] and found["problems"] == []
    expected = {
        "hparam/dropout": ("dropout", "hyper", "text", "false"),
        "hparam/layers": ("layers", "hyper", "number", 3),
        "hparam/lr": ("lr", "hyper", "number", 0.1),
        "hparam/opt": ("opt", "hyper", "text", "sgd"),
        "hparam/unset": ("unset", "hyper", "number", None),
        "metric/hp/acc": ("hp/acc", "metric", "number", 0.75),
        "session_status": ("session status", "metric", "text", "success"),
    }
    assert set(by_id) == set(expected)  # no column for a metric never logged, nor for loss
    for column_id, (label, kind, kind_of_values, value) in expected.items():
        column = by_id[column_id]
        assert (column["label"], column["kind"], column["type"]) == (label, kind, kind_of_values)
        assert column["by_run"]["./a"] == value
    order = [c["id"] for c in found["columns"]]
    assert order.index("hparam/opt") < order.index("session_status") < order.index("metric/hp/acc")


def test_a_run_with_mindspore_lineage_and_hparams_shows_both() -> None:
    surface = MemorySurface()
    train = TrainLineage(optimizer="SGD", learning_rate=0.01, batch_size=32, loss=0.25)
    event = lineage_pb2.LineageEvent(wall_time=1.0, train_lineage=train.to_proto())
    add_records(surface, "./ms", "events.out.events.summary.1.0.host_lineage",
                [event.SerializeToString()])  # fmt: skip
    add_session(surface, "./ms", ("accuracy",), learning_rate=0.5, batch_size=64.0)
    surface.add_scalars("./ms", "accuracy", [1], [0.9])
    by_id = columns(table(surface))
    # MindSpore's fixed columns and TensorBoard's hyper-parameters of the same names stay apart
    assert by_id["learning_rate"]["by_run"]["./ms"] == 0.01
    assert by_id["hparam/learning_rate"]["by_run"]["./ms"] == 0.5
    assert by_id["batch_size"]["by_run"]["./ms"] == 32
    assert by_id["hparam/batch_size"]["by_run"]["./ms"] == 64
    assert by_id["loss"]["by_run"]["./ms"] == 0.25
    assert by_id["metric/accuracy"]["by_run"]["./ms"] == 0.9


def test_the_sub_run_add_hparams_names_by_the_time_is_its_parents_row() -> None:
    surface = MemorySurface()
    surface.add_scalars("./torch", "loss", [0, 1], [1.0, 0.5])
    add_session(surface, "./torch/1700000000.123456", ("hp/acc",), lr=0.1)
    surface.add_scalars("./torch/1700000000.123456", "hp/acc", [0], [0.5])
    # no parent run: the sub-run is its own row
    add_session(surface, "./orphan/1700000001.5", ("hp/acc",), lr=0.2)
    # two add_hparams calls under one run are two trials: two rows
    surface.add_scalars("./sweep", "loss", [0], [1.0])
    for index, name in enumerate(("1700000002.1", "1700000003.1")):
        add_session(surface, f"./sweep/{name}", ("hp/acc",), lr=0.3 + index)
    # a directory named like a number but not like the time is a run of its own
    surface.add_scalars("./lr", "loss", [0], [1.0])
    add_session(surface, "./lr/0.1", (), lr=0.1)
    found = table(surface)
    assert found["runs"] == [
        "./lr/0.1",
        "./orphan/1700000001.5",
        "./sweep/1700000002.1",
        "./sweep/1700000003.1",
        "./torch",
    ]
    by_id = columns(found)
    assert by_id["hparam/lr"]["values"] == [0.1, 0.2, 0.3, 1.3, 0.1]
    assert by_id["metric/hp/acc"]["by_run"]["./torch"] == 0.5


def test_a_sub_run_under_a_run_with_its_own_hparams_keeps_its_row() -> None:
    surface = MemorySurface()
    add_session(surface, "./", ("acc",), lr=0.1)
    add_session(surface, "./1700000000.5", ("acc",), lr=0.2)
    assert table(surface)["runs"] == ["./", "./1700000000.5"]


def test_lightnings_placeholder_metric_is_no_result() -> None:
    surface = MemorySurface()
    add_session(surface, "./placeholder", ("hp_metric",), lr=0.1)
    surface.add_scalars("./placeholder", "hp_metric", [0], [-1.0])
    add_session(surface, "./logged", ("hp_metric",), lr=0.2)
    surface.add_scalars("./logged", "hp_metric", [0, 10], [-1.0, 0.8])
    by_id = columns(table(surface))
    assert by_id["metric/hp_metric"]["by_run"] == {"./placeholder": None, "./logged": 0.8}


def test_new_messages_and_points_change_the_table_and_its_key() -> None:
    surface = MemorySurface()
    add_session(surface, "./a", ("acc",), lr=0.1)
    surface.add_scalars("./a", "acc", [1], [0.5])
    first = table(surface)
    assert table(surface, known=first["key"]) == {"key": first["key"], "unchanged": True}
    surface.add_value("./a", "hparams", START, 1, start(lr=0.2))
    second = table(surface, known=first["key"])
    assert second["key"] != first["key"]
    assert columns(second)["hparam/lr"]["by_run"]["./a"] == 0.2
    surface.add_scalars("./a", "acc", [2], [0.6])
    third = table(surface, known=second["key"])
    assert third["key"] != second["key"]
    assert columns(third)["metric/acc"]["by_run"]["./a"] == 0.6
    add_session(surface, "./b/1700000000.5", ("acc",), lr=0.3)
    surface.add_scalars("./b", "loss", [0], [1.0])
    assert table(surface)["runs"] == ["./a", "./b"]


def test_crafted_messages_are_problems_and_bounded() -> None:
    surface = MemorySurface()
    many = {f"h{i:05d}": float(i) for i in range(MAX_FIELDS + 500)}
    add_session(surface, "./many", (), status=99, **many)
    nested = struct_pb2.Value()
    nested.list_value.values.add().number_value = 1.0
    nested.list_value.values.add().string_value = "<b>x</b>"
    add_session(surface, "./odd", (), status=None, nan=float("nan"), nested=nested)
    surface.add_value("./damaged", "hparams", START, 0, Damaged("crc mismatch"))
    surface.add_value("./damaged", "hparams", EXPERIMENT, 0, "not a message")
    found = table(surface)
    by_id = columns(found)
    assert found["runs"] == ["./damaged", "./many", "./odd"]
    assert sum(c.startswith("hparam/") for c in by_id) == MAX_FIELDS + 2
    assert by_id["session_status"]["by_run"] == {"./damaged": None, "./many": "status 99",
                                                 "./odd": None}  # fmt: skip
    assert by_id["hparam/nan"]["by_run"]["./odd"] is None
    assert by_id["hparam/nested"]["by_run"]["./odd"] == '[1.0, "<b>x</b>"]'
    problems = dict(found["problems"])
    assert f"more than {MAX_FIELDS}" in problems["./many"]
    assert "crc mismatch" in problems["./damaged"]
    assert "not a TensorBoard hparams message" in problems["./damaged"]


# ---------------------------------------------------------------- real files


@pytest.fixture(scope="module")
def tensorboard_base(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """torch's and Lightning's runs under one base directory (Hugging Face's ``Trainer``
    writes its arguments as text, no hyper-parameters)."""
    base = tmp_path_factory.mktemp("hparams") / "base"
    return {
        "torch": torch_every_method(base / "torch"),
        "lightning": lightning_tensorboard_run(base / "lightning"),
        "base": base,
    }


def _time_named(directory: Path) -> list[Path]:
    """The sub-directories ``add_hparams`` made (named by ``str(time.time())``)."""
    return [p for p in directory.iterdir() if p.is_dir() and re.fullmatch(r"\d+\.\d+", p.name)]


def _run_id(base: Path, directory: Path) -> str:
    return f"./{directory.relative_to(base).as_posix()}"


def _session_hparams(directory: Path) -> dict[str, Any]:
    """The newest hyper-parameters TensorBoard's event file reader finds in ``directory``'s
    files, as the table types them (bools as ``true``/``false``). Newest, as the loader
    keeps them: ``EventAccumulator`` keeps a tag's first metadata, and Lightning's run has
    two sessions at step 0 (the fit's, then the test's ``log_hyperparams`` with metrics)."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    content = b""
    for path in sorted(directory.glob("events.out.tfevents.*")):
        for event in EventFileLoader(str(path)).Load():
            for value in event.summary.value:
                if value.tag == START:
                    content = value.metadata.plugin_data.content
    found = HParamsPluginData.FromString(content).session_start_info.hparams
    typed = {}
    for name, value in found.items():
        kind = value.WhichOneof("kind")
        typed[name] = (
            str(value.bool_value).lower() if kind == "bool_value" else getattr(value, kind)
        )
    return typed


def test_runs_the_libraries_wrote_show_their_hparams(tensorboard_base: dict[str, Path]) -> None:
    base = tensorboard_base["base"]
    (torch_sub,) = _time_named(tensorboard_base["torch"])
    runs = {
        "torch": _run_id(base, tensorboard_base["torch"]),
        "lightning": _run_id(base, tensorboard_base["lightning"]),
    }
    settings = BoardSettings.create(base, port=free_port(), workspace=base.parent / "ws")
    with running_server(settings) as url:

        def ready() -> dict[str, Any] | None:
            listing = get_json(f"{url}/api/v1/runs")  # the first pass read every file
            if not listing or listing.get("loading"):
                return None
            found = get_json(f"{url}/api/v1/lineage")
            return found if found and set(runs.values()) <= set(found["runs"]) else None

        found = wait_until(ready, timeout=60)
    by_id = columns(found)
    assert found["problems"] == []
    assert set(found["runs"]) == set(runs.values())  # the sub-runs are their parents' rows
    expected = {
        "torch": _session_hparams(torch_sub),
        "lightning": _session_hparams(tensorboard_base["lightning"]),
    }
    assert expected["torch"] == HPARAMS  # torch writes bools as numbers
    for library, hparams in expected.items():
        shown = {
            column_id.removeprefix("hparam/"): column["by_run"][runs[library]]
            for column_id, column in by_id.items()
            if column_id.startswith("hparam/") and column["by_run"][runs[library]] is not None
        }
        assert shown == pytest.approx(hparams), library
    for tag, value in HPARAMS_METRICS.items():
        assert by_id[f"metric/{tag}"]["by_run"][runs["torch"]] == pytest.approx(value)
    for tag, value in LIGHTNING_HPARAMS_METRICS.items():
        assert by_id[f"metric/{tag}"]["by_run"][runs["lightning"]] == pytest.approx(value)
    assert by_id["session_status"]["by_run"][runs["torch"]] == "success"
