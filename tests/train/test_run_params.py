"""RunParams (MindSpore's ``cb_params``): typed keys with dict access, one object per phase,
and the old-style hook warning decided by what a class overrides."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from sumlens.train import (
    Callback,
    CallbackList,
    EarlyStopping,
    History,
    LambdaCallback,
    LearningRateScheduler,
    LossMonitor,
    Model,
    ModelCheckpoint,
    ReduceLROnPlateau,
    RunContext,
    RunParams,
    SummaryCollector,
    TimeMonitor,
)
from sumlens.train.callback import MissingRunParam

# ---- the object -------------------------------------------------------------------------


def test_attribute_and_item_access_are_the_same_value() -> None:
    params = RunParams(cur_step_num=3)
    assert params.cur_step_num == params["cur_step_num"] == 3
    params.cur_step_num += 1
    assert params["cur_step_num"] == 4
    params["mode"] = "train"
    assert params.mode == "train"
    del params.mode
    assert "mode" not in params
    assert isinstance(params, dict)
    assert RunContext(params).original_args() is params


def test_missing_key_is_a_key_error_and_an_attribute_error() -> None:
    params = RunParams()
    with pytest.raises(MissingRunParam):
        _ = params.metrics
    assert issubclass(MissingRunParam, KeyError) and issubclass(MissingRunParam, AttributeError)
    assert getattr(params, "metrics", None) is None and not hasattr(params, "metrics")
    with pytest.raises(KeyError):
        del params.metrics


def test_copy_is_a_run_params_and_dir_lists_the_keys() -> None:
    params = RunParams(mode="train", own_key=1)
    copied = params.copy()
    assert isinstance(copied, RunParams) and copied == params and copied is not params
    assert {"mode", "own_key", "copy"} <= set(dir(params))


# ---- the keys Model sets are the documented ones ------------------------------------------


class Snapshots(Callback):
    """Keeps the keys of the run parameters at every new-style hook."""

    def __init__(self) -> None:
        self.keys: set[str] = set()

    def _keep(self, run_context: RunContext) -> None:
        self.keys.update(run_context.original_args())


for _phase in ("train", "eval"):
    for _hook in ("begin", "epoch_begin", "step_begin", "step_end", "epoch_end", "end"):
        setattr(Snapshots, f"on_{_phase}_{_hook}", Snapshots._keep)


def _model() -> Model:
    torch.manual_seed(0)
    net = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    return Model(net, nn.CrossEntropyLoss(), optimizer, metrics={"acc", "loss"})


def _data(batches: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    gen = torch.Generator().manual_seed(1)
    return [(torch.randn(3, 4, generator=gen), torch.randint(0, 2, (3,))) for _ in range(batches)]


def test_every_key_model_sets_is_documented() -> None:
    snapshots = Snapshots()
    model = _model()
    model.fit(2, _data(3), _data(2), callbacks=snapshots)
    model.fit(2, _data(3), _data(2), callbacks=snapshots, dataset_sink_mode=True, sink_size=2)
    model.eval(_data(2), callbacks=snapshots, dataset_sink_mode=True)
    documented = set(RunParams.__annotations__)
    assert snapshots.keys <= documented
    assert len(documented) >= 25
    for key in documented:  # each one explained in the class docstring
        assert f"``{key}``" in (RunParams.__doc__ or ""), key


# ---- fit's evaluation has parameters of its own -------------------------------------------


class PhaseWatcher(Callback):
    """Checks, during fit's evaluation, that the training's parameters are untouched."""

    def __init__(self) -> None:
        self.train_params: RunParams | None = None
        self.seen_in_eval: list[tuple] = []

    def on_train_begin(self, run_context: RunContext) -> None:
        self.train_params = run_context.original_args()

    def on_eval_step_end(self, run_context: RunContext) -> None:
        params = run_context.original_args()
        train = self.train_params
        assert train is not None and params is not train
        params["added_by_eval"] = True  # a callback's own key stays in its phase
        self.seen_in_eval.append(
            (train.mode, train.cur_step_num, train.batch_num, params.mode, params.cur_step_num)
        )
        assert params.cur_epoch_num == train.cur_epoch_num  # a copy of training's
        assert params.train_network is train.train_network

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        params = run_context.original_args()
        assert params is self.train_params and "added_by_eval" not in params
        assert set(params.eval_results) == {"acc", "loss", "eval_loss"}


def test_fit_evaluation_does_not_touch_the_training_parameters() -> None:
    watcher = PhaseWatcher()
    _model().fit(2, _data(3), _data(2), callbacks=watcher)
    assert watcher.seen_in_eval == [
        ("train", 3, 3, "eval", 1),
        ("train", 3, 3, "eval", 2),
        ("train", 6, 3, "eval", 1),
        ("train", 6, 3, "eval", 2),
    ]


def test_fit_evaluation_selects_members_of_a_nested_callback_list() -> None:
    seen: list[str] = []

    class User(Callback):
        def on_eval_begin(self, run_context: RunContext) -> None:
            seen.append("user")

    class Builtinish(Callback):
        runs_in_fit_eval = False

        def on_eval_begin(self, run_context: RunContext) -> None:
            seen.append("builtin")

    _model().fit(2, _data(2), _data(1), callbacks=[CallbackList([User(), Builtinish()])])
    assert seen == ["user", "user"]


# ---- the old-style hook warning -----------------------------------------------------------


def test_builtins_use_new_style_hooks_only(tmp_path) -> None:
    callbacks = [
        LossMonitor(),
        TimeMonitor(),
        ModelCheckpoint(directory=str(tmp_path / "ckpt")),
        LearningRateScheduler(lambda lr, step: lr),
        History(),
        LambdaCallback(step_end=print),
        EarlyStopping(),
        ReduceLROnPlateau(),
        SummaryCollector(str(tmp_path / "summary")),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        CallbackList(callbacks)
        CallbackList([CallbackList(callbacks)])


def test_old_style_override_warns_once_per_class_even_under_a_builtin() -> None:
    class Printing(LossMonitor):
        def step_end(self, run_context: RunContext) -> None:
            pass

    class Grandchild(Printing):
        pass

    with pytest.warns(DeprecationWarning, match=r"Printing overrides old-style hooks \(step_end\)"):
        CallbackList([Printing()])
    with pytest.warns(DeprecationWarning, match="Grandchild"):
        CallbackList([Grandchild()])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        CallbackList([Printing(), Grandchild()])  # once per class
