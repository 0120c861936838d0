"""LossMonitor and TimeMonitor: printed lines, NaN/Inf stop, argument checks."""

from __future__ import annotations

import math

import pytest
import torch
from helpers.callback_driver import drive

from sumlens.train.callback import RunContext, RunParams
from sumlens.train.callbacks import LossMonitor, TimeMonitor, _common


class FakeClock:
    def __init__(self, start: float = 100.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


# ------------------------------------------------------------------ LossMonitor


def test_loss_monitor_prints_on_global_steps(capsys):
    drive([LossMonitor(3)], epochs=2, steps=4, outputs=lambda e, s: 1.5 + e + s / 10)
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["epoch: 1 step: 3, loss is 2.8", "epoch: 2 step: 2, loss is 3.7"]


def test_loss_monitor_default_prints_every_step_and_tensor_forms(capsys):
    values = {
        1: torch.tensor(1.25),
        2: (torch.tensor([1.0, 2.0]), torch.tensor(9.0)),  # first element, mean
        3: [torch.tensor(0.5)],
        4: 7,  # anything else: printed as is
    }
    drive([LossMonitor()], epochs=1, steps=4, outputs=lambda e, s: values[s])
    assert capsys.readouterr().out.splitlines() == [
        "epoch: 1 step: 1, loss is 1.25",
        "epoch: 1 step: 2, loss is 1.5",
        "epoch: 1 step: 3, loss is 0.5",
        "epoch: 1 step: 4, loss is 7",
    ]


def test_loss_monitor_zero_disables_printing_but_not_nan_check(capsys):
    drive([LossMonitor(0)], epochs=1, steps=3)
    assert capsys.readouterr().out == ""
    with pytest.raises(ValueError, match="NAN or INF"):
        drive([LossMonitor(0)], epochs=1, steps=3, outputs=lambda e, s: torch.tensor(math.nan))


@pytest.mark.parametrize(
    "bad",
    [
        torch.tensor(math.nan),
        (torch.tensor([1.0, math.inf]), 0),
        -math.inf,
        [torch.tensor(math.nan)],
    ],
)
def test_loss_monitor_nan_inf_raises_and_stops_training(bad, capsys):
    seen = []

    def outputs(epoch, step):
        seen.append((epoch, step))
        return bad if (epoch, step) == (2, 3) else torch.tensor(1.0)

    with pytest.raises(ValueError) as info:
        drive([LossMonitor(100)], epochs=3, steps=4, outputs=outputs)
    assert str(info.value) == (
        "In epoch: 2 step: 3, loss is NAN or INF, training process cannot continue, "
        "terminating training."
    )
    assert seen[-1] == (2, 3)  # nothing ran after the bad step


def test_loss_monitor_counter_going_back_prints_again(capsys):
    monitor = LossMonitor(2)
    drive([monitor], epochs=1, steps=4, outputs=lambda e, s: 1.0)
    drive([monitor], epochs=1, steps=2, outputs=lambda e, s: 2.0)  # counter restarts at 0
    assert capsys.readouterr().out.splitlines() == [
        "epoch: 1 step: 2, loss is 1.0",
        "epoch: 1 step: 4, loss is 1.0",
        "epoch: 1 step: 2, loss is 2.0",
    ]


def test_loss_monitor_prints_eval_result_at_epoch_end(capsys):
    drive([LossMonitor(100)], epochs=1, steps=2, results=lambda e: {"acc": 0.5})
    assert capsys.readouterr().out == "Eval result: epoch 1, metrics: {'acc': 0.5}\n"


def test_loss_monitor_only_rank_zero_prints(monkeypatch, capsys):
    monkeypatch.setattr(_common, "rank_and_world", lambda: (1, 2))
    drive([LossMonitor()], epochs=1, steps=2)
    assert capsys.readouterr().out == ""
    with pytest.raises(ValueError, match="NAN or INF"):
        drive([LossMonitor()], epochs=1, steps=2, outputs=lambda e, s: math.nan)


@pytest.mark.parametrize(
    ("value", "error"),
    [(-1, ValueError), (1.0, TypeError), (True, TypeError), ("2", TypeError)],
)
def test_loss_monitor_argument_errors(value, error):
    with pytest.raises(error, match="per_print_times"):
        LossMonitor(value)


# ------------------------------------------------------------------ TimeMonitor


def test_time_monitor_line_format(capsys):
    clock = FakeClock()
    monitor = TimeMonitor(clock=clock)

    def tick(params):
        clock.now += 0.06275

    drive([monitor], epochs=1, steps=4, on_step=tick)
    assert capsys.readouterr().out == ("Train epoch time: 251.000 ms, per step time: 62.750 ms\n")


def test_time_monitor_data_time_and_separate_eval_timer(capsys):
    clock = FakeClock()
    monitor = TimeMonitor(data_time=True, clock=clock)
    params = RunParams(mode="train", batch_num=2, cur_epoch_num=1, dataset_sink_mode=False)
    ctx = RunContext(params)
    monitor.on_train_epoch_begin(ctx)
    for _ in range(2):
        clock.now += 0.010  # waiting for data
        monitor.on_train_step_begin(ctx)
        clock.now += 0.040  # compute
        monitor.on_train_step_end(ctx)
    # an evaluation inside fit: its own timer, must not disturb the training one
    params.mode = "eval"
    params.batch_num = 5
    monitor.on_eval_epoch_begin(ctx)
    clock.now += 0.050
    monitor.on_eval_epoch_end(ctx)
    params.mode = "train"
    params.batch_num = 2
    monitor.on_train_epoch_end(ctx)
    assert capsys.readouterr().out.splitlines() == [
        "Eval epoch time: 50.000 ms, per step time: 10.000 ms",
        "Train epoch time: 150.000 ms, per step time: 75.000 ms (data time: 10.000 ms)",
    ]


def test_time_monitor_falls_back_to_data_size_then_fails(capsys):
    clock = FakeClock()
    params = RunParams(mode="train", batch_num=None)
    ctx = RunContext(params)
    monitor = TimeMonitor(data_size=4, clock=clock)
    monitor.on_train_epoch_begin(ctx)
    clock.now += 1.0
    monitor.on_train_epoch_end(ctx)
    assert capsys.readouterr().out == "Train epoch time: 1000.000 ms, per step time: 250.000 ms\n"
    bare = TimeMonitor(clock=clock)
    bare.on_train_epoch_begin(ctx)
    with pytest.raises(ValueError, match="data_size"):
        bare.on_train_epoch_end(ctx)


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"data_time": 1}, TypeError, "data_time"),
        ({"data_size": 0}, ValueError, "data_size"),
        ({"data_size": -3}, ValueError, "data_size"),
        ({"data_size": 2.0}, TypeError, "data_size"),
        ({"clock": 5}, TypeError, "clock"),
    ],
)
def test_time_monitor_argument_errors(kwargs, error, name):
    with pytest.raises(error, match=name):
        TimeMonitor(**kwargs)
