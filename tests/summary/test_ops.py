"""Summary operators: where their values go, when they are dropped, and that training never
notices them (autograd, ``torch.compile``)."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers.summary import read_events
from torch import nn

from sumlens import SummaryRecord, ops
from sumlens.ops import HistogramSummary, ImageSummary, ScalarSummary, TensorSummary
from sumlens.summary.histogram import reference_histogram

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def written(path: Path) -> list[tuple[int, str, str]]:
    return [(e.step, e.plugin, e.tag) for e in read_events(path)]


def test_every_operator_writes_its_kind(tmp_path: Path) -> None:
    image = torch.rand(2, 3, 4, 4)
    with SummaryRecord(tmp_path) as rec:
        assert ScalarSummary()("s", torch.tensor(1.5)) is None
        assert ImageSummary()("i", image) is None
        assert TensorSummary()("t", torch.arange(3.0)) is None
        assert HistogramSummary()("h", torch.arange(10.0)) is None
        assert ops.scalar("fs", torch.tensor([2.5])) is None
        assert ops.image("fi", image) is None
        assert ops.tensor("ft", torch.ones(2, 2)) is None
        assert ops.histogram("fh", torch.ones(5)) is None
        rec.record(3)
    events = {e.tag: e for e in read_events(tmp_path)}
    assert {tag: e.plugin for tag, e in events.items()} == {
        "s": "scalar",
        "i": "image",
        "t": "tensor",
        "h": "histogram",
        "fs": "scalar",
        "fi": "image",
        "ft": "tensor",
        "fh": "histogram",
    }
    assert {e.step for e in events.values()} == {3}
    assert events["s"].value == 1.5
    assert events["fs"].value == 2.5
    np.testing.assert_array_equal(events["t"].value, [0.0, 1.0, 2.0])
    assert events["h"].value.count == 10


def test_the_same_name_may_be_used_by_different_kinds(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path) as rec:
        ops.scalar("x", torch.tensor(1.0))
        ops.tensor("x", torch.ones(2))
        ops.histogram("x", torch.ones(2))
        rec.record(1)
    assert sorted(written(tmp_path)) == [
        (1, "histogram", "x"),
        (1, "scalar", "x"),
        (1, "tensor", "x"),
    ]


def test_values_go_to_the_innermost_active_record(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path / "outer") as outer:
        ops.scalar("a", torch.tensor(1.0))
        with SummaryRecord(tmp_path / "inner") as inner:
            ops.scalar("b", torch.tensor(2.0))
            inner.record(1)
            outer.record(1)
        ops.scalar("c", torch.tensor(3.0))  # inner is closed: back to outer
        outer.record(2)
    assert written(tmp_path / "outer") == [(1, "scalar", "a"), (2, "scalar", "c")]
    assert written(tmp_path / "inner") == [(1, "scalar", "b")]


def test_entering_an_older_record_makes_it_active_again(tmp_path: Path) -> None:
    first = SummaryRecord(tmp_path / "first")
    second = SummaryRecord(tmp_path / "second")  # opened last: active without `with`
    ops.scalar("to_second", torch.tensor(1.0))
    with first:
        ops.scalar("to_first", torch.tensor(2.0))
        first.record(1)
    second.record(1)
    second.close()
    assert written(tmp_path / "first") == [(1, "scalar", "to_first")]
    assert written(tmp_path / "second") == [(1, "scalar", "to_second")]


def test_eval_mode_drops_operator_values_but_not_add_value(tmp_path: Path) -> None:
    with SummaryRecord(tmp_path) as rec:
        ops.scalar("before_eval", torch.tensor(0.0))
        rec.set_mode("eval")
        ops.scalar("in_eval", torch.tensor(1.0))
        rec.add_value("scalar", "added", 1.0)
        rec.record(1)
        rec.set_mode("train")
        ops.scalar("in_train", torch.tensor(2.0))
        rec.record(2)
    assert written(tmp_path) == [(1, "scalar", "added"), (2, "scalar", "in_train")]


def test_without_a_record_operator_values_are_dropped_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="sumlens"):
        ops.scalar("orphan", torch.tensor(1.0))
        ScalarSummary()("orphan2", torch.tensor(1.0))
        with SummaryRecord(tmp_path) as rec:
            ops.scalar("kept", torch.tensor(2.0))
            rec.record(1)
        ops.scalar("after_close", torch.tensor(3.0))
    assert written(tmp_path) == [(1, "scalar", "kept")]
    warnings = [r.getMessage() for r in caplog.records if "no open SummaryRecord" in r.getMessage()]
    assert len(warnings) == 1
    assert "scalar('orphan')" in warnings[0] and "dropped" in warnings[0]


def test_duplicate_names_keep_the_last_value_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="sumlens"), SummaryRecord(tmp_path) as rec:
        for step in range(3):
            for value in range(4):
                ops.scalar("loss", torch.tensor(float(10 * step + value)))
            rec.record(step)
    assert [e.value for e in read_events(tmp_path)] == [3.0, 13.0, 23.0]
    warnings = [r for r in caplog.records if "loss" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING


def test_duplicate_add_value_keeps_the_newest(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="sumlens"), SummaryRecord(tmp_path) as rec:
        rec.add_value("scalar", "dup", 1.0)
        rec.add_value("scalar", "dup", 2.0)
        rec.record(1)
    assert [e.value for e in read_events(tmp_path)] == [2.0]
    assert len([r for r in caplog.records if "dup" in r.getMessage()]) == 1


@pytest.mark.parametrize(
    "op,name,value,error",
    [
        (ops.scalar, 1, torch.tensor(1.0), TypeError),
        (ops.scalar, "", torch.tensor(1.0), TypeError),
        (ops.scalar, "s", "1.0", TypeError),
        (ops.scalar, "s", torch.ones(2), ValueError),
        (ops.image, "i", torch.ones(3, 4, 4), ValueError),
        (ops.tensor, "t", torch.tensor(1.0), ValueError),
        (ops.histogram, "h", torch.tensor(1.0), ValueError),
    ],
)
def test_invalid_operator_values_raise_by_the_next_record(
    tmp_path: Path, op, name: object, value: object, error: type
) -> None:
    with SummaryRecord(tmp_path) as rec:
        with pytest.raises(error):
            op(name, value)
            rec.record(1)
        ops.scalar("fine", torch.tensor(1.0))
        rec.record(2)
    assert written(tmp_path) == [(2, "scalar", "fine")]


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Linear(4, 8)
        self.second = nn.Linear(8, 1)
        self.scalar = ScalarSummary()
        self.histogram = HistogramSummary()
        self.tensor = TensorSummary()
        self.image = ImageSummary()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = torch.tanh(self.first(x))
        self.histogram("hidden", hidden)
        self.tensor("hidden_t", hidden)
        self.image("hidden_im", hidden.reshape(-1, 1, 2, 4))
        out = self.second(hidden).sum()
        self.scalar("out", out)
        ops.scalar("hidden_mean", hidden.mean())
        return out


def _grads(record: bool, tmp_path: Path) -> list[torch.Tensor]:
    torch.manual_seed(0)
    net = Net()
    x = torch.randn(3, 4)
    if record:
        with SummaryRecord(tmp_path) as rec:
            net(x).backward()
            rec.record(1)
    else:
        net(x).backward()
    return [p.grad.clone() for p in net.parameters()]


def test_operators_never_affect_autograd(tmp_path: Path) -> None:
    with_ops = _grads(True, tmp_path)
    without = _grads(False, tmp_path)
    for a, b in zip(with_ops, without, strict=True):
        assert torch.equal(a, b)
    assert {tag for _, _, tag in written(tmp_path)} == {
        "hidden",
        "hidden_t",
        "hidden_im",
        "out",
        "hidden_mean",
    }


def test_operator_value_is_a_snapshot(tmp_path: Path) -> None:
    weight = torch.ones(4, requires_grad=True)
    with SummaryRecord(tmp_path) as rec:
        ops.tensor("w", weight)
        with torch.no_grad():
            weight.mul_(5)
        rec.record(1)
    [event] = read_events(tmp_path)
    np.testing.assert_array_equal(event.value, np.ones(4, dtype=np.float32))


@pytest.mark.parametrize("backend", ["aot_eager", pytest.param("inductor", marks=pytest.mark.slow)])
def test_operators_under_torch_compile_record_the_right_values(
    tmp_path: Path, backend: str
) -> None:
    torch.manual_seed(0)
    net = Net()
    compiled = torch.compile(net, backend=backend)
    inputs = [torch.randn(3, 4) for _ in range(3)]
    with SummaryRecord(tmp_path) as rec:
        for step, x in enumerate(inputs):
            compiled(x)
            rec.record(step)
    events = read_events(tmp_path)
    assert sorted({e.step for e in events}) == [0, 1, 2]
    for step, x in enumerate(inputs):
        with torch.no_grad():
            hidden = torch.tanh(net.first(x))
            out = net.second(hidden).sum()
        got = {e.tag: e.value for e in events if e.step == step}
        assert got["out"] == pytest.approx(float(out), rel=1e-6)
        assert got["hidden_mean"] == pytest.approx(float(hidden.mean()), rel=1e-6)
        np.testing.assert_allclose(got["hidden_t"], hidden.numpy(), rtol=1e-6)
        assert got["hidden"].count == hidden.numel()
        assert got["hidden"].max == pytest.approx(float(hidden.max()), rel=1e-6)


class SummarizingSGD(torch.optim.SGD):
    """The seed's trick: an optimizer whose ``step`` records every gradient's histogram."""

    def __init__(self, named_params: list[tuple[str, nn.Parameter]], lr: float) -> None:
        self.names = [name for name, _ in named_params]
        super().__init__([p for _, p in named_params], lr=lr)
        self.summary = HistogramSummary()

    def step(self, closure=None):  # type: ignore[override]
        params = self.param_groups[0]["params"]
        for name, param in zip(self.names, params, strict=True):
            if param.grad is not None:
                self.summary(f"{name}.grad", param.grad)
        return super().step(closure)


def test_optimizer_subclass_records_gradient_histograms(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = SummarizingSGD(list(model.named_parameters()), lr=0.1)
    expected: dict[tuple[int, str], np.ndarray] = {}
    with SummaryRecord(tmp_path) as rec:
        for step in range(3):
            x, y = torch.randn(8, 4), torch.randn(8, 1)
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            for name, param in model.named_parameters():
                expected[(step, f"{name}.grad")] = param.grad.numpy().copy()
            optimizer.step()
            rec.record(step)
    events = read_events(tmp_path)
    assert {(e.step, e.tag) for e in events} == set(expected)
    for event in events:
        reference = reference_histogram(expected[(event.step, event.tag)])
        np.testing.assert_array_equal(event.value.counts, reference.counts)
        assert event.value.min == reference.min and event.value.max == reference.max


def test_gradient_histograms_example_runs(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "gradient_histograms.py"), str(tmp_path / "logs")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    events = read_events(tmp_path / "logs")
    tags = {e.tag for e in events if e.plugin == "histogram"}
    assert tags and all(tag.endswith(".grad") for tag in tags)
    assert any(e.plugin == "scalar" and e.tag == "loss" for e in events)
