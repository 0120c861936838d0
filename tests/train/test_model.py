"""sumlens.Model: hook order (train, eval, fit, sink), cb_params, validation, amp, resume."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from sumlens.metrics import Accuracy, Loss
from sumlens.train import (
    DynamicLossScaleManager,
    FixedLossScaleManager,
    Model,
    load_checkpoint,
    save_checkpoint,
)
from sumlens.train.callback import Callback, CallbackList, RunContext, RunParams

HOOKS = {
    "on_train_begin": "begin",
    "on_train_epoch_begin": "eb",
    "on_train_step_begin": "sb",
    "on_train_step_end": "se",
    "on_train_epoch_end": "ee",
    "on_train_end": "end",
    "on_eval_begin": "e_begin",
    "on_eval_epoch_begin": "e_eb",
    "on_eval_step_begin": "e_sb",
    "on_eval_step_end": "e_se",
    "on_eval_epoch_end": "e_ee",
    "on_eval_end": "e_end",
}


class Recorder(Callback):
    """Records ``name[epoch.step]`` for every new-style hook, and can request a stop."""

    def __init__(self, stop_at_step: int | None = None) -> None:
        self.trace: list[str] = []
        self.snapshots: dict[str, list[dict]] = {}
        self.stop_at_step = stop_at_step
        self.entered = self.exited = 0

    def __enter__(self) -> Recorder:
        self.entered += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self.exited += 1


def _make_hook(name: str, short: str):
    def hook(self: Recorder, run_context: RunContext) -> None:
        params = run_context.original_args()
        self.trace.append(short)
        self.snapshots.setdefault(short, []).append(dict(params))
        if (
            name == "on_train_step_end"
            and self.stop_at_step is not None
            and params["cur_step_num"] >= self.stop_at_step
        ):
            run_context.request_stop()

    return hook


for _name, _short in HOOKS.items():
    setattr(Recorder, _name, _make_hook(_name, _short))


def _data(n_batches: int = 4, batch: int = 8, seed: int = 0) -> list[tuple]:
    gen = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n_batches):
        x = torch.randn(batch, 4, generator=gen)
        y = (x[:, 0] > 0).long()
        out.append((x, y))
    return out


def _model(seed: int = 0, **kwargs) -> Model:
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    kwargs.setdefault("metrics", {"acc": Accuracy(), "loss": Loss()})
    return Model(net, nn.CrossEntropyLoss(), opt, **kwargs)


# ----------------------------------------------------------------------------- train


def test_train_hook_order_and_step_numbers() -> None:
    rec = Recorder()
    _model().train(2, _data(3), callbacks=rec)
    assert rec.trace == ["begin"] + 2 * (["eb"] + 3 * ["sb", "se"] + ["ee"]) + ["end"]
    assert [s["cur_step_num"] for s in rec.snapshots["se"]] == [1, 2, 3, 4, 5, 6]
    assert [s["cur_epoch_num"] for s in rec.snapshots["eb"]] == [1, 2]
    assert rec.entered == rec.exited == 1


def test_train_cb_params_keys() -> None:
    rec = Recorder()
    data = _data(2)
    model = _model()
    model.train(1, data, callbacks=[rec])
    step = rec.snapshots["se"][0]
    expected = {
        "batch_num", "cur_epoch_num", "cur_step_num", "dataset_sink_mode", "device_number",
        "epoch_num", "initial_step", "last_save_ckpt_step", "latest_ckpt_file", "list_callback",
        "loss_fn", "loss_scale_mananger", "mode", "net_outputs", "network", "optimizer",
        "parallel_mode", "train_dataset", "train_dataset_element", "train_network",
    }  # fmt: skip
    assert expected <= set(step)
    assert step["mode"] == "train"
    assert step["batch_num"] == 2 and step["epoch_num"] == 1
    assert step["list_callback"] == [rec]
    assert step["parallel_mode"] == "stand_alone" and step["device_number"] == 1
    assert step["train_dataset"] is data
    assert step["train_dataset_element"] is data[0]
    assert step["train_network"] is model.train_network
    assert isinstance(step["net_outputs"], torch.Tensor) and step["net_outputs"].ndim == 0
    assert not step["net_outputs"].requires_grad
    begin = rec.snapshots["begin"][0]
    assert begin["train_dataset_element"] is None and begin["net_outputs"] is None
    assert "metrics" not in rec.snapshots["ee"][0]


def test_stop_request_ends_after_current_step() -> None:
    rec = Recorder(stop_at_step=2)
    _model().train(3, _data(4), callbacks=rec)
    assert rec.trace == ["begin", "eb", "sb", "se", "sb", "se", "ee", "end"]


def test_callbacks_exited_on_error() -> None:
    class Boom(Callback):
        def on_train_step_end(self, run_context: RunContext) -> None:
            raise RuntimeError("boom")

    rec = Recorder()
    with pytest.raises(RuntimeError, match="boom"):
        _model().train(1, _data(2), callbacks=[rec, Boom()])
    assert rec.entered == rec.exited == 1


def test_old_style_hooks_fire_in_train_and_eval() -> None:
    class Old(Callback):
        def __init__(self) -> None:
            self.calls: list[str] = []

        def step_end(self, run_context: RunContext) -> None:
            self.calls.append(run_context.original_args()["mode"])

    old = Old()
    model = _model()
    with pytest.warns(DeprecationWarning):
        model.train(1, _data(2), callbacks=old)
    model.eval(_data(3), callbacks=old)
    assert old.calls == ["train", "train", "eval", "eval", "eval"]


# ----------------------------------------------------------------------------- eval / fit


def test_eval_hook_order_and_results() -> None:
    rec = Recorder()
    model = _model()
    data = _data(3)
    result = model.eval(data, callbacks=rec)
    assert rec.trace == ["e_begin", "e_eb"] + 3 * ["e_sb", "e_se"] + ["e_ee", "e_end"]
    assert set(result) == {"acc", "loss"}
    assert 0.0 <= result["acc"] <= 1.0 and result["loss"] > 0
    assert [s["cur_step_num"] for s in rec.snapshots["e_se"]] == [1, 2, 3]
    end = rec.snapshots["e_end"][0]
    assert end["metrics"] == result and "eval_results" not in end
    assert "metrics" not in rec.snapshots["e_ee"][0]
    assert end["mode"] == "eval" and end["batch_num"] == 3 and end["valid_dataset"] is data
    loss, logits, label = end["net_outputs"]
    assert logits.shape == (8, 2) and label is data[-1][1] and loss.ndim == 0
    assert end["eval_dataset_element"] is data[-1]
    # the metrics agree with a direct computation
    acc = Accuracy()
    with torch.no_grad():
        for x, y in data:
            acc.update(model.predict(x), y)
    assert result["acc"] == pytest.approx(acc.eval())


def test_eval_restores_training_mode_and_stop() -> None:
    model = _model()
    model.predict_network.train()
    rec = Recorder()

    class StopEval(Callback):
        def on_eval_step_end(self, run_context: RunContext) -> None:
            run_context.request_stop()

    model.eval(_data(3), callbacks=[rec, StopEval()])
    assert rec.trace == ["e_begin", "e_eb", "e_sb", "e_se", "e_ee", "e_end"]
    assert model.predict_network.training


def test_fit_hook_order_and_eval_results() -> None:
    from sumlens.train.callbacks import LossMonitor

    class BuiltinProbe(LossMonitor):
        """Counts eval hooks it receives (a built-in: must not run in fit's eval)."""

        evals = 0

        def on_eval_begin(self, run_context: RunContext) -> None:
            type(self).evals += 1

    BuiltinProbe.__module__ = "sumlens.train.callbacks.loss_monitor"
    rec = Recorder()
    model = _model()
    model.fit(3, _data(2), _data(3, seed=1), valid_frequency=2, callbacks=[rec, BuiltinProbe(0)])
    epoch = ["sb", "se", "sb", "se"]
    evaluation = ["e_begin", "e_eb"] + 3 * ["e_sb", "e_se"] + ["e_ee", "e_end"]
    assert rec.trace == (
        ["begin", "eb", *epoch, "ee", "eb", *epoch, *evaluation, "ee", "eb", *epoch, "ee", "end"]
    )
    assert BuiltinProbe.evals == 0
    ee = rec.snapshots["ee"]
    assert "metrics" not in ee[0] and "metrics" not in ee[2]
    assert set(ee[1]["metrics"]) == {"acc", "loss"}
    assert set(ee[1]["eval_results"]) == {"acc", "loss", "eval_loss"}
    assert ee[1]["eval_results"]["eval_loss"] == pytest.approx(ee[1]["metrics"]["loss"])
    # training values restored after the evaluation
    assert ee[1]["mode"] == "train" and ee[1]["cur_step_num"] == 4 and ee[1]["batch_num"] == 2
    assert [s["cur_step_num"] for s in rec.snapshots["e_se"]] == [1, 2, 3]
    assert rec.snapshots["e_end"][0]["batch_num"] == 3
    assert "eval_results" in rec.snapshots["e_end"][0]


def test_fit_valid_frequency_list_and_stop_in_eval_does_not_stop_training() -> None:
    class StopEval(Callback):
        def on_eval_step_end(self, run_context: RunContext) -> None:
            run_context.request_stop()

    rec = Recorder()
    _model().fit(3, _data(1), _data(2), valid_frequency=[1, 3], callbacks=[rec, StopEval()])
    assert rec.trace.count("e_begin") == 2
    assert rec.trace.count("eb") == 3
    assert rec.trace.count("e_sb") == 2  # stop honoured inside each evaluation


# ----------------------------------------------------------------------------- sink mode


def test_sink_mode_hook_accounting() -> None:
    rec = Recorder()
    _model().train(2, _data(7), callbacks=rec, dataset_sink_mode=True, sink_size=3)
    assert rec.trace == ["begin"] + 2 * (["eb"] + 3 * ["sb", "se"] + ["ee"]) + ["end"]
    assert [s["cur_step_num"] for s in rec.snapshots["sb"]] == [3, 6, 7, 10, 13, 14]
    assert [s["cur_step_num"] for s in rec.snapshots["se"]] == [3, 6, 7, 10, 13, 14]
    begin = rec.snapshots["begin"][0]
    assert begin["batch_num"] == 3 and begin["sink_size"] == 3 and begin["dataset_sink_mode"]
    helper = rec.snapshots["eb"][0]["dataset_helper"]
    assert helper.sink_size() == 3 and helper.sinks_per_epoch == 3


def test_sink_mode_whole_epoch() -> None:
    rec = Recorder()
    _model().train(3, _data(5), callbacks=rec, dataset_sink_mode=True)
    assert rec.trace == ["begin"] + 3 * ["eb", "sb", "se", "ee"] + ["end"]
    assert [s["cur_step_num"] for s in rec.snapshots["se"]] == [5, 10, 15]
    assert rec.snapshots["begin"][0]["batch_num"] == 1


def test_sink_mode_stop_at_sink_boundary() -> None:
    seen: list[int] = []

    class CountSteps(Callback):
        pass

    data = _data(8)
    rec = Recorder(stop_at_step=1)  # asks on the first step_end, i.e. after sink 1
    model = _model()
    real_step = model.train_network.step

    def counting_step(element):
        seen.append(1)
        return real_step(element)

    model.train_network.step = counting_step
    model.train(2, data, callbacks=[rec, CountSteps()], dataset_sink_mode=True, sink_size=3)
    assert rec.trace == ["begin", "eb", "sb", "se", "ee", "end"]
    assert len(seen) == 3  # the whole first sink ran, nothing after it


def test_sink_mode_same_result_as_normal_mode() -> None:
    a, b = _model(), _model()
    data = _data(5)
    a.train(2, data)
    b.train(2, data, dataset_sink_mode=True, sink_size=2)
    for pa, pb in zip(a.predict_network.parameters(), b.predict_network.parameters(), strict=True):
        assert torch.equal(pa, pb)


def test_eval_sink_mode() -> None:
    rec = Recorder()
    result = _model().eval(_data(4), callbacks=rec, dataset_sink_mode=True)
    assert rec.trace == ["e_begin", "e_eb", "e_sb", "e_se", "e_ee", "e_end"]
    assert rec.snapshots["e_se"][0]["cur_step_num"] == 4
    assert rec.snapshots["e_end"][0]["batch_num"] == 1
    assert result == _model().eval(_data(4))


# ----------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"epoch": 0}, ValueError, "'epoch' must be >= 1, but got 0"),
        ({"epoch": 1.5}, TypeError, "'epoch' must be an int"),
        ({"epoch": 2, "initial_epoch": 2}, ValueError, "'initial_epoch' must be < 'epoch'"),
        ({"epoch": 2, "initial_epoch": -1}, ValueError, "'initial_epoch' must be >= 0"),
        ({"epoch": 1, "sink_size": 0}, ValueError, "'sink_size' must be -1"),
        ({"epoch": 1, "sink_size": -2}, ValueError, "'sink_size' must be -1"),
        ({"epoch": 1, "dataset_sink_mode": 1}, TypeError, "'dataset_sink_mode' must be a bool"),
        ({"epoch": 1, "callbacks": [object()]}, TypeError, r"callbacks\[0\]"),
        ({"epoch": 1, "train_dataset": []}, ValueError, "'train_dataset' is empty"),
        ({"epoch": 1, "train_dataset": iter(_data(1))}, TypeError, "re-iterable"),
    ],
)
def test_train_argument_errors(kwargs: dict, exc: type, match: str) -> None:
    kwargs.setdefault("train_dataset", _data(1))
    with pytest.raises(exc, match=match):
        _model().train(**kwargs)


def test_model_argument_errors() -> None:
    net = nn.Linear(4, 2)
    with pytest.raises(TypeError, match=r"'network' must be a torch\.nn\.Module"):
        Model(lambda x: x)
    with pytest.raises(ValueError, match="'amp_level' must be one of"):
        Model(net, amp_level="O4")
    with pytest.raises(ValueError, match="'eval_indexes'"):
        Model(net, nn.CrossEntropyLoss(), eval_indexes=[0, 1])
    with pytest.raises(ValueError, match="neither a 'loss_fn' nor an 'eval_network'"):
        Model(net, metrics={"acc"})
    with pytest.raises(TypeError, match="'loss_scale_manager'"):
        Model(net, loss_scale_manager=1.0)
    with pytest.raises(ValueError, match="no metrics"):
        Model(net, nn.CrossEntropyLoss()).eval(_data(1))
    with pytest.raises(ValueError, match="no optimizer"):
        Model(net, nn.CrossEntropyLoss()).train(1, _data(1))
    with pytest.raises(ValueError, match="no metrics"):
        model = Model(net, nn.CrossEntropyLoss(), torch.optim.SGD(net.parameters(), lr=0.1))
        model.fit(1, _data(1), _data(1))
    with pytest.raises(TypeError, match="'valid_frequency'"):
        _model().fit(1, _data(1), _data(1), valid_frequency=1.0)
    with pytest.raises(ValueError, match="'valid_dataset' is empty"):
        _model().eval([])


# ----------------------------------------------------------------------------- datasets


def test_dict_batches_and_network_with_loss() -> None:
    class WithLoss(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x, y):
            logits = self.fc(x)
            return nn.functional.cross_entropy(logits, y), logits

    data = [{"y": y, "x": x} for x, y in _data(3)]
    rec = Recorder()
    net = WithLoss()
    model = Model(
        net, optimizer=torch.optim.SGD(net.parameters(), lr=0.1), label_key="y", input_keys=["x"]
    )
    model.train(1, data, callbacks=rec)
    element = rec.snapshots["sb"][0]["train_dataset_element"]
    assert element[0] is data[0]["x"] and element[1] is data[0]["y"]
    loss, logits = rec.snapshots["se"][0]["net_outputs"]
    assert loss.ndim == 0 and logits.shape == (8, 2) and not logits.requires_grad
    with pytest.raises(ValueError, match="label key 'label'"):
        Model(net, optimizer=torch.optim.SGD(net.parameters(), lr=0.1)).train(1, data)


def test_non_len_reiterable_dataset_and_custom_eval_network() -> None:
    class Loader:
        def __init__(self, batches: list) -> None:
            self.batches = batches

        def __iter__(self):
            return iter(self.batches)

    data = Loader(_data(3))
    torch.manual_seed(0)
    net = nn.Linear(4, 2)
    model = Model(
        net,
        nn.CrossEntropyLoss(),
        torch.optim.SGD(net.parameters(), lr=0.1),
        metrics={"acc": Accuracy()},
        eval_network=lambda x, y: (net(x), y),
    )
    rec = Recorder()
    model.train(1, data, callbacks=rec)
    assert rec.snapshots["begin"][0]["batch_num"] == 3
    assert set(model.eval(data)) == {"acc"}


# ----------------------------------------------------------------------------- amp / loss scale


def test_dynamic_loss_scale_policy() -> None:
    manager = DynamicLossScaleManager(init_loss_scale=16, scale_factor=2, scale_window=2)
    manager.update_loss_scale(False)
    assert manager.get_loss_scale() == 16
    manager.update_loss_scale(False)
    assert manager.get_loss_scale() == 32
    manager.update_loss_scale(True)
    assert manager.get_loss_scale() == 16
    for _ in range(10):
        manager.update_loss_scale(True)
    assert manager.get_loss_scale() == 1
    state = manager.state_dict()
    other = DynamicLossScaleManager()
    other.load_state_dict(state)
    assert other.get_loss_scale() == 1 and manager.get_drop_overflow_update()
    with pytest.raises(ValueError, match="'scale_factor'"):
        DynamicLossScaleManager(scale_factor=1)
    with pytest.raises(ValueError, match="'loss_scale'"):
        FixedLossScaleManager(0.5)
    with pytest.raises(TypeError, match="'drop_overflow_update'"):
        FixedLossScaleManager(2, drop_overflow_update=1)


@pytest.mark.parametrize("manager", [FixedLossScaleManager(1024.0), DynamicLossScaleManager(2**10)])
def test_loss_scaling_gives_same_update_and_skips_overflow(manager) -> None:
    data = _data(3)
    plain, scaled = _model(), _model(loss_scale_manager=manager)
    plain.train(1, data)
    scaled.train(1, data)
    for a, b in zip(
        plain.predict_network.parameters(), scaled.predict_network.parameters(), strict=True
    ):
        torch.testing.assert_close(a, b)
    before = [p.detach().clone() for p in scaled.predict_network.parameters()]
    bad = [(torch.full((8, 4), math.inf), torch.zeros(8, dtype=torch.long))]
    scaled.train(1, bad)
    after = list(scaled.predict_network.parameters())
    assert all(torch.equal(a, b) for a, b in zip(before, after, strict=True))
    if isinstance(manager, DynamicLossScaleManager):
        assert manager.get_loss_scale() == 2**9


def test_amp_levels_on_cpu() -> None:
    data = _data(4)
    assert _model(amp_level="auto")._amp.dtype is None  # auto: O0 on CPU
    for level in ("O1", "O2"):
        model = _model(amp_level=level)
        before = model.eval(data)["loss"]
        model.train(3, data)
        assert model.eval(data)["loss"] < before
        assert next(model.predict_network.parameters()).dtype == torch.float32
        assert model.predict(data[0][0]).dtype == torch.bfloat16
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 2))
    model = Model(
        net,
        nn.CrossEntropyLoss(),
        torch.optim.SGD(net.parameters(), lr=0.1),
        metrics={"loss"},
        amp_level="O3",
        keep_batchnorm_fp32=True,
    )
    assert net[0].weight.dtype == torch.bfloat16 and net[1].weight.dtype == torch.float32
    model.train(1, data)
    assert math.isfinite(model.eval(data)["loss"])
    with pytest.raises(TypeError, match="'keep_batchnorm_fp32'"):
        _model(amp_level="O3", keep_batchnorm_fp32="yes")


# ----------------------------------------------------------------------------- resume


def test_resume_matches_uninterrupted_run(tmp_path) -> None:
    torch.use_deterministic_algorithms(True)
    try:
        data = _data(4)
        full = _model(seed=3)
        full_rec = Recorder()
        full.train(4, data, callbacks=full_rec)

        first = _model(seed=3)
        first.train(2, data)
        path = tmp_path / "mid.ckpt"
        save_checkpoint(first.predict_network, str(path), optimizer=first.train_network.optimizer)

        resumed = _model(seed=99)  # different init: everything must come from the checkpoint
        load_checkpoint(
            str(path), resumed.predict_network, optimizer=resumed.train_network.optimizer
        )
        rec = Recorder()
        resumed.train(4, data, callbacks=rec, initial_epoch=2)
    finally:
        torch.use_deterministic_algorithms(False)
    for a, b in zip(
        full.predict_network.parameters(), resumed.predict_network.parameters(), strict=True
    ):
        assert torch.equal(a, b)
    assert [s["cur_step_num"] for s in rec.snapshots["se"]] == [9, 10, 11, 12, 13, 14, 15, 16]
    assert [s["cur_epoch_num"] for s in rec.snapshots["eb"]] == [3, 4]
    assert rec.snapshots["begin"][0]["initial_step"] == 8
    assert rec.snapshots["begin"][0]["epoch_num"] == 2
    full_losses = [s["net_outputs"] for s in full_rec.snapshots["se"][8:]]
    assert all(
        torch.equal(a, b)
        for a, b in zip(full_losses, [s["net_outputs"] for s in rec.snapshots["se"]], strict=True)
    )


# ----------------------------------------------------------------------------- hand-driven loop


def test_callback_list_driven_by_hand() -> None:
    """The recipe of sumlens.train.model's docstring: a custom loop calling the callbacks."""
    from sumlens.train.callbacks import History

    torch.manual_seed(0)
    net = nn.Linear(4, 2)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    loader = _data(3)
    rec, history = Recorder(stop_at_step=5), History()
    params = RunParams(
        mode="train", network=net, train_network=net, optimizer=opt, loss_fn=loss_fn,
        epoch_num=3, batch_num=len(loader), cur_epoch_num=0, cur_step_num=0,
        dataset_sink_mode=False, train_dataset=loader, train_dataset_element=None,
        net_outputs=None,
    )  # fmt: skip
    context = RunContext(params)
    with CallbackList([rec, history]) as cbs:
        params.list_callback = cbs.callbacks
        cbs.on_train_begin(context)
        for epoch in range(3):
            params.cur_epoch_num = epoch + 1
            cbs.on_train_epoch_begin(context)
            for x, y in loader:
                params.cur_step_num += 1
                params.train_dataset_element = (x, y)
                cbs.on_train_step_begin(context)
                loss = loss_fn(net(x), y)
                loss.backward()
                opt.step()
                opt.zero_grad()
                params.net_outputs = loss.detach()
                cbs.on_train_step_end(context)
                if context.get_stop_requested():
                    break
            cbs.on_train_epoch_end(context)
            if context.get_stop_requested():
                break
        cbs.on_train_end(context)
    assert rec.entered == rec.exited == 1
    epoch1 = ["eb", "sb", "se", "sb", "se", "sb", "se", "ee"]  # 3 steps
    epoch2 = ["eb", "sb", "se", "sb", "se", "ee"]  # stop requested at step 5
    assert rec.trace == ["begin", *epoch1, *epoch2, "end"]
    assert history.epoch == {"epoch": [1, 2]}


def test_same_as_hand_written_loop() -> None:
    """Model.train does exactly forward/loss/backward/step/zero_grad per batch."""
    data = _data(4)
    model = _model(seed=5)
    model.train(2, data)
    torch.manual_seed(5)
    net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    for _ in range(2):
        for x, y in data:
            nn.functional.cross_entropy(net(x), y).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    for a, b in zip(model.predict_network.parameters(), net.parameters(), strict=True):
        assert torch.equal(a, b)


def test_fixed_loss_scale_without_drop_always_steps() -> None:
    manager = FixedLossScaleManager(8.0, drop_overflow_update=False)
    model = _model(loss_scale_manager=manager)
    bad = [(torch.full((8, 4), math.inf), torch.zeros(8, dtype=torch.long))]
    model.train(1, bad)
    assert not all(torch.isfinite(p).all() for p in model.predict_network.parameters())
    assert manager.get_loss_scale() == 8.0


def test_predict_keeps_mode_and_has_no_grad() -> None:
    model = _model()
    net = model.predict_network
    net.train()
    out = model.predict(torch.randn(3, 4))
    assert out.shape == (3, 2) and not out.requires_grad and net.training
