"""``SummaryRecord(network=...)`` and ``record(step, train_network=...)`` write the graph once."""

from __future__ import annotations

import gc
import logging
import os
import warnings
from pathlib import Path

import pytest
import torch
from helpers.graph_zoo import DataDependent, LeNet, ResNet18

import sumlens.graph.capturing as capture_module
import sumlens.ops
from sumlens import SummaryRecord
from sumlens.io import iter_events


def _events(log_dir: Path) -> list:
    return [e for e in iter_events(log_dir) if not e.tag.endswith("_lineage")]


def _graphs(log_dir: Path) -> list:
    return [e for e in iter_events(log_dir) if e.plugin == "graph"]


def test_graph_written_once_from_the_first_forward(tmp_path: Path) -> None:
    model = LeNet()
    with SummaryRecord(tmp_path, network=model) as record:
        record.record(0)  # before any forward: nothing to capture yet
        for step in range(1, 4):
            loss = model(torch.randn(4, 1, 28, 28)).sum()
            record.add_value("scalar", "loss", loss)
            assert record.record(step)
    graphs = _graphs(tmp_path)
    assert len(graphs) == 1
    graph = graphs[0].value
    assert graphs[0].step == 1
    assert graph.name == "LeNet (torch.export)"
    assert len(graph.node) >= 12
    assert graph.node[0].output_type.tensor_type.shape.dim[0].size == 4  # the first call's batch
    steps = [e.step for e in iter_events(tmp_path) if e.plugin == "scalar"]
    assert steps == [1, 2, 3]


def test_later_records_do_not_capture_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    real = capture_module.capture

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(capture_module, "capture", counting)
    model = ResNet18(num_classes=10)
    x = torch.randn(2, 3, 32, 32)
    with SummaryRecord(tmp_path, network=model) as record:
        for step in range(1, 8):
            with torch.no_grad():
                model(x)
            record.add_value("scalar", "loss", float(step))
            record.record(step)
    assert calls == [1], "the graph is captured once, by the first record after a forward"
    assert len(_graphs(tmp_path)) == 1


def test_fallback_keeps_training_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model = DataDependent()
    with caplog.at_level(logging.WARNING), SummaryRecord(tmp_path, network=model) as record:
        for step in range(1, 4):
            model(torch.randn(3, 4))
            record.add_value("scalar", "loss", float(step))
            assert record.record(step)
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert "data-dependent control flow" in warnings[0].getMessage()
    graphs = _graphs(tmp_path)
    assert len(graphs) == 1
    assert graphs[0].value.name == "DataDependent (module hierarchy)"
    assert [e.step for e in iter_events(tmp_path) if e.plugin == "scalar"] == [1, 2, 3]


def test_train_network_given_to_record(tmp_path: Path) -> None:
    model = LeNet()
    with SummaryRecord(tmp_path) as record:
        model(torch.randn(2, 1, 28, 28))
        record.record(1, train_network=model)  # this step's forward is over: captured now
        model(torch.randn(5, 1, 28, 28))
        record.record(2, train_network=model)
        model(torch.randn(5, 1, 28, 28))
        record.record(3, train_network=model)
    graphs = _graphs(tmp_path)
    assert [g.step for g in graphs] == [1]
    assert graphs[0].value.name == "LeNet (torch.export)"
    assert graphs[0].value.node[0].output_type.tensor_type.shape.dim[0].size == 2


def test_one_shot_train_network_after_the_forward_writes_the_graph_at_that_call(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Issue 25 item 3: MindSpore's one-shot usage, record(step, train_network=net) after
    # the step's forward and nothing after it, wrote no graph ("it was never called").
    model = LeNet()
    loss_fn = torch.nn.CrossEntropyLoss()
    with caplog.at_level(logging.WARNING), SummaryRecord(tmp_path) as record:
        loss = loss_fn(model(torch.randn(3, 1, 28, 28)), torch.tensor([0, 1, 2]))
        record.add_value("scalar", "loss", loss)
        assert record.record(1, train_network=model)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    [graph] = _graphs(tmp_path)
    assert graph.step == 1 and graph.value.name == "LeNet (torch.export)"
    assert graph.value.node[0].output_type.tensor_type.shape.dim[0].size == 3


def test_keyword_inputs_of_a_call_before_record_are_kept(tmp_path: Path) -> None:
    class Scaled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(4, 2)

        def forward(self, x: torch.Tensor, *, scale: torch.Tensor) -> torch.Tensor:
            return self.fc(x) * scale

    model = Scaled()
    with SummaryRecord(tmp_path) as record:
        model(torch.randn(6, 4), scale=torch.ones(1))
        record.record(1, train_network=model)
    [graph] = _graphs(tmp_path)
    assert graph.value.name == "Scaled (torch.export)"
    names = {p.name for p in graph.value.parameters}
    assert {"x", "scale"} <= names, names


def test_calls_are_watched_only_until_the_first_record(tmp_path: Path) -> None:
    # Every module call passes through the watch while it is on: it ends with the first
    # record(), and a network first given later is captured from its next call.
    modules = torch.nn.modules.module
    hooks_before = (len(modules._global_forward_pre_hooks), len(modules._global_forward_hooks))
    model = LeNet()
    with SummaryRecord(tmp_path) as record:
        assert len(modules._global_forward_hooks) == hooks_before[1] + 1
        model(torch.randn(2, 1, 28, 28))
        record.record(1)
        assert (
            len(modules._global_forward_pre_hooks),
            len(modules._global_forward_hooks),
        ) == hooks_before
        if hooks_before == (0, 0):  # nothing left that makes torch.compile warn
            assert not modules._has_any_global_hook()
        record.record(2, train_network=model)  # the call before step 1 is gone: the next
        model(torch.randn(7, 1, 28, 28))
        record.record(3)
    [graph] = _graphs(tmp_path)
    assert graph.step == 3
    assert graph.value.node[0].output_type.tensor_type.shape.dim[0].size == 7


def test_summary_operators_in_the_network(tmp_path: Path) -> None:
    class Logged(LeNet):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out = super().forward(x)
            sumlens.ops.scalar("mean", out.mean())
            return out

    model = Logged()
    with SummaryRecord(tmp_path, network=model) as record:
        for step in range(1, 3):
            model(torch.randn(2, 1, 28, 28))
            record.record(step)
    assert _graphs(tmp_path)[0].value.name == "Logged (torch.export)"
    assert [e.step for e in iter_events(tmp_path) if e.tag == "mean"] == [1, 2]


def test_never_called_network_writes_no_graph(tmp_path: Path) -> None:
    model = LeNet()
    with SummaryRecord(tmp_path, network=model) as record:
        record.add_value("scalar", "loss", 1.0)
        record.record(1)
    assert _graphs(tmp_path) == []
    assert not model._forward_pre_hooks  # the hook is gone with the record


def test_a_forward_that_raises_while_calls_are_watched_changes_nothing(tmp_path: Path) -> None:
    class Failing(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            raise RuntimeError("boom")

    model = LeNet()
    with warnings.catch_warnings(), SummaryRecord(tmp_path) as record:
        warnings.simplefilter("error")  # torch warns when a hook fails in a failed call
        with pytest.raises(RuntimeError, match="boom"):
            torch.nn.Sequential(Failing())(torch.zeros(1))
        model(torch.randn(2, 1, 28, 28))  # outermost again: the depth count recovered
        record.record(1, train_network=model)
    [graph] = _graphs(tmp_path)
    assert graph.step == 1 and graph.value.name == "LeNet (torch.export)"


@pytest.mark.parametrize("style", ["torch.compile(model)", "model.compile()"])
def test_a_compiled_model_is_compiled_once_while_calls_are_watched(
    tmp_path: Path, style: str
) -> None:
    # Global module hooks present while TorchDynamo compiles make it compile again once
    # they are gone: the watch stops at the first compiled module it meets (its graph
    # then comes from its next call, as for a network given late).
    compiles = []

    def backend(graph_module: torch.fx.GraphModule, example_inputs: list) -> object:
        compiles.append(graph_module)
        return graph_module.forward

    model = LeNet()
    with warnings.catch_warnings(), SummaryRecord(tmp_path) as record:
        warnings.simplefilter("ignore")  # torch's note on global hooks, for the first call
        if style == "model.compile()":
            model.compile(backend=backend)
            net = model
        else:
            net = torch.compile(model, backend=backend)
        for step in range(1, 4):
            net(torch.randn(2, 1, 28, 28))
            record.record(step, train_network=net)
    # module.compile() compiles once more when the graph's one-shot hook joins the
    # module's own hooks (as before the watch existed); torch.compile(model) once.
    assert len(compiles) == (2 if style == "model.compile()" else 1)
    [graph] = _graphs(tmp_path)
    assert graph.step == 2 and graph.value.name == "LeNet (torch.export)"


def test_a_record_dropped_without_close_lets_go_of_the_calls(tmp_path: Path) -> None:
    modules = torch.nn.modules.module
    before = len(modules._global_forward_hooks)
    record = SummaryRecord(tmp_path)
    assert len(modules._global_forward_hooks) == before + 1
    del record
    gc.collect()
    assert len(modules._global_forward_hooks) == before


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_keeps_no_watch(tmp_path: Path) -> None:
    # A DataLoader worker forked while calls are watched must not pass its module calls
    # through the parent's watch (nor wait on its lock).
    modules = torch.nn.modules.module
    before = len(modules._global_forward_hooks)
    read_end, write_end = os.pipe()
    with SummaryRecord(tmp_path):
        pid = os.fork()
        if pid == 0:  # the child: report its hooks and leave at once
            os.write(write_end, str(len(modules._global_forward_hooks)).encode())
            os._exit(0)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert int(os.read(read_end, 32)) == before
    os.close(read_end)
    os.close(write_end)
