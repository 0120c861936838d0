"""``SummaryRecord(network=...)`` and ``record(step, train_network=...)`` write the graph once."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import torch
from graph_zoo import DataDependent, LeNet, ResNet18

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
        record.record(1, train_network=model)  # this step's forward is over: watch from now
        model(torch.randn(2, 1, 28, 28))
        record.record(2, train_network=model)
        model(torch.randn(2, 1, 28, 28))
        record.record(3, train_network=model)
    graphs = _graphs(tmp_path)
    assert [g.step for g in graphs] == [2]
    assert graphs[0].value.name == "LeNet (torch.export)"


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
