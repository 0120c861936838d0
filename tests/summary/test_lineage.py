"""Lineage builders, ``from_config`` and loss landscapes round-trip through a record."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.summary import files_of, read_events, user_info

from sumlens import SummaryRecord
from sumlens._proto import lineage_pb2
from sumlens.io.decode import ms_tensor_to_array
from sumlens.landscape import LossLandscape
from sumlens.lineage import (
    DatasetGraph,
    EvaluationLineage,
    TrainLineage,
    UserDefinedInfo,
    from_config,
)


def round_trip(tmp_path: Path, plugin: str, value: Any) -> Any:
    """Record ``value`` under ``plugin`` and return the message read back from the files."""
    with SummaryRecord(tmp_path) as rec:
        rec.add_value(plugin, "ignored", value)
        rec.record(4)
    [event] = read_events(tmp_path)
    assert event.plugin == plugin
    return event


def test_train_lineage_round_trip(tmp_path: Path) -> None:
    lineage = TrainLineage(
        optimizer="Momentum",
        learning_rate=0.01,
        loss_function="SoftmaxCrossEntropyWithLogits",
        epoch=10,
        parallel_mode="stand_alone",
        device_num=1,
        batch_size=32,
        train_dataset_path="/data/train",
        train_dataset_size=60000,
        network="LeNet5",
        loss=0.125,
        model_path="/ckpt/lenet.ckpt",
        model_size=1234567890123,
    )
    event = round_trip(tmp_path, "train_lineage", lineage)
    assert event.step == 0  # MindSpore leaves lineage events at step 0
    msg = event.value
    hyper = msg.hyper_parameters
    assert (hyper.optimizer, hyper.loss_function, hyper.parallel_mode) == (
        "Momentum",
        "SoftmaxCrossEntropyWithLogits",
        "stand_alone",
    )
    assert hyper.learning_rate == pytest.approx(0.01)
    assert (hyper.epoch, hyper.device_num, hyper.batch_size) == (10, 1, 32)
    assert msg.train_dataset.train_dataset_path == "/data/train"
    assert msg.train_dataset.train_dataset_size == 60000
    assert (msg.algorithm.network, msg.algorithm.loss) == ("LeNet5", 0.125)
    assert json.loads(msg.model.path) == {"ckpt": "/ckpt/lenet.ckpt"}
    assert msg.model.size == 1234567890123
    [lineage_file] = files_of(tmp_path, "lineage")
    assert files_of(tmp_path, "summary") == []
    assert lineage_file.name.endswith("_lineage")


def test_evaluation_lineage_round_trip(tmp_path: Path) -> None:
    metrics = {"accuracy": np.float32(0.5), "loss": 0.25, "per_class": np.array([1, 2])}
    lineage = EvaluationLineage(
        metrics=metrics, valid_dataset_path="/data/val", valid_dataset_size=10000
    )
    msg = round_trip(tmp_path, "eval_lineage", lineage).value
    assert json.loads(msg.metric) == {"accuracy": 0.5, "loss": 0.25, "per_class": [1, 2]}
    assert msg.valid_dataset.valid_dataset_path == "/data/val"
    assert msg.valid_dataset.valid_dataset_size == 10000


def test_dataset_graph_round_trip(tmp_path: Path) -> None:
    source = DatasetGraph(
        op_type="MnistDataset",
        params={"dataset_dir": "/data", "shuffle": True, "num_parallel_workers": 4},
    )
    mapped = DatasetGraph(
        op_type="Map",
        params={"input_columns": ["image"], "scale": 0.5, "big": 2**40},
        children=[source],
    )
    root = DatasetGraph(op_type="Batch", params={"batch_size": 32}, children=[mapped])
    msg = round_trip(tmp_path, "dataset_graph", root).value
    assert msg.parameter.mapStr["op_type"] == "Batch"
    assert msg.parameter.mapInt["batch_size"] == 32
    [child] = msg.children
    assert list(child.parameter.mapStrList["input_columns"].strValue) == ["image"]
    assert child.parameter.mapDouble["scale"] == 0.5
    assert child.parameter.mapStr["big"] == str(2**40)
    [leaf] = child.children
    assert leaf.parameter.mapStr["op_type"] == "MnistDataset"
    assert leaf.parameter.mapBool["shuffle"] is True
    assert leaf.parameter.mapInt["num_parallel_workers"] == 4


def test_user_defined_info_round_trip(tmp_path: Path) -> None:
    data = {"lr": 0.5, "epochs": 3, "name": "run-1", "huge": 2**40}
    msg = round_trip(tmp_path, "custom_lineage_data", UserDefinedInfo(data)).value
    assert user_info(msg) == {"lr": 0.5, "epochs": 3, "name": "run-1", "huge": str(2**40)}
    assert [len(entry.ListFields()) for entry in msg.user_info] == [1, 1, 1, 1]


def test_custom_lineage_accepts_a_plain_dict(tmp_path: Path) -> None:
    msg = round_trip(tmp_path, "custom_lineage_data", {"a": 1, "b": "x"}).value
    assert user_info(msg) == {"a": 1, "b": "x"}


def test_protobuf_messages_are_accepted_as_they_are(tmp_path: Path) -> None:
    message = lineage_pb2.TrainLineage()
    message.hyper_parameters.optimizer = "Adam"
    assert round_trip(tmp_path, "train_lineage", message).value == message


def test_every_lineage_plugin_in_one_step_goes_to_the_lineage_file(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path) as rec:
        rec.add_value("train_lineage", "", TrainLineage(epoch=1))
        rec.add_value("eval_lineage", "", EvaluationLineage(metrics={"acc": 1.0}))
        rec.add_value("dataset_graph", "", DatasetGraph(op_type="Batch"))
        rec.add_value("custom_lineage_data", "", UserDefinedInfo({"k": 1}))
        rec.add_value("scalar", "s", 1.0)
        rec.record(1)
    [lineage] = files_of(tmp_path, "lineage")
    plugins = sorted(e.plugin for e in read_events(lineage))
    assert plugins == ["custom_lineage_data", "dataset_graph", "eval_lineage", "train_lineage"]
    [summary] = files_of(tmp_path, "summary")
    assert [e.plugin for e in read_events(summary)] == ["scalar"]


EXPECTED_CONFIG = {
    "lr": 0.001,
    "epochs": 5,
    "name": "baseline",
    "amp": "True",
    "resume": "None",
    "layers": "[64, 32]",
    "optim.name": "AdamW",
    "optim.betas": "[0.9, 0.999]",
    "optim.decay.rate": 0.5,
    "optim.decay.enabled": "False",
}


def test_from_config_with_a_nested_dict(tmp_path: Path) -> None:
    config = {
        "lr": 0.001,
        "epochs": 5,
        "name": "baseline",
        "amp": True,
        "resume": None,
        "layers": [64, 32],
        "optim": {
            "name": "AdamW",
            "betas": [0.9, 0.999],
            "decay": {"rate": 0.5, "enabled": False},
        },
    }
    msg = round_trip(tmp_path, "custom_lineage_data", from_config(config)).value
    assert user_info(msg) == EXPECTED_CONFIG


def test_from_config_with_an_argparse_namespace(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.001)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--name", default="baseline")
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--resume", default=None)
    parser.add_argument("--layers", type=int, nargs="+", default=[64, 32])
    args = parser.parse_args(["--amp"])
    args.optim = {"name": "AdamW", "betas": [0.9, 0.999], "decay": {"rate": 0.5}}
    args.optim["decay"]["enabled"] = False
    msg = round_trip(tmp_path, "custom_lineage_data", from_config(args)).value
    assert user_info(msg) == EXPECTED_CONFIG


@dataclasses.dataclass
class Decay:
    rate: float = 0.5
    enabled: bool = False


@dataclasses.dataclass
class Optim:
    name: str = "AdamW"
    betas: tuple[float, float] = (0.9, 0.999)
    decay: Decay = dataclasses.field(default_factory=Decay)


@dataclasses.dataclass
class Config:
    lr: float = 0.001
    epochs: int = 5
    name: str = "baseline"
    amp: bool = True
    resume: str | None = None
    layers: list[int] = dataclasses.field(default_factory=lambda: [64, 32])
    optim: Optim = dataclasses.field(default_factory=Optim)


def test_from_config_with_a_dataclass(tmp_path: Path) -> None:
    msg = round_trip(tmp_path, "custom_lineage_data", from_config(Config())).value
    assert user_info(msg) == {**EXPECTED_CONFIG, "optim.betas": "(0.9, 0.999)"}


def test_from_config_rejects_other_types() -> None:
    with pytest.raises(TypeError, match="from_config"):
        from_config([("lr", 0.1)])


# ---- loss landscapes ---------------------------------------------------------------------


def landscape_arrays(message) -> dict[str, np.ndarray]:
    return {axis: ms_tensor_to_array(getattr(message, axis)) for axis in "xyz"}


def test_interval_landscape_round_trip(tmp_path: Path) -> None:
    x = np.linspace(-1, 1, 5)
    y = np.linspace(-2, 2, 5)
    z = np.add.outer(y**2, x**2).astype(np.float32)
    landscape = LossLandscape(
        x=x,
        y=y,
        z=z,
        intervals=[1, 2, 3],
        path=([0.1, 0.2, 0.3], [0.0, -0.1, -0.2], [1.0, 0.9, 0.8]),
        convergence_point=(0.3, -0.2, 0.8),
        decomposition="PCA",
        unit="epoch",
        step_per_epoch=100,
    )
    tag = landscape.default_tag(3)
    assert tag == "landscape_[1, 3]"
    with SummaryRecord(tmp_path) as rec:
        rec.add_value("landscape", tag, landscape)
        rec.record(3)
    [event] = read_events(tmp_path)
    assert (event.plugin, event.tag, event.step) == ("landscape", tag, 3)
    msg = event.value
    grid = landscape_arrays(msg.landscape)
    np.testing.assert_allclose(grid["x"], x, rtol=1e-7)
    np.testing.assert_allclose(grid["y"], y, rtol=1e-7)
    np.testing.assert_array_equal(grid["z"], z)
    assert list(msg.loss_path.intervals) == [1, 2, 3]
    path = landscape_arrays(msg.loss_path.points)
    np.testing.assert_allclose(path["x"], [0.1, 0.2, 0.3], rtol=1e-7)
    np.testing.assert_allclose(path["z"], [1.0, 0.9, 0.8], rtol=1e-7)
    point = landscape_arrays(msg.convergence_point)
    assert [float(point[a][0]) for a in "xyz"] == pytest.approx([0.3, -0.2, 0.8])
    assert (msg.metadata.decomposition, msg.metadata.unit) == ("PCA", "epoch")
    assert msg.metadata.step_per_epoch == 100


def test_final_landscape_round_trip(tmp_path: Path) -> None:
    z = np.arange(9, dtype=np.float64).reshape(3, 3)
    landscape = LossLandscape(x=[0, 1, 2], y=[0.0, 0.5, 1.0], z=z, decomposition="Random")
    assert landscape.is_final
    with SummaryRecord(tmp_path) as rec:
        rec.add_value("landscape", landscape.default_tag(10), landscape)
        rec.add_value("scalar", "loss", 1.0)
        rec.record(10)
    events = {e.plugin: e for e in read_events(tmp_path)}
    msg = events["landscape"].value
    assert events["landscape"].tag == "landscape_[10]"
    assert not msg.HasField("loss_path")
    np.testing.assert_array_equal(landscape_arrays(msg.landscape)["z"], z)
    assert msg.metadata.decomposition == "Random"
    assert events["scalar"].value == 1.0


def test_landscape_in_tensorboard_format_is_skipped_with_a_warning(tmp_path: Path) -> None:
    landscape = LossLandscape(x=[0.0, 1.0], y=[0.0, 1.0], z=np.zeros((2, 2)))
    with SummaryRecord(tmp_path, file_format="tensorboard") as rec:
        rec.add_value("landscape", "l", landscape)
        rec.add_value("scalar", "s", 1.0)
        rec.record(1)
    assert [e.plugin for e in read_events(tmp_path)] == ["scalar"]
