"""Every documented error of ``SummaryRecord``: constructor, ``add_value``, ``record``, modes,
and what a closed record does."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers.file_modes import umask
from helpers.summary import read_events

from sumlens import SummaryRecord
from sumlens.io import iter_events
from sumlens.landscape import LossLandscape
from sumlens.lineage import DatasetGraph, EvaluationLineage, TrainLineage, UserDefinedInfo
from sumlens.summary.intake import PLUGINS

# ---- constructor ------------------------------------------------------------------------


@pytest.mark.parametrize("log_dir", [123, None, b"bytes", ["dir"]])
def test_log_dir_of_wrong_type_is_a_type_error(log_dir: object) -> None:
    with pytest.raises(TypeError, match="log_dir"):
        SummaryRecord(log_dir)  # type: ignore[arg-type]


@pytest.mark.parametrize("log_dir", ["", "   ", "\t\n"])
def test_blank_log_dir_is_a_value_error(log_dir: str) -> None:
    with pytest.raises(ValueError, match="log_dir"):
        SummaryRecord(log_dir)


def test_log_dir_that_is_a_file_is_not_a_directory(tmp_path: Path) -> None:
    existing = tmp_path / "file"
    existing.write_text("not a directory")
    with pytest.raises(NotADirectoryError):
        SummaryRecord(str(existing))


def test_log_dir_is_created_with_the_umask_mode_and_accepts_paths(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    with umask(0o027), SummaryRecord(target) as record:
        assert Path(record.log_dir).parent == target.resolve()
    assert target.is_dir()
    assert target.stat().st_mode & 0o777 == 0o750
    with SummaryRecord(tmp_path / "c", owner_only=True):
        pass
    assert (tmp_path / "c").stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize("name", ["file_prefix", "file_suffix"])
@pytest.mark.parametrize("value", ["a-b", "a/b", "", " x", "é", "x y", ".x"])
def test_prefix_and_suffix_must_match_mindspore_pattern(
    tmp_path: Path, name: str, value: str
) -> None:
    with pytest.raises(ValueError, match=name):
        SummaryRecord(tmp_path, **{name: value})


@pytest.mark.parametrize("name", ["file_prefix", "file_suffix"])
@pytest.mark.parametrize("value", [None, 1, b"x"])
def test_prefix_and_suffix_must_be_str(tmp_path: Path, name: str, value: object) -> None:
    with pytest.raises(TypeError, match=name):
        SummaryRecord(tmp_path, **{name: value})


@pytest.mark.parametrize("prefix,suffix", [("_x.y", "_MS"), ("run1", "_a.b"), ("A", "z")])
def test_allowed_prefix_and_suffix_name_the_file(tmp_path: Path, prefix: str, suffix: str) -> None:
    with SummaryRecord(tmp_path, file_prefix=prefix, file_suffix=suffix) as record:
        record.add_value("scalar", "x", 1.0)
        record.record(1)
        path = Path(record.log_dir)
    assert path.name.startswith(f"{prefix}.out.events.summary.")
    assert path.name.endswith(suffix)
    assert path.exists()


@pytest.mark.parametrize("size", ["100", 1.5, True, [1]])
def test_max_file_size_of_wrong_type_is_a_type_error(tmp_path: Path, size: object) -> None:
    with pytest.raises(TypeError, match="max_file_size"):
        SummaryRecord(tmp_path, max_file_size=size)  # type: ignore[arg-type]


@pytest.mark.parametrize("size", [0, -1, -(2**40), 43, 44, 82])
def test_max_file_size_that_holds_no_step_is_a_value_error(tmp_path: Path, size: int) -> None:
    with pytest.raises(ValueError, match=rf"max_file_size={size} .* at least 83 bytes"):
        SummaryRecord(tmp_path, max_file_size=size)


@pytest.mark.parametrize("file_format", ["mindspore", "tensorboard"])
def test_the_smallest_max_file_size_writes_a_step_per_file(
    tmp_path: Path, file_format: str
) -> None:
    with pytest.raises(ValueError, match=r"at least (\d+) bytes") as raised:
        SummaryRecord(tmp_path / "probe", max_file_size=1, file_format=file_format)
    smallest = int(re.search(r"at least (\d+) bytes", str(raised.value)).group(1))
    with SummaryRecord(
        tmp_path / "run", max_file_size=smallest, file_format=file_format, raise_exception=True
    ) as rec:
        for step in range(1, 4):
            rec.add_value("scalar", "x", 1.0)
            assert rec.record(step)
    assert [e.step for e in iter_events(tmp_path / "run")] == [1, 2, 3]
    assert len(list((tmp_path / "run").iterdir())) == 3


@pytest.mark.parametrize("flag", [1, 0, "True", None])
def test_raise_exception_must_be_bool(tmp_path: Path, flag: object) -> None:
    with pytest.raises(TypeError, match="raise_exception"):
        SummaryRecord(tmp_path, raise_exception=flag)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "num_process,error", [("4", TypeError), (2.0, TypeError), (True, TypeError), (0, ValueError)]
)
def test_num_process_is_checked(tmp_path: Path, num_process: object, error: type) -> None:
    with pytest.raises(error, match="num_process"):
        SummaryRecord(tmp_path, num_process=num_process)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "options,error",
    [
        ({"image_format": "npy"}, ValueError),
        ({"tensor_format": "txt"}, ValueError),
        ({"tensor_format": "NPY"}, ValueError),
        ({1: "npy"}, TypeError),
        ({"tensor_format": 1}, TypeError),
        ("npy", TypeError),
        ([("tensor_format", "npy")], TypeError),
    ],
)
def test_export_options_are_checked(tmp_path: Path, options: object, error: type) -> None:
    with pytest.raises(error, match="export_options"):
        SummaryRecord(tmp_path, export_options=options)  # type: ignore[arg-type]


@pytest.mark.parametrize("options", [None, {}, {"tensor_format": None}, {"tensor_format": "npy"}])
def test_valid_export_options(tmp_path: Path, options: dict | None) -> None:
    SummaryRecord(tmp_path, export_options=options).close()


@pytest.mark.parametrize("network", ["net", 1, object(), torch.zeros(1)])
def test_network_must_be_a_module(tmp_path: Path, network: object) -> None:
    with pytest.raises(TypeError, match="network"):
        SummaryRecord(tmp_path, network=network)


def test_file_format_and_pending_bound_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="file_format"):
        SummaryRecord(tmp_path, file_format="csv")
    with pytest.raises(ValueError, match="max_pending_bytes"):
        SummaryRecord(tmp_path, max_pending_bytes=0)
    with pytest.raises(TypeError, match="max_pending_bytes"):
        SummaryRecord(tmp_path, max_pending_bytes=1.0)  # type: ignore[arg-type]


def test_a_failed_constructor_leaves_nothing_open(tmp_path: Path) -> None:
    from sumlens.summary import registry

    with pytest.raises(ValueError):
        SummaryRecord(tmp_path, file_prefix="bad-prefix")
    assert registry.open_records() == []
    assert list(tmp_path.iterdir()) == []


# ---- add_value --------------------------------------------------------------------------


@pytest.fixture
def record(tmp_path: Path):
    with SummaryRecord(tmp_path / "run") as rec:
        yield rec


def test_unknown_plugin_lists_the_plugins(record: SummaryRecord) -> None:
    with pytest.raises(ValueError, match="audio") as info:
        record.add_value("audio", "x", np.zeros(3))
    for plugin in PLUGINS:
        assert plugin in str(info.value)


def test_plugin_of_wrong_type(record: SummaryRecord) -> None:
    with pytest.raises(TypeError, match="plugin"):
        record.add_value(None, "x", 1.0)  # type: ignore[arg-type]


@pytest.mark.parametrize("plugin", ["SCALAR", "Scalar", "sCaLaR"])
def test_plugin_names_are_case_insensitive(record: SummaryRecord, plugin: str) -> None:
    record.add_value(plugin, "x", 1.0)


def test_landscape_in_capitals_as_in_the_seed_doc_is_accepted(tmp_path: Path) -> None:
    landscape = LossLandscape(x=[0.0, 1.0], y=[0.0, 1.0], z=[[1.0, 2.0], [3.0, 4.0]])
    with SummaryRecord(tmp_path) as record:
        record.add_value("LANDSCAPE", "landscape_[1]", landscape)
        record.record(1)
    [event] = read_events(tmp_path)
    assert (event.plugin, event.tag) == ("landscape", "landscape_[1]")


@pytest.mark.parametrize("plugin", ["scalar", "image", "tensor", "histogram"])
@pytest.mark.parametrize("name", [None, 1, b"x", ["x"]])
def test_name_must_be_str(record: SummaryRecord, plugin: str, name: object) -> None:
    with pytest.raises(TypeError, match="name"):
        record.add_value(plugin, name, np.zeros((1, 3, 2, 2)))  # type: ignore[arg-type]


@pytest.mark.parametrize("plugin", ["scalar", "image", "tensor", "histogram"])
def test_name_must_not_be_empty(record: SummaryRecord, plugin: str) -> None:
    value = np.zeros((1, 1, 1, 1))
    with pytest.raises(ValueError, match="name"):
        record.add_value(plugin, "", value)


@pytest.mark.parametrize("plugin", ["scalar", "image", "tensor", "histogram"])
@pytest.mark.parametrize("value", ["1.0", [1.0, 2.0], {"a": 1}, None, object()])
def test_non_array_value_is_a_type_error(record: SummaryRecord, plugin: str, value: object) -> None:
    with pytest.raises(TypeError):
        record.add_value(plugin, "x", value)


@pytest.mark.parametrize(
    "value", [np.zeros(2), np.zeros((1, 2)), torch.zeros(3), np.zeros(0), np.zeros((2, 0))]
)
def test_scalar_must_hold_exactly_one_element(record: SummaryRecord, value: object) -> None:
    with pytest.raises(ValueError, match="scalar"):
        record.add_value("scalar", "x", value)


@pytest.mark.parametrize(
    "value", [np.float32(1), np.ones(1), np.ones((1, 1, 1)), torch.ones(()), 3, 2.5, True]
)
def test_scalar_of_any_shape_with_one_element(record: SummaryRecord, value: object) -> None:
    record.add_value("scalar", "x", value)


@pytest.mark.parametrize("shape", [(3, 4), (3, 4, 5), (1, 1, 3, 4, 5), (2,)])
def test_image_of_wrong_rank(record: SummaryRecord, shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="image"):
        record.add_value("image", "x", np.zeros(shape))


@pytest.mark.parametrize("shape", [(1, 2, 4, 4), (1, 4, 4, 4), (0, 3, 4, 4), (1, 3, 0, 4)])
def test_image_with_wrong_channels_or_empty_dimension(
    record: SummaryRecord, shape: tuple[int, ...]
) -> None:
    with pytest.raises(ValueError, match="channels"):
        record.add_value("image", "x", np.zeros(shape))


@pytest.mark.parametrize(
    "dataformats,shape",
    [("NCHW", (1, 4, 5)), ("NHWC", (2, 4, 5, 2)), ("CHW", (2, 4, 5)), ("HWC", (4, 5, 4))],
)
def test_image_shape_is_checked_against_its_dataformats(
    record: SummaryRecord, dataformats: str, shape: tuple[int, ...]
) -> None:
    with pytest.raises(ValueError):
        record.add_value("image", "x", np.zeros(shape), dataformats=dataformats)


def test_unknown_dataformats(record: SummaryRecord) -> None:
    with pytest.raises(ValueError, match="dataformats"):
        record.add_value("image", "x", np.zeros((1, 3, 4, 4)), dataformats="NCWH")


@pytest.mark.parametrize("plugin", ["tensor", "histogram"])
@pytest.mark.parametrize("value", [np.float32(1), np.array(2.0), torch.tensor(1.0), 1.0, 7])
def test_tensor_and_histogram_must_not_be_0d(
    record: SummaryRecord, plugin: str, value: object
) -> None:
    with pytest.raises(ValueError, match="dimension"):
        record.add_value(plugin, "x", value)


@pytest.mark.parametrize(
    "value",
    [np.zeros(3, np.complex64), torch.zeros(3, dtype=torch.complex64), np.array(["a", "b"])],
)
def test_tensor_of_unsupported_dtype(record: SummaryRecord, value: object) -> None:
    with pytest.raises(TypeError, match="dtype"):
        record.add_value("tensor", "x", value)


@pytest.mark.parametrize(
    "plugin,value",
    [
        ("train_lineage", EvaluationLineage(metrics={"acc": 1.0})),
        ("eval_lineage", TrainLineage(optimizer="SGD")),
        ("dataset_graph", UserDefinedInfo({"a": 1})),
        ("custom_lineage_data", DatasetGraph(op_type="Batch")),
        ("train_lineage", {"optimizer": "SGD"}),
        ("eval_lineage", "acc=1"),
        ("dataset_graph", np.zeros(3)),
        ("landscape", TrainLineage()),
        ("landscape", np.zeros((2, 2))),
        ("graph", TrainLineage()),
        ("graph", "not bytes"),
    ],
)
def test_message_plugins_reject_the_wrong_builder(
    record: SummaryRecord, plugin: str, value: object
) -> None:
    with pytest.raises(TypeError, match=plugin):
        record.add_value(plugin, "x", value)


def test_graph_bytes_must_parse(record: SummaryRecord) -> None:
    with pytest.raises(ValueError, match="GraphProto"):
        record.add_value("graph", "g", b"\xff\xff\xff\xff")


@pytest.mark.parametrize(
    "plugin,value",
    [
        ("train_lineage", TrainLineage(optimizer="SGD")),
        ("eval_lineage", EvaluationLineage(metrics={"acc": 0.5})),
        ("dataset_graph", DatasetGraph(op_type="Batch")),
        ("custom_lineage_data", UserDefinedInfo({"a": 1})),
        ("custom_lineage_data", {"a": 1}),
    ],
)
def test_message_plugins_do_not_check_the_name(
    record: SummaryRecord, plugin: str, value: object
) -> None:
    record.add_value(plugin, None, value)  # type: ignore[arg-type]


# ---- record, set_mode -------------------------------------------------------------------


@pytest.mark.parametrize("step", ["1", 1.0, None, True, False, np.float32(1)])
def test_step_must_be_an_int(record: SummaryRecord, step: object) -> None:
    with pytest.raises(TypeError, match="step"):
        record.record(step)  # type: ignore[arg-type]


def test_negative_steps_are_accepted(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path) as rec:
        rec.add_value("scalar", "x", 1.0)
        assert rec.record(-5) is True
    assert [e.step for e in read_events(tmp_path)] == [-5]


@pytest.mark.parametrize("network", ["net", 1, torch.zeros(1)])
def test_train_network_must_be_a_module(record: SummaryRecord, network: object) -> None:
    with pytest.raises(TypeError, match="train_network"):
        record.record(1, train_network=network)


def test_train_network_module_is_accepted(record: SummaryRecord) -> None:
    assert record.record(1, train_network=torch.nn.Linear(2, 2)) is True


@pytest.mark.parametrize("plugin_filter", ["scalar", 1, ["scalar"]])
def test_plugin_filter_must_be_callable(record: SummaryRecord, plugin_filter: object) -> None:
    with pytest.raises(TypeError, match="plugin_filter"):
        record.record(1, plugin_filter=plugin_filter)  # type: ignore[arg-type]


def test_plugin_filter_drops_rather_than_defers(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path) as rec:
        rec.add_value("scalar", "kept", 1.0)
        rec.add_value("tensor", "dropped", np.ones(2))
        rec.record(1, plugin_filter=lambda plugin: plugin == "scalar")
        rec.record(2)
    assert [(e.step, e.tag) for e in read_events(tmp_path)] == [(1, "kept")]


@pytest.mark.parametrize("mode", ["TRAIN", "test", "", None, 1])
def test_set_mode_rejects_unknown_modes(record: SummaryRecord, mode: object) -> None:
    with pytest.raises(ValueError, match="mode"):
        record.set_mode(mode)  # type: ignore[arg-type]
    assert record.mode == "train"


def test_set_mode_accepts_train_and_eval(record: SummaryRecord) -> None:
    record.set_mode("eval")
    assert record.mode == "eval"
    record.set_mode("train")
    assert record.mode == "train"


# ---- a closed record --------------------------------------------------------------------


def test_closed_record_returns_false_and_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rec = SummaryRecord(tmp_path)
    rec.close()
    with caplog.at_level(logging.ERROR, logger="sumlens"):
        assert rec.record(1) is False
    assert any("closed" in r.getMessage() for r in caplog.records)


def test_flush_after_close_logs_and_does_not_raise(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rec = SummaryRecord(tmp_path)
    rec.close()
    with caplog.at_level(logging.ERROR, logger="sumlens"):
        rec.flush()
    assert any("can not flush" in r.getMessage() for r in caplog.records)


def test_a_closed_record_says_so_once_however_often_it_is_called(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Issue 25 item 19: a loop going on after close() logged an error per record() and
    # flush() (201 lines for 100 steps); it is said once, naming the first call.
    rec = SummaryRecord(tmp_path)
    rec.close()
    with caplog.at_level(logging.DEBUG, logger="sumlens"):
        for step in range(100):
            rec.add_value("scalar", "loss", 1.0)
            assert rec.record(step) is False
        rec.flush()
        rec.add_value("histogram", "w", np.ones(3))
        rec.flush()
    assert len(caplog.records) == 1, [r.getMessage() for r in caplog.records]
    [said] = caplog.records
    assert said.levelno == logging.ERROR
    assert "is closed; add_value('scalar', 'loss') wrote nothing" in said.getMessage()


@pytest.mark.parametrize("first", ["record", "flush"])
def test_a_closed_record_names_the_first_call_that_wrote_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, first: str
) -> None:
    rec = SummaryRecord(tmp_path)
    rec.close()
    with caplog.at_level(logging.DEBUG, logger="sumlens"):
        for _ in range(3):
            rec.record(5) if first == "record" else rec.flush()
            rec.flush() if first == "record" else rec.record(5)
    assert len(caplog.records) == 1, [r.getMessage() for r in caplog.records]
    expected = "record(5) wrote nothing" if first == "record" else "flush() (it can not flush)"
    assert expected in caplog.records[0].getMessage()


def test_close_is_idempotent(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    rec = SummaryRecord(tmp_path)
    rec.add_value("scalar", "x", 1.0)
    rec.record(1)
    rec.close()
    with caplog.at_level(logging.DEBUG, logger="sumlens"):
        rec.close()
        rec.close()
    assert caplog.records == []
    assert not rec.is_open


def test_closed_record_as_context_manager_is_a_value_error(tmp_path: Path) -> None:
    rec = SummaryRecord(tmp_path)
    rec.close()
    with pytest.raises(ValueError, match="closed"), rec:
        pass


def test_context_manager_closes(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path) as rec:
        assert rec.is_open
    assert not rec.is_open
    with pytest.raises(ValueError, match="closed"), rec:
        pass
