"""PyTorch Lightning: ``SumlensLogger`` and ``SumlensCallback`` with the real Lightning on CPU.

A tiny module (tests/helpers/lightning_run.py) is fitted for two epochs; what it wrote is
read back with TensorBoard's own reader and with ``sumlens.io``. With ``ddp`` on two
processes the run is one, and rank 1 writes nothing. The directories are those Lightning's
``TensorBoardLogger`` picks for the same arguments.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import uuid
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("lightning")

import torch
from helpers.lightning_run import SAMPLES, fit
from helpers.s3 import aws_environment, bucket_server, s3_options
from helpers.summary import user_info
from lightning.pytorch.loggers import TensorBoardLogger
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.hparams import plugin_data_pb2

from sumlens.integrations.lightning import SumlensCallback, SumlensLogger
from sumlens.io import iter_events, open_storage, read_scalars

HELPER = Path(__file__).resolve().parents[1] / "helpers" / "lightning_run.py"
STEPS = 8
"""Optimizer steps of a fit: 2 epochs of 4 batches of 8."""
COLLECTED = [1, 2, 4, 6, 8]
"""The callback's steps at ``collect_freq=2``: the first, then every second."""
BUCKET = "lightning-runs"


def _accumulator(run: Path) -> EventAccumulator:
    acc = EventAccumulator(str(run), size_guidance={"images": 0, "histograms": 0, "scalars": 0})
    acc.Reload()
    return acc


def _lineage(run: Path) -> dict[str, list]:
    found: dict[str, list] = defaultdict(list)
    for event in iter_events(run):
        if event.plugin.endswith("lineage") or event.plugin == "custom_lineage_data":
            found[event.plugin].append(event.value)
    return found


def _custom(messages: list) -> dict:
    values: dict = {}
    for info in messages:
        values.update(user_info(info))
    return values


def _hparams(acc: EventAccumulator) -> dict:
    content = acc.PluginTagToContent("hparams")["_hparams_/session_start_info"]
    info = plugin_data_pb2.HParamsPluginData.FromString(content).session_start_info
    return {key: value.WhichOneof("kind") and getattr(value, value.WhichOneof("kind"))
            for key, value in info.hparams.items()}  # fmt: skip


def test_fit_writes_one_run_that_reads_back(tmp_path: Path) -> None:
    callback = SumlensCallback(collect_freq=2, histogram_regular=r"head\.")
    fit(SumlensLogger(tmp_path), [callback])

    assert sorted(os.listdir(tmp_path / "lightning_logs")) == ["version_0"]
    run = tmp_path / "lightning_logs" / "version_0"
    acc = _accumulator(run)
    tags = acc.Tags()

    train_loss = acc.Scalars("train_loss")
    assert [e.step for e in train_loss] == list(range(STEPS))
    lrs = acc.Scalars("learning_rate/auto")
    assert [e.step for e in lrs] == COLLECTED
    assert [round(e.value, 6) for e in lrs] == [0.1, 0.1, 0.1, 0.05, 0.05]  # StepLR per epoch
    assert [e.value for e in acc.Scalars("hp_metric")] == [-1.0]
    assert len(acc.Scalars("val_acc")) == 2

    assert sorted(tags["histograms"]) == ["head.bias/auto", "head.weight/auto"]
    assert [e.step for e in acc.Histograms("head.weight/auto")] == COLLECTED
    assert acc.Histograms("head.bias/auto")[0].histogram_value.num == 3
    assert [e.step for e in acc.Images("input_data/auto")] == COLLECTED
    assert tags["graph"] and any(node.op for node in acc.Graph().node)
    assert _hparams(acc) == {"lr": 0.1, "optim/name": "sgd", "optim/momentum": 0.0}

    scalars = read_scalars(run)
    assert set(scalars) >= {"train_loss", "val_loss", "learning_rate/auto", "hp_metric"}
    assert list(scalars["train_loss"][0]) == list(range(STEPS))
    assert list(scalars["learning_rate/auto"][0]) == COLLECTED

    lineage = _lineage(run)
    custom = _custom(lineage["custom_lineage_data"])
    assert custom["lr"] == 0.1 and custom["optim/name"] == "sgd"
    best = Path(custom["checkpoint.best_model_path"])
    assert best.parent == run / "checkpoints" and best.name == "epoch=1-step=8.ckpt"
    assert "checkpoint.best_model_score" not in custom  # no monitored metric: no score
    evaluations = lineage["eval_lineage"]  # hp_metric = -1 is a placeholder, not a result
    assert len(evaluations) == 2  # one per validation epoch, none for the sanity check
    assert all("val_acc" in json.loads(e.metric) for e in evaluations)
    assert "val_loss" in json.loads(evaluations[-1].metric)
    assert evaluations[-1].valid_dataset.valid_dataset_size == SAMPLES
    assert (run / "hparams.yaml").is_file()


def test_mindspore_format_and_landscape_weights(tmp_path: Path) -> None:
    landscape = {"unit": "step", "intervals": [[2, 3, 4]]}
    callback = SumlensCallback(1, collect_landscape=landscape)
    fit(SumlensLogger(tmp_path, "ms", file_format="mindspore"), [callback])
    run = tmp_path / "ms" / "version_0"
    saved = sorted(p.name for p in (run / "ckpt_dir").iterdir())
    assert saved == [*(f"TinyImageModule_{n}_step.ckpt" for n in (2, 3, 4)), "train_metadata.json"]
    assert any(p.name.endswith("_MS") for p in run.iterdir())
    plugins: dict[str, set[str]] = defaultdict(set)
    for event in iter_events(run):
        plugins[event.plugin].add(event.tag)
    assert {"train_loss", "learning_rate/auto", "hp_metric"} <= plugins["scalar"]
    assert "features.0.weight/auto" in plugins["histogram"]  # the first five parameters
    assert plugins["image"] == {"input_data/auto"}
    assert plugins["graph"]
    assert plugins["eval_lineage"] and plugins["custom_lineage_data"]
    scalars = read_scalars(run)
    assert list(scalars["learning_rate/auto"][0]) == list(range(1, STEPS + 1))


@pytest.mark.slow
def test_ddp_on_two_processes_writes_one_run_and_nothing_from_rank_1(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(HELPER), str(tmp_path), "2"],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert sorted(os.listdir(tmp_path / "lightning_logs")) == ["version_0"]
    run = tmp_path / "lightning_logs" / "version_0"
    files = [p.relative_to(run).as_posix() for p in run.rglob("*") if p.is_file()]
    events = [f for f in files if "tfevents" in f]
    lineage = [f for f in files if f.endswith("_lineage")]
    assert len(events) == 1 and len(lineage) == 1, files
    assert ".summary." in lineage[0] and lineage[0].split(".")[5] == "0"  # the rank in the name
    acc = _accumulator(run)
    assert [e.step for e in acc.Scalars("train_loss")] == [0, 1, 2, 3]  # 2 batches per rank
    assert [e.step for e in acc.Scalars("learning_rate/auto")] == [1, 2, 4]
    assert acc.Tags()["histograms"] and acc.Tags()["graph"]
    assert _hparams(acc)["lr"] == 0.1


CASES = [
    pytest.param({}, id="defaults"),
    pytest.param({"name": "exp", "version": 5}, id="int-version"),
    pytest.param({"name": "exp", "version": "run_a"}, id="str-version"),
    pytest.param({"name": ""}, id="no-name"),
    pytest.param({"name": None}, id="name-none"),
]


@pytest.mark.parametrize("arguments", CASES)
def test_layout_equals_tensorboard_logger(tmp_path: Path, arguments: dict) -> None:
    for taken in ("version_0", "version_3", "version_x"):
        (tmp_path / "lightning_logs" / taken).mkdir(parents=True)
        (tmp_path / taken).mkdir()
    (tmp_path / "lightning_logs" / "version_9").touch()  # a file, not a version
    ours = SumlensLogger(tmp_path, **arguments)
    theirs = TensorBoardLogger(tmp_path, **arguments)
    for attribute in ("save_dir", "name", "version", "root_dir", "log_dir"):
        assert getattr(ours, attribute) == getattr(theirs, attribute), attribute
    assert not os.path.exists(ours.log_dir) or arguments.get("version") is None  # lazily made


def test_fitted_run_lays_out_files_as_tensorboard_logger(tmp_path: Path) -> None:
    trees = {}
    for label, logger in (
        ("ours", SumlensLogger(tmp_path / "ours", "exp")),
        ("theirs", TensorBoardLogger(tmp_path / "theirs", "exp")),
    ):
        fit(logger, [])
        root = tmp_path / label
        trees[label] = {
            p.relative_to(root).as_posix()
            for p in root.rglob("*")
            if "tfevents" not in p.name and not p.name.endswith("_lineage")
        }
        trees[label + " yaml"] = (Path(logger.log_dir) / "hparams.yaml").read_text()
    assert trees["ours"] == trees["theirs"]
    assert "exp/version_0/checkpoints/epoch=1-step=8.ckpt" in trees["ours"]
    assert trees["ours yaml"] == trees["theirs yaml"]


def test_graph_without_an_input_is_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    logger = SumlensLogger(tmp_path)
    with caplog.at_level(logging.WARNING, logger="sumlens"):
        logger.log_graph(torch.nn.Linear(2, 2))
        logger.log_graph(torch.nn.Linear(2, 2))
    said = [r for r in caplog.records if "example_input_array" in r.getMessage()]
    assert len(said) == 1
    assert not os.path.exists(logger.log_dir)  # nothing written, not even the directory


def test_bad_arguments_name_the_argument(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"'file_format'.*'tensorboard', 'mindspore'.*'json'"):
        SumlensLogger(tmp_path, file_format="json")
    with pytest.raises(TypeError, match="'version'"):
        SumlensLogger(tmp_path, version=1.5)
    with pytest.raises(TypeError, match=r"'flush_sec' is not an option.*allowed: comment, purge"):
        SumlensLogger(tmp_path, flush_sec=5)
    with pytest.raises(ValueError, match=r"'collect_freq'.*>= 1"):
        SumlensCallback(collect_freq=0)
    with pytest.raises(ValueError, match=r"'histogram_regular'.*'\('"):
        SumlensCallback(histogram_regular="(")
    with pytest.raises(ValueError, match="SumlensLogger"):
        fit(False, [SumlensCallback()])
    assert not any(tmp_path.iterdir())


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """moto's S3 server on 127.0.0.1 with the bucket :data:`BUCKET`."""
    with bucket_server(BUCKET) as endpoint:
        yield endpoint


def test_fit_to_object_storage_writes_one_run_that_reads_back(
    s3_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``save_dir`` an ``s3://`` URL, as TensorBoardLogger takes one: the run, hparams.yaml
    and (Lightning's own, through fsspec) the checkpoints land in the bucket; the next
    logger there takes the next version; the spool is empty once the fit ends."""
    for name, value in aws_environment(s3_endpoint).items():  # for Lightning's checkpoints
        monkeypatch.setenv(name, value)
    options = s3_options(s3_endpoint)
    save_dir = f"s3://{BUCKET}/{uuid.uuid4().hex}"
    spool = tmp_path / "spool"
    logger = SumlensLogger(save_dir, storage_options=options, spool_dir=spool)
    fit(logger, [SumlensCallback(collect_freq=2, histogram_regular=r"head\.")])

    run = f"{save_dir}/lightning_logs/version_0"
    assert logger.log_dir == run
    events = list(iter_events(run, storage_options=options))
    steps: dict[tuple[str, str], list[int]] = defaultdict(list)
    for event in events:
        steps[event.plugin, event.tag].append(event.step)
    assert sorted(steps["scalar", "train_loss"]) == list(range(STEPS))
    assert sorted(steps["scalar", "learning_rate/auto"]) == COLLECTED
    assert sorted(steps["histogram", "head.weight/auto"]) == COLLECTED
    assert sorted(steps["image", "input_data/auto"]) == COLLECTED
    assert any(plugin == "graph" for plugin, _ in steps)
    custom = _custom([e.value for e in events if e.plugin == "custom_lineage_data"])
    assert custom["lr"] == 0.1 and custom["optim/name"] == "sgd"
    assert custom["checkpoint.best_model_path"] == f"{run}/checkpoints/epoch=1-step=8.ckpt"
    assert any(e.plugin == "eval_lineage" for e in events)

    storage, root = open_storage(run, options)
    names = {entry.name for entry in storage.list_dir(root)}
    assert "hparams.yaml" in names and "checkpoints" in names
    with storage.open_read(storage.join(root, "hparams.yaml")) as file:
        assert b"lr: 0.1" in file.read()
    assert not list(spool.rglob("*tfevents*"))  # everything uploaded, nothing left behind
    assert SumlensLogger(save_dir, storage_options=options).version == 1


def test_landscape_needs_a_local_save_dir(s3_endpoint: str, tmp_path: Path) -> None:
    """SummaryLandscape reads the weights back from disk: refused when the fit starts, in
    one line naming the setting and the URL, before anything is written."""
    save_dir = f"s3://{BUCKET}/{uuid.uuid4().hex}"
    logger = SumlensLogger(save_dir, storage_options=s3_options(s3_endpoint), spool_dir=tmp_path)
    callback = SumlensCallback(1, collect_landscape={"unit": "step", "intervals": [[2, 3, 4]]})
    with pytest.raises(ValueError, match=r"collect_landscape needs a local save_dir.*s3://"):
        fit(logger, [callback])
