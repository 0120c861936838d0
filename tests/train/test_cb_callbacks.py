"""LearningRateScheduler, History, LambdaCallback, EarlyStopping and ReduceLROnPlateau."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch
from helpers.callback_driver import drive

from sumlens.train.callback import Callback, CallbackList, RunContext, RunParams
from sumlens.train.callbacks import (
    EarlyStopping,
    History,
    LambdaCallback,
    LearningRateScheduler,
    MonitorCallback,
    ReduceLROnPlateau,
)


def two_group_optimizer(lr_a=0.1, lr_b=0.2):
    net = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(
        [{"params": [net.weight], "lr": lr_a}, {"params": [net.bias], "lr": lr_b}]
    )
    return net, opt


# ------------------------------------------------------------------ LearningRateScheduler


def test_lr_scheduler_halves_at_even_steps():
    calls = []

    def schedule(lr, step):
        calls.append((round(lr, 10), step))
        return lr / 2 if step % 2 == 0 else lr

    net, opt = two_group_optimizer(0.1, 0.7)
    drive([LearningRateScheduler(schedule)], epochs=1, steps=4, net=net, opt=opt)
    assert calls == [(0.1, 1), (0.1, 2), (0.05, 3), (0.05, 4)]
    assert [g["lr"] for g in opt.param_groups] == [0.025, 0.025]  # written to every group


def test_lr_scheduler_per_group_and_tensor_lr():
    net, opt = two_group_optimizer(0.1, 0.2)
    opt.param_groups[1]["lr"] = torch.tensor(0.2)
    drive(
        [LearningRateScheduler(lambda lr, step: lr * 0.5, per_group=True)], 1, 2, net=net, opt=opt
    )
    assert opt.param_groups[0]["lr"] == pytest.approx(0.025)
    assert isinstance(opt.param_groups[1]["lr"], torch.Tensor)
    assert float(opt.param_groups[1]["lr"]) == pytest.approx(0.05)


def test_lr_scheduler_skips_steps_without_optimizer_and_checks_result():
    scheduler = LearningRateScheduler(lambda lr, step: "fast")
    scheduler.on_eval_step_end(RunContext(RunParams(mode="eval", cur_step_num=1)))
    with pytest.raises(TypeError, match="learning_rate_function"):
        drive([scheduler], epochs=1, steps=1)


@pytest.mark.parametrize("function", [5, "0.1", None])
def test_lr_scheduler_refuses_a_non_callable_at_construction(function: object) -> None:
    with pytest.raises(TypeError) as info:
        LearningRateScheduler(function)  # type: ignore[arg-type]
    message = str(info.value)
    assert "learning_rate_function" in message and repr(function) in message
    assert "callable (lr: float, step: int) -> float" in message


# ------------------------------------------------------------------ History


def test_history_records_outputs_and_metrics():
    history = History()
    assert history.epoch is None
    losses = {1: torch.tensor([1.0, 2.0]), 2: (torch.tensor(0.5), torch.tensor(9.0))}
    drive(
        [history],
        epochs=2,
        steps=2,
        outputs=lambda e, s: losses[e],
        results=lambda e: {"acc": 0.25 * e},
    )
    assert history.epoch == {"epoch": [1, 2]}
    assert history.history["acc"] == [0.25, 0.5]
    assert history.history["net_output"] == [1.5, 0.5]
    assert all(isinstance(v, np.floating) for v in history.history["net_output"])
    drive([history], epochs=1, steps=1, outputs=lambda e, s: 3.0)  # not cleared between runs
    assert history.epoch == {"epoch": [1]}
    assert history.history["net_output"][-1] == 3.0


# ------------------------------------------------------------------ LambdaCallback


def test_lambda_callback_new_and_old_spellings():
    events = []
    callback = LambdaCallback(
        on_train_begin=lambda ctx: events.append("train_begin"),
        on_eval_end=lambda ctx: events.append("eval_end"),
        step_end=lambda ctx: events.append(("step_end", ctx.original_args()["mode"])),
    )
    params = RunParams(mode="train")
    ctx = RunContext(params)
    with CallbackList([callback]) as cbs:
        cbs.on_train_begin(ctx)
        cbs.on_train_step_end(ctx)
        cbs.on_train_epoch_end(ctx)
        params.mode = "eval"
        cbs.on_eval_step_end(ctx)
        cbs.on_eval_end(ctx)
    assert events == ["train_begin", ("step_end", "train"), ("step_end", "eval"), "eval_end"]


def test_lambda_callback_errors():
    with pytest.raises(ValueError, match="step_end"):
        LambdaCallback(step_end=print, on_train_step_end=print)
    with pytest.raises(TypeError, match="on_train_end"):
        LambdaCallback(on_train_end=3)
    with pytest.raises(TypeError):
        LambdaCallback(on_train_stop=print)


# ------------------------------------------------------------------ EarlyStopping


def run_epochs(callbacks, values, monitor="eval_loss", **kwargs):
    """Drive with one step per epoch; ``values[e-1]`` is epoch e's monitored value."""
    params, ctx = drive(
        callbacks,
        epochs=len(values),
        steps=1,
        results=lambda e: {monitor: values[e - 1]},
        **kwargs,
    )
    return params.cur_epoch_num, ctx


def test_early_stopping_keras_patience():
    # patience=0: improving epochs never stop; the first non-improving one does
    stopper = EarlyStopping(patience=0, verbose=True)
    assert run_epochs([stopper], [3.0, 2.0, 1.0, 1.5, 0.5])[0] == 4
    assert stopper.stopped_epoch == 4 and stopper.best == 1.0
    # patience=2 with min_delta: 0.95 does not beat 1.0 by more than 0.1
    stopper = EarlyStopping(patience=2, min_delta=-0.1)
    assert stopper.min_delta == 0.1
    assert run_epochs([stopper], [1.0, 0.95, 0.97, 0.5, 0.4])[0] == 3


def test_early_stopping_verbose_lines(capsys):
    stopper = EarlyStopping(monitor="acc", patience=1, verbose=True, restore_best_weights=True)
    run_epochs([stopper], [0.5, 0.4, 0.9], monitor="acc")
    assert capsys.readouterr().out.splitlines() == [
        "Restoring model weights from the end of the best epoch.",
        "Epoch 00002: early stopping",
    ]


def test_early_stopping_max_mode_zero_value_and_baseline():
    # accuracy (auto -> max); 0.0 is a real value, not "missing"
    stopper = EarlyStopping(monitor="accuracy", patience=1)
    assert run_epochs([stopper], [0.0, 0.0, 0.0], monitor="accuracy")[0] == 2
    # baseline: improving epochs that stay below the baseline don't reset the wait, so
    # the first flat epoch already exceeds the patience (Keras semantics)
    values = [0.1, 0.2, 0.3, 0.3, 0.3]
    stopper = EarlyStopping(monitor="acc", patience=3, baseline=0.9)
    assert run_epochs([stopper], values, monitor="acc")[0] == 4
    stopper = EarlyStopping(monitor="acc", patience=3)
    assert run_epochs([stopper], values, monitor="acc")[0] == 5
    assert stopper.stopped_epoch == 0


def test_early_stopping_restores_best_weights():
    net = torch.nn.Linear(2, 1)
    snapshots = {}

    def results(epoch):
        snapshots[epoch] = net.weight.detach().clone()
        return {"eval_loss": {1: 1.0, 2: 0.5, 3: 0.7, 4: 0.8}[epoch]}

    stopper = EarlyStopping(patience=2, restore_best_weights=True)
    _, ctx = drive([stopper], epochs=4, steps=1, results=results, net=net)
    assert ctx.get_stop_requested() and stopper.stopped_epoch == 4
    assert torch.equal(net.weight.detach(), snapshots[2])


def test_early_stopping_loss_monitor_and_missing_value(caplog):
    stopper = EarlyStopping(monitor="loss", patience=0)
    drive([stopper], epochs=3, steps=1, outputs=lambda e, s: (torch.tensor(1.0), 0))
    assert stopper.stopped_epoch == 2
    stopper = EarlyStopping(patience=0)
    with caplog.at_level(logging.WARNING, logger="sumlens"):
        _, ctx = drive([stopper], epochs=2, steps=1)
    assert not ctx.get_stop_requested()
    assert "'eval_loss' is not available" in caplog.text
    with pytest.raises(ValueError, match="scalar"):
        run_epochs([EarlyStopping()], [torch.ones(3)])


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"monitor": 3}, TypeError, "monitor"),
        ({"min_delta": "0"}, TypeError, "min_delta"),
        ({"patience": -1}, ValueError, "patience"),
        ({"patience": 1.5}, TypeError, "patience"),
        ({"verbose": 1}, TypeError, "verbose"),
        ({"restore_best_weights": None}, TypeError, "restore_best_weights"),
        ({"mode": "up"}, ValueError, "mode"),
        ({"baseline": "high"}, TypeError, "baseline"),
    ],
)
def test_early_stopping_errors(kwargs, error, name):
    with pytest.raises(error, match=name):
        EarlyStopping(**kwargs)


# ------------------------------------------------------------------ ReduceLROnPlateau


def test_reduce_lr_on_plateau_with_cooldown_and_min_lr(capsys):
    net, opt = two_group_optimizer(0.1, 0.001)
    reducer = ReduceLROnPlateau(factor=0.5, patience=1, cooldown=2, min_lr=0.002, verbose=True)
    lrs = []

    class Spy(Callback):
        def on_train_epoch_end(self, run_context):
            lrs.append([g["lr"] for g in opt.param_groups])

    run_epochs([reducer, Spy()], [1.0, 1.0, 1.0, 1.0, 1.0, 0.1], net=net, opt=opt)
    # epoch 2: wait 1 -> reduce (group 2 is already below min_lr), cooldown 2
    # epoch 3: cooldown 2 -> 1, no counting; epoch 4: cooldown 1 -> 0, wait 1 -> reduce;
    # epoch 5: cooldown; epoch 6: improves
    assert lrs == [
        [0.1, 0.001],
        [0.05, 0.001],
        [0.05, 0.001],
        [0.025, 0.001],
        [0.025, 0.001],
        [0.025, 0.001],
    ]
    assert capsys.readouterr().out.splitlines() == [
        "Epoch 00002: ReduceLROnPlateau reducing learning rate to 0.05.",
        "Epoch 00004: ReduceLROnPlateau reducing learning rate to 0.025.",
    ]


def test_reduce_lr_floor_is_min_lr_and_max_mode():
    net, opt = two_group_optimizer(0.1, 0.1)
    reducer = ReduceLROnPlateau(monitor="acc", factor=0.1, patience=0, min_lr=0.05)
    run_epochs([reducer], [0.5, 0.5, 0.5], monitor="acc", net=net, opt=opt)
    assert [g["lr"] for g in opt.param_groups] == [0.05, 0.05]


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"factor": 1.0}, ValueError, "factor"),
        ({"factor": 0}, ValueError, "factor"),
        ({"factor": "0.5"}, TypeError, "factor"),
        ({"patience": -1}, ValueError, "patience"),
        ({"cooldown": -1}, ValueError, "cooldown"),
        ({"min_lr": None}, TypeError, "min_lr"),
        ({"min_delta": []}, TypeError, "min_delta"),
        ({"mode": "x"}, ValueError, "mode"),
    ],
)
def test_reduce_lr_errors(kwargs, error, name):
    with pytest.raises(error, match=name):
        ReduceLROnPlateau(**kwargs)


def test_monitor_base_is_shared():
    assert issubclass(EarlyStopping, MonitorCallback)
    assert issubclass(ReduceLROnPlateau, MonitorCallback)
    assert MonitorCallback("mae").lower_is_better and not MonitorCallback("acc").lower_is_better
    assert MonitorCallback("acc", mode="min").lower_is_better


def test_monitored_value_is_averaged_over_ranks(monkeypatch):
    import socket

    from sumlens.train.callbacks import _common

    dist = torch.distributed
    if not dist.is_available():
        pytest.skip("torch.distributed not available")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    try:
        # one real process pretending to be one of two ranks: the all-reduce sums only
        # this rank's value, so the "mean" is half of it -- proof the reduction ran
        monkeypatch.setattr(_common, "rank_and_world", lambda: (0, 2))
        params = RunParams(eval_results={"eval_loss": 3.0})
        assert EarlyStopping().get_monitor_value(params) == 1.5
    finally:
        dist.destroy_process_group()
