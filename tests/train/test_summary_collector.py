"""SummaryCollector: schedule, tags, keys, lineage, landscape, validation."""

from __future__ import annotations

import json
import logging
import os
import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from sumlens import ops
from sumlens.io import iter_events
from sumlens.lineage import from_config
from sumlens.summary import SummaryRecord
from sumlens.summary.image import encode_image
from sumlens.train import (
    Callback,
    CheckpointConfig,
    Model,
    ModelCheckpoint,
    RunContext,
    summary_collector,
)
from sumlens.train.collector_config import collected_steps, tensor_range
from sumlens.train.summary_collector import (
    INPUT_IMAGE_SIDE,
    INPUT_IMAGES,
    SummaryCollector,
    clean_name,
)


class Net(nn.Module):
    def __init__(self, with_ops: bool = False) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 8)
        self.fc2 = nn.Linear(8, 2)
        self.with_ops = with_ops

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = torch.relu(self.fc1(x.flatten(1)))
        if self.with_ops:
            ops.tensor("hidden", hidden)
            ops.scalar("hidden_mean", hidden.mean())
        return self.fc2(hidden)


def make_model(with_ops: bool = False, metrics: bool = True) -> tuple[Model, DataLoader]:
    torch.manual_seed(0)
    data = TensorDataset(torch.rand(10, 1, 4, 4), torch.randint(0, 2, (10,)))
    loader = DataLoader(data, batch_size=2)  # 5 steps per epoch
    net = Net(with_ops)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    model = Model(net, nn.CrossEntropyLoss(), optimizer, metrics={"acc"} if metrics else None)
    return model, loader


def read(directory: Path) -> dict[tuple[str, str], list[int]]:
    steps: dict[tuple[str, str], list[int]] = defaultdict(list)
    for event in iter_events(directory):
        tag = "graph" if event.plugin == "graph" else event.tag
        steps[(event.plugin, tag)].append(event.step)
    return dict(steps)


def values(directory: Path, plugin: str) -> list:
    return [e.value for e in iter_events(directory) if e.plugin == plugin]


AUTO = [
    ("scalar", "loss/auto"),
    ("scalar", "learning_rate/auto"),
    ("image", "input_data/auto"),
    ("histogram", "fc1.weight/auto"),
    ("histogram", "fc1.bias/auto"),
    ("histogram", "fc2.weight/auto"),
    ("histogram", "fc2.bias/auto"),
]


# ---- the tensor schedule ----------------------------------------------------------------


def test_tensor_schedule_600_steps() -> None:
    tensors, others = collected_steps(600, 10)
    assert len(tensors) == 20 and tensors[:3] == [1, 31, 62] and tensors[-1] == 589
    assert len(others) == 61 and others[:3] == [1, 10, 20] and others[-1] == 600


def test_tensor_schedule_20_steps() -> None:
    assert collected_steps(20, 10) == ([1, 10, 20], [1, 10, 20])


def test_tensor_schedule_other_examples() -> None:
    assert collected_steps(30, 1)[0] == list(range(1, 21))
    assert collected_steps(600, 10, 200)[0] == [1, 200, 400, 600]
    assert list(tensor_range(600, 10)) == list(range(0, 590, 31))
    assert list(tensor_range(20, 10)) == [0, 10, 20]


# ---- steps written per tag --------------------------------------------------------------


@pytest.mark.parametrize(
    ("freq", "expected"),
    [(1, list(range(1, 11))), (3, [1, 3, 6, 9]), (10, [1, 10])],
)
def test_steps_per_tag(tmp_path: Path, freq: int, expected: list[int]) -> None:
    model, loader = make_model(with_ops=True)
    model.train(2, loader, callbacks=[SummaryCollector(tmp_path, collect_freq=freq)])
    steps = read(tmp_path)
    for key in AUTO:
        assert steps[key] == expected, key
    assert steps[("scalar", "hidden_mean")] == expected  # summary operators: collected steps
    # 10 steps <= 20 tensor slots: tensors follow collect_freq
    assert steps[("tensor", "hidden")] == expected
    assert steps[("graph", "graph")] == [1]
    assert steps[("dataset_graph", "dataset_graph")] == [0]
    assert steps[("train_lineage", "train_lineage")] == [0]


def test_flush_makes_collected_steps_readable(tmp_path: Path) -> None:
    """After ``flush()`` mid-training the steps collected so far are on disk, in order."""
    seen: list[list[int]] = []

    class FlushAtSeven(Callback):
        def on_train_step_end(self, run_context: RunContext) -> None:
            if run_context.original_args().cur_step_num == 7:
                collector.flush()
                seen.append(read(tmp_path)[("scalar", "loss/auto")])

    model, loader = make_model()
    collector = SummaryCollector(tmp_path, collect_freq=1)
    collector.flush()  # before training: nothing to write, no error
    model.train(2, loader, callbacks=[collector, FlushAtSeven()])
    assert seen == [[1, 2, 3, 4, 5, 6, 7]]
    assert read(tmp_path)[("scalar", "loss/auto")] == list(range(1, 11))


def test_tensor_only_steps(tmp_path: Path) -> None:
    model, loader = make_model(with_ops=True)
    collector = SummaryCollector(tmp_path, collect_freq=5, collect_tensor_freq=2)
    model.train(2, loader, callbacks=[collector])
    steps = read(tmp_path)
    assert steps[("tensor", "hidden")] == [1, 2, 4, 6, 8, 10]
    assert steps[("scalar", "hidden_mean")] == [1, 5, 10]
    assert steps[("scalar", "loss/auto")] == [1, 5, 10]


def long_model(steps: int) -> tuple[Model, DataLoader]:
    """``make_model``'s network (with summary operators) over ``steps`` batches of 2."""
    torch.manual_seed(0)
    data = TensorDataset(torch.rand(2 * steps, 1, 4, 4), torch.randint(0, 2, (2 * steps,)))
    net = Net(with_ops=True)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    model = Model(net, nn.CrossEntropyLoss(), optimizer)
    return model, DataLoader(data, batch_size=2)


@pytest.mark.parametrize(
    ("steps", "freq", "tensor_freq"),
    [(32, 2, 8), (180, 3, None), (60, 1, None)],
    ids=["tensor-freq-8", "defaults-freq-3", "defaults-freq-1"],
)
def test_every_collected_step_has_images_loss_and_histograms(
    tmp_path: Path, steps: int, freq: int, tensor_freq: int | None
) -> None:
    # Issue 25 item 1: histograms and input images followed the tensor schedule (5 of 17
    # steps at collect_freq=2, collect_tensor_freq=8 over 32 steps). MindSpore collects
    # them, the loss and the operators' values at every collected step
    # (``_collect_at_step_end``); only TensorSummary follows collect_tensor_freq.
    model, loader = long_model(steps)
    collector = SummaryCollector(tmp_path, collect_freq=freq, collect_tensor_freq=tensor_freq)
    model.train(1, loader, callbacks=[collector])
    tensors, others = collected_steps(steps, freq, tensor_freq)
    written = read(tmp_path)
    for key in AUTO:
        assert written[key] == others, key
    assert written[("scalar", "hidden_mean")] == others
    assert written[("tensor", "hidden")] == tensors
    assert len(tensors) < len(others)


def test_the_schedule_of_issue_25() -> None:
    assert collected_steps(32, 2, 8) == ([1, 8, 16, 24, 32], [1, *range(2, 33, 2)])
    tensors, others = collected_steps(180, 3)
    assert (len(tensors), len(others)) == (20, 61)


def test_sink_mode_collects_per_epoch(tmp_path: Path) -> None:
    model, loader = make_model()
    collector = SummaryCollector(tmp_path, collect_freq=2)
    model.train(3, loader, callbacks=[collector], dataset_sink_mode=True)
    steps = read(tmp_path)
    # epochs 1 (first) and 2; the event step is cur_step_num
    assert steps[("scalar", "loss/auto")] == [5, 10]
    assert steps[("graph", "graph")] == [5]


def test_fit_and_eval(tmp_path: Path) -> None:
    model, loader = make_model()
    collector = SummaryCollector(tmp_path, collect_freq=5)
    model.fit(2, loader, loader, callbacks=[collector])
    model.eval(loader, callbacks=[collector])
    steps = read(tmp_path)
    assert steps[("scalar", "loss/auto")] == [1, 5, 10]
    assert steps[("eval_lineage", "eval_lineage")] == [0]
    (lineage,) = values(tmp_path, "eval_lineage")
    assert json.loads(lineage.metric).keys() == {"acc"}
    assert lineage.valid_dataset.valid_dataset_size == 10


def test_second_train_run_keeps_graph_once(tmp_path: Path) -> None:
    model, loader = make_model()
    collector = SummaryCollector(tmp_path, collect_freq=5)
    model.train(1, loader, callbacks=[collector])
    model.train(1, loader, callbacks=[collector])
    steps = read(tmp_path)
    assert steps[("graph", "graph")] == [1]
    assert steps[("scalar", "loss/auto")] == [1, 5, 1, 5]  # two runs, two files


# ---- collect_specified_data -------------------------------------------------------------

KEY_TAGS = {
    "collect_metric": [("scalar", "loss/auto")],
    "collect_learning_rate": [("scalar", "learning_rate/auto")],
    "collect_input_data": [("image", "input_data/auto")],
    "collect_graph": [("graph", "graph")],
    "collect_dataset_graph": [("dataset_graph", "dataset_graph")],
    "collect_train_lineage": [("train_lineage", "train_lineage")],
    "collect_eval_lineage": [("eval_lineage", "eval_lineage")],
    "histogram_regular": [("histogram", "fc1.weight/auto")],
}


@pytest.mark.parametrize("key", sorted(KEY_TAGS))
@pytest.mark.parametrize("on", [True, False])
def test_each_key(tmp_path: Path, key: str, on: bool) -> None:
    model, loader = make_model()
    if key == "histogram_regular":
        specified = {key: None} if on else {}
        keep = False
    else:
        specified = {key: on}
        keep = True
    collector = SummaryCollector(
        tmp_path, collect_freq=5, collect_specified_data=specified, keep_default_action=keep
    )
    model.train(1, loader, callbacks=[collector])
    model.eval(loader, callbacks=[collector])
    steps = read(tmp_path)
    for tag in KEY_TAGS[key]:
        assert (tag in steps) is on, (key, tag, sorted(steps))


def test_keep_default_action_false_only_named(tmp_path: Path) -> None:
    model, loader = make_model(with_ops=True)
    collector = SummaryCollector(
        tmp_path,
        collect_freq=5,
        collect_specified_data={"collect_metric": True},
        keep_default_action=False,
    )
    model.train(1, loader, callbacks=[collector])
    assert set(read(tmp_path)) == {
        ("scalar", "loss/auto"),
        ("scalar", "hidden_mean"),
        ("tensor", "hidden"),
    }


def test_keep_default_action_none_false_writes_only_operators(tmp_path: Path) -> None:
    model, loader = make_model(with_ops=True)
    collector = SummaryCollector(tmp_path, collect_freq=5, keep_default_action=False)
    assert collector.collect_specified_data == {}
    model.train(1, loader, callbacks=[collector])
    assert read(tmp_path) == {("scalar", "hidden_mean"): [1, 5], ("tensor", "hidden"): [1, 5]}


def test_keep_default_action_true_merges(tmp_path: Path) -> None:
    collector = SummaryCollector(
        tmp_path, collect_specified_data={"histogram_regular": "fc2"}, keep_default_action=True
    )
    data = collector.collect_specified_data
    assert data["histogram_regular"] == "fc2" and data["collect_metric"] is True
    assert data["collect_learning_rate"] is True and data["collect_landscape"] is None
    model, loader = make_model()
    model.train(
        1,
        loader,
        callbacks=[
            SummaryCollector(tmp_path / "h", collect_specified_data={"histogram_regular": "fc2"})
        ],
    )
    hist = {tag for plugin, tag in read(tmp_path / "h") if plugin == "histogram"}
    assert hist == {"fc2.weight/auto", "fc2.bias/auto"}


def test_non_image_input_switches_off(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    torch.manual_seed(0)
    data = TensorDataset(torch.rand(4, 16), torch.randint(0, 2, (4,)))
    net = nn.Linear(16, 2)
    model = Model(net, nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=0.1))
    with caplog.at_level(logging.WARNING, logger="sumlens"):
        model.train(1, DataLoader(data, batch_size=2), callbacks=[SummaryCollector(tmp_path)])
    assert ("image", "input_data/auto") not in read(tmp_path)
    assert "not images" in caplog.text


def test_histogram_regular_matching_nothing_says_so_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model, loader = make_model()
    collector = SummaryCollector(
        tmp_path, collect_freq=1, collect_specified_data={"histogram_regular": "conv"}
    )
    with caplog.at_level(logging.WARNING, logger="sumlens"):
        model.train(2, loader, callbacks=[collector])
    assert not [tag for plugin, tag in read(tmp_path) if plugin == "histogram"]
    warnings = [r.getMessage() for r in caplog.records if "histogram_regular" in r.getMessage()]
    assert len(warnings) == 1
    assert "'conv' matches none of the 4 parameter names" in warnings[0]
    assert "fc1.weight, fc1.bias, fc2.weight, fc2.bias" in warnings[0]


def test_start_log_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    model, loader = make_model()
    with caplog.at_level(logging.INFO, logger="sumlens"):
        model.train(1, loader, callbacks=[SummaryCollector(tmp_path)])
    lines = [r.message for r in caplog.records if "SummaryCollector writes to" in r.message]
    assert len(lines) == 1 and "loss" in lines[0] and "learning rate" in lines[0]


def test_parameter_names_unwrapped() -> None:
    assert clean_name("module.fc1.weight") == "fc1.weight"
    assert clean_name("_orig_mod.block._orig_mod.fc.bias") == "block.fc.bias"
    assert clean_name("module") == "module"


def _compiled(net: nn.Module, tmp_path: Path) -> nn.Module:
    return torch.compile(net, backend="eager")  # a real OptimizedModule, no C++ compiler needed


def _ddp(net: nn.Module, tmp_path: Path) -> nn.Module:
    import torch.distributed as dist

    dist.init_process_group(
        "gloo", init_method=f"file://{tmp_path / 'rendezvous'}", rank=0, world_size=1
    )
    return nn.parallel.DistributedDataParallel(net)


@pytest.mark.parametrize("wrap", [_compiled, _ddp], ids=["torch.compile", "DDP"])
def test_wrapped_network_names(
    tmp_path: Path, wrap: Callable[[nn.Module, Path], nn.Module]
) -> None:
    import torch.distributed as dist

    torch.manual_seed(0)
    data = TensorDataset(torch.rand(4, 1, 4, 4), torch.randint(0, 2, (4,)))
    try:
        net = wrap(Net(), tmp_path)
        model = Model(net, nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=0.1))
        collector = SummaryCollector(tmp_path / "run")
        model.train(1, DataLoader(data, batch_size=2), callbacks=[collector])
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
    hist = {tag for plugin, tag in read(tmp_path / "run") if plugin == "histogram"}
    assert hist == {"fc1.weight/auto", "fc1.bias/auto", "fc2.weight/auto", "fc2.bias/auto"}


# ---- errors -----------------------------------------------------------------------------


def test_two_collectors_in_one_list(tmp_path: Path) -> None:
    model, loader = make_model()
    first = SummaryCollector(tmp_path / "a")
    second = SummaryCollector(tmp_path / "b")
    with pytest.raises(ValueError, match="more than one SummaryCollector"):
        model.train(1, loader, callbacks=[first, second])


def test_second_collector_open_is_fine(tmp_path: Path) -> None:
    model, loader = make_model()
    with SummaryCollector(tmp_path / "outer"):
        model.train(1, loader, callbacks=[SummaryCollector(tmp_path / "inner", collect_freq=5)])
    assert read(tmp_path / "inner")[("scalar", "loss/auto")] == [1, 5]


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"summary_dir": 3}, TypeError),
        ({"summary_dir": "  "}, ValueError),
        ({"summary_dir": "x" * 1100}, ValueError),
        ({"collect_freq": True}, TypeError),
        ({"collect_freq": 1.5}, TypeError),
        ({"collect_freq": 0}, ValueError),
        ({"collect_tensor_freq": "2"}, TypeError),
        ({"collect_tensor_freq": -1}, ValueError),
        ({"max_file_size": 1.0}, TypeError),
        ({"max_file_size": 0}, ValueError),
        ({"export_options": []}, TypeError),
        ({"export_options": {"bad": "npy"}}, ValueError),
        ({"export_options": {"tensor_format": "csv"}}, ValueError),
        ({"keep_default_action": 1}, TypeError),
        ({"collect_specified_data": []}, TypeError),
        ({"collect_specified_data": {1: True}}, TypeError),
        ({"collect_specified_data": {"collect_nothing": True}}, ValueError),
        ({"collect_specified_data": {"collect_metric": 1}}, TypeError),
        ({"collect_specified_data": {"collect_learning_rate": "y"}}, TypeError),
        ({"collect_specified_data": {"histogram_regular": 3}}, TypeError),
        ({"collect_specified_data": {"histogram_regular": "("}}, ValueError),
        ({"collect_specified_data": {"collect_landscape": 3}}, TypeError),
        ({"collect_specified_data": {"collect_landscape": {"unit": "step"}}}, TypeError),
        ({"collect_specified_data": {"collect_landscape": {"intervals": [[1, 2]]}}}, ValueError),
        (
            {"collect_specified_data": {"collect_landscape": {"intervals": [[1, 2, "3"]]}}},
            TypeError,
        ),
        ({"collect_specified_data": {"collect_landscape": {"foo": 1}}}, ValueError),
        (
            {
                "collect_specified_data": {
                    "collect_landscape": {"intervals": [[1, 2, 3]], "landscape_size": 2}
                }
            },
            ValueError,
        ),
        (
            {
                "collect_specified_data": {
                    "collect_landscape": {"intervals": [[1, 2, 3]], "unit": "batch"}
                }
            },
            ValueError,
        ),
        (
            {
                "collect_specified_data": {
                    "collect_landscape": {"intervals": [[1, 2, 3]], "create_landscape": {"x": 1}}
                }
            },
            ValueError,
        ),
        ({"custom_lineage_data": []}, TypeError),
        ({"custom_lineage_data": {"a": True}}, TypeError),
        ({"custom_lineage_data": {"a": [1]}}, TypeError),
        ({"custom_lineage_data": {1: 1}}, TypeError),
        ({"rank_zero_only": "yes"}, TypeError),
    ],
)
def test_validation(tmp_path: Path, kwargs: dict, error: type[Exception]) -> None:
    kwargs = {"summary_dir": str(tmp_path), **kwargs}
    with pytest.raises(error):
        SummaryCollector(**kwargs)


def test_a_max_file_size_that_holds_no_loss_step_is_refused_at_construction(
    tmp_path: Path,
) -> None:
    with pytest.raises(ValueError, match=r"max_file_size=10 .*'loss/auto'.* at least (\d+) bytes"):
        SummaryCollector(tmp_path / "tiny", max_file_size=10)
    loss_only = {"collect_metric": True}
    with pytest.raises(ValueError, match=r"at least (\d+) bytes") as raised:
        SummaryCollector(tmp_path / "probe", max_file_size=1, collect_specified_data=loss_only)
    smallest = int(re.search(r"at least (\d+) bytes", str(raised.value)).group(1))
    with pytest.raises(ValueError, match=f"max_file_size={smallest - 1} "):
        SummaryCollector(tmp_path / "probe", max_file_size=smallest - 1)
    model, loader = make_model()
    collector = SummaryCollector(
        tmp_path / "run",
        collect_freq=1,
        collect_specified_data=loss_only,
        keep_default_action=False,
        max_file_size=smallest,
    )
    model.train(1, loader, callbacks=[collector])
    assert read(tmp_path / "run") == {("scalar", "loss/auto"): [1, 2, 3, 4, 5]}
    files = [f for f in (tmp_path / "run").iterdir() if "_lineage" not in f.name]
    assert len(files) == 5  # a file per step: the smallest size holds one


def test_without_the_loss_the_record_s_smallest_file_is_enough(tmp_path: Path) -> None:
    with pytest.raises(
        ValueError, match=r"max_file_size=1 .*one step.* at least (\d+) bytes"
    ) as raised:
        SummaryRecord(tmp_path / "probe", max_file_size=1)
    smallest = int(re.search(r"at least (\d+) bytes", str(raised.value)).group(1))
    no_loss = {"collect_metric": False}
    SummaryCollector(tmp_path / "run", max_file_size=smallest, collect_specified_data=no_loss)
    with pytest.raises(ValueError, match=f"max_file_size={smallest - 1} .*one step"):
        SummaryCollector(
            tmp_path / "run", max_file_size=smallest - 1, collect_specified_data=no_loss
        )


def test_summary_dir_is_a_file(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_text("x")
    with pytest.raises(NotADirectoryError):
        SummaryCollector(str(path))


def test_empty_landscape_dict_is_off(tmp_path: Path) -> None:
    SummaryCollector(tmp_path, collect_specified_data={"collect_landscape": {}})
    assert not (tmp_path / "ckpt_dir").exists()


def test_env_bad_type_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINDINSIGHT_HYPER_CONFIG", json.dumps({"custom_lineage_data": {"x": [1]}}))
    with pytest.raises(TypeError):
        SummaryCollector(tmp_path)


@pytest.mark.parametrize("text", ["not json", "[1, 2]", json.dumps({"other": 1})])
def test_env_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setenv("MINDINSIGHT_HYPER_CONFIG", text)
    assert SummaryCollector(tmp_path).custom_lineage_data == {}


# ---- lineage ----------------------------------------------------------------------------


def test_train_lineage(tmp_path: Path) -> None:
    model, loader = make_model()
    checkpoint = ModelCheckpoint(
        prefix="CKP",
        directory=str(tmp_path / "ckpt"),
        config=CheckpointConfig(save_checkpoint_steps=5),
    )
    model.train(2, loader, callbacks=[checkpoint, SummaryCollector(tmp_path / "s")])
    (lineage,) = values(tmp_path / "s", "train_lineage")
    hyper = lineage.hyper_parameters
    assert hyper.optimizer == "SGD"
    assert hyper.learning_rate == pytest.approx(0.01)
    assert hyper.loss_function == "CrossEntropyLoss"
    assert hyper.epoch == 2 and hyper.batch_size == 2
    assert hyper.parallel_mode == "stand_alone" and hyper.device_num == 1
    assert lineage.train_dataset.train_dataset_size == 10
    assert lineage.algorithm.network == "Net"
    assert lineage.algorithm.loss > 0
    path = json.loads(lineage.model.path)["ckpt"]
    assert path == os.path.realpath(checkpoint.latest_ckpt_file_name)
    assert lineage.model.size == os.path.getsize(path) > 0


def test_custom_lineage_with_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "MINDINSIGHT_HYPER_CONFIG", json.dumps({"custom_lineage_data": {"lr": 0.1, "opt": "sgd"}})
    )
    model, loader = make_model()
    collector = SummaryCollector(tmp_path, collect_freq=5, custom_lineage_data={"lr": 0.2, "n": 3})
    assert collector.custom_lineage_data == {"lr": 0.2, "opt": "sgd", "n": 3}
    model.train(2, loader, callbacks=[collector])
    steps = read(tmp_path)
    assert steps[("custom_lineage_data", "custom_lineage_data")] == [0]
    (info,) = values(tmp_path, "custom_lineage_data")
    merged: dict = {}
    for entry in info.user_info:
        merged.update(entry.map_double)
        merged.update(entry.map_int32)
        merged.update(entry.map_str)
    assert merged == {"lr": 0.2, "opt": "sgd", "n": 3}


def test_custom_lineage_from_config(tmp_path: Path) -> None:
    collector = SummaryCollector(
        tmp_path, custom_lineage_data=from_config({"optim": {"lr": 0.5}, "name": "x"})
    )
    assert collector.custom_lineage_data["name"] == "x"
    assert 0.5 in collector.custom_lineage_data.values()


# ---- distributed, landscape -------------------------------------------------------------


def test_rank_zero_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model, loader = make_model()
    monkeypatch.setenv("RANK", "1")
    model.train(1, loader, callbacks=[SummaryCollector(tmp_path / "r0", rank_zero_only=True)])
    assert not list((tmp_path / "r0").glob("*events*"))
    model.train(1, loader, callbacks=[SummaryCollector(tmp_path / "all", collect_freq=5)])
    names = [p.name for p in (tmp_path / "all").glob("*_MS")]
    assert len(names) == 1 and ".1." in names[0]
    monkeypatch.setenv("RANK", "0")
    model.train(1, loader, callbacks=[SummaryCollector(tmp_path / "r0", rank_zero_only=True)])
    assert list((tmp_path / "r0").glob("*_MS"))


@pytest.mark.parametrize("unit", ["step", "epoch"])
def test_landscape(tmp_path: Path, unit: str) -> None:
    model, loader = make_model()
    intervals = [[1, 2, 3], [2, 3, 4]] if unit == "step" else [[1, 2, 3]]
    collector = SummaryCollector(
        tmp_path,
        collect_specified_data={
            "collect_landscape": {"intervals": intervals, "unit": unit, "landscape_size": 10}
        },
    )
    assert (tmp_path / "ckpt_dir").is_dir()
    model.train(3, loader, callbacks=[collector])
    ckpt_dir = tmp_path / "ckpt_dir"
    expected = [1, 2, 3, 4] if unit == "step" else [1, 2, 3]
    assert sorted(p.name for p in ckpt_dir.glob("*.ckpt")) == [
        f"Net_{n}_{unit}.ckpt" for n in expected
    ]
    assert not list(ckpt_dir.glob("*.lock"))
    meta = json.loads((ckpt_dir / "train_metadata.json").read_text())
    assert meta["unit"] == unit and meta["landscape_size"] == 10 and meta["num_samples"] == 2048
    assert meta["step_per_epoch"] == 5
    assert meta["epoch_group"] == {str(i): v for i, v in enumerate(intervals)}
    assert sorted(meta["model_params_file_map"], key=int) == [str(n) for n in expected]
    from sumlens.train import load_checkpoint

    state = load_checkpoint(meta["model_params_file_map"]["1"])
    assert set(state) >= {"fc1.weight", "fc2.bias"}


def test_landscape_off_by_default(tmp_path: Path) -> None:
    model, loader = make_model()
    model.train(1, loader, callbacks=[SummaryCollector(tmp_path)])
    assert not (tmp_path / "ckpt_dir").exists()


def test_resume_first_step_always(tmp_path: Path) -> None:
    model, loader = make_model()
    model.train(2, loader, callbacks=[SummaryCollector(tmp_path, collect_freq=3)], initial_epoch=1)
    assert read(tmp_path)[("scalar", "loss/auto")] == [6, 9]


def test_hand_driven_without_entering(tmp_path: Path) -> None:
    from sumlens.train import CallbackList, RunContext, RunParams

    torch.manual_seed(0)
    net = Net(with_ops=True)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    data = [(torch.rand(2, 1, 4, 4), torch.randint(0, 2, (2,))) for _ in range(4)]
    collector = SummaryCollector(tmp_path, collect_freq=2)
    params = RunParams(
        mode="train",
        network=net,
        optimizer=optimizer,
        loss_fn=loss_fn,
        epoch_num=1,
        batch_num=4,
        cur_epoch_num=1,
        cur_step_num=0,
        dataset_sink_mode=False,
        list_callback=[collector],
    )
    context = RunContext(params)
    callbacks = CallbackList([collector])  # hooks only: the collector opens its record itself
    callbacks.on_train_begin(context)
    for x, y in data:
        params.cur_step_num += 1
        params.train_dataset_element = (x, y)
        loss = loss_fn(net(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        params.net_outputs = loss.detach()
        callbacks.on_train_step_end(context)
    callbacks.on_train_epoch_end(context)
    callbacks.on_train_end(context)
    steps = read(tmp_path)
    assert steps[("scalar", "loss/auto")] == [1, 2, 4]
    assert steps[("scalar", "hidden_mean")] == [1, 2, 4]
    assert ("train_lineage", "train_lineage") in steps


# ---- input images: a bounded sample, never a stall ------------------------------------------


class PoolNet(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.fc = nn.Linear(channels * 16, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(nn.functional.adaptive_avg_pool2d(x.float(), 4).flatten(1))


def image_model(images: torch.Tensor) -> tuple[Model, DataLoader]:
    torch.manual_seed(0)
    data = TensorDataset(images, torch.randint(0, 2, (len(images),)))
    net = PoolNet(images.shape[1])
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    return Model(net, nn.CrossEntropyLoss(), optimizer), DataLoader(data, batch_size=16)


@pytest.mark.parametrize(
    ("dtype", "side"),
    [(torch.float32, 600), (torch.uint8, 600), (torch.float32, 100)],
    ids=["float-shrunk", "uint8-shrunk", "float-small"],
)
def test_input_images_are_a_small_sample_of_the_batch(
    tmp_path: Path, dtype: torch.dtype, side: int
) -> None:
    torch.manual_seed(0)
    images = torch.rand(32, 3, side, side)
    if dtype == torch.uint8:
        images = (images * 255).to(torch.uint8)
    model, loader = image_model(images)
    model.train(1, loader, callbacks=[SummaryCollector(tmp_path, collect_freq=1)])
    [first, second] = values(tmp_path, "image")
    tile = -(-side // (-(-side // INPUT_IMAGE_SIDE)))  # shrunk by a whole factor
    assert tile <= INPUT_IMAGE_SIDE
    assert (first.width, first.height) == (INPUT_IMAGES * tile, tile)  # one row of 4
    if side <= INPUT_IMAGE_SIDE:  # the pixels are the batch's first images, as MindSpore tiles
        expected = encode_image(images[:INPUT_IMAGES].numpy())
        assert first.encoded == expected.encoded
    assert (second.width, second.height) == (first.width, first.height)


def test_input_images_are_dropped_while_the_writer_is_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Anything queued counts as a backlog here: the writer wakes only now and then, so most
    # steps find the previous one's image still queued.
    monkeypatch.setattr(summary_collector, "INPUT_BACKLOG_BYTES", 0)
    model, loader = image_model(torch.rand(160, 3, 32, 32))  # 10 steps
    with caplog.at_level(logging.WARNING, logger="sumlens"):
        model.train(1, loader, callbacks=[SummaryCollector(tmp_path, collect_freq=1)])
    steps = read(tmp_path)
    assert steps[("scalar", "loss/auto")] == list(range(1, 11))  # nothing else is dropped
    assert steps[("histogram", "fc.weight/auto")] == list(range(1, 11))
    shown = steps[("image", "input_data/auto")]
    assert shown[0] == 1 and len(shown) < 10
    warnings = [r.getMessage() for r in caplog.records if "input images" in r.getMessage()]
    assert len(warnings) == 2, warnings  # the first drop, then the count at the end
    assert "writer is behind" in warnings[0]
    assert f"input images of {10 - len(shown)} collected steps were dropped" in warnings[1]


def test_input_images_are_dropped_beyond_their_share_of_the_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # No time at all for images here: once the writer has encoded step 1's (the flush
    # waits for it), every later collected step drops its images, and nothing else.
    monkeypatch.setattr(summary_collector, "INPUT_IMAGE_SHARE", 0.0)
    monkeypatch.setattr(summary_collector, "INPUT_IMAGE_FREE_SECONDS", 0.0)

    class FlushAtOne(Callback):
        def on_train_step_end(self, run_context: RunContext) -> None:
            if run_context.original_args().cur_step_num == 1:
                collector.flush()

    model, loader = image_model(torch.rand(160, 3, 32, 32))  # 10 steps
    collector = SummaryCollector(tmp_path, collect_freq=1)
    with caplog.at_level(logging.WARNING, logger="sumlens"):
        model.train(1, loader, callbacks=[collector, FlushAtOne()])
    steps = read(tmp_path)
    assert steps[("image", "input_data/auto")] == [1]
    assert steps[("scalar", "loss/auto")] == list(range(1, 11))
    assert steps[("histogram", "fc.weight/auto")] == list(range(1, 11))
    warnings = [r.getMessage() for r in caplog.records if "input images" in r.getMessage()]
    assert len(warnings) == 2, warnings
    assert "0% of the run's time" in warnings[0]
    assert "input images of 9 collected steps were dropped" in warnings[1]
