"""A user's subclass of a built-in callback behaves exactly as the built-in.

``Model`` decides what a callback does from what its class declares (for instance
``Callback.runs_in_fit_eval``), never from the module it lives in, so ``class
MyCollector(SummaryCollector): pass`` writes the same steps, lineage, checkpoints, lines
and history as ``SummaryCollector`` in ``train``, ``eval`` and ``fit``. (Deciding by module
name once made such a subclass run in ``fit``'s evaluation, which reset it: epoch 2 of
its loss was silently dropped.)

Each case runs the built-in and its subclass through the same seeded run, next to a
probe callback that records every hook, and compares everything observable: the probe's
trace (hook order, stop requests), printed lines, files written, summary events, the
final weights and learning rates, and the callback's own record where it keeps one.
"""

from __future__ import annotations

import inspect
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from sumlens.io import iter_events
from sumlens.train import (
    Callback,
    CheckpointConfig,
    EarlyStopping,
    History,
    LambdaCallback,
    LearningRateScheduler,
    LossMonitor,
    Model,
    ModelCheckpoint,
    ReduceLROnPlateau,
    RunContext,
    SummaryCollector,
    TimeMonitor,
)
from sumlens.train import callbacks as builtin_callbacks
from sumlens.train.callbacks import MonitorCallback

EPOCHS = 3

# ---- the user's subclasses: nothing but a new class -------------------------------------


class MyLossMonitor(LossMonitor):
    pass


class MyTimeMonitor(TimeMonitor):
    pass


class MyModelCheckpoint(ModelCheckpoint):
    pass


class MyLearningRateScheduler(LearningRateScheduler):
    pass


class MyHistory(History):
    pass


class MyLambdaCallback(LambdaCallback):
    pass


class MyEarlyStopping(EarlyStopping):
    pass


class MyReduceLROnPlateau(ReduceLROnPlateau):
    pass


class MyMonitorCallback(MonitorCallback):
    pass


class MySummaryCollector(SummaryCollector):
    pass


# ---- how each built-in is made and what it leaves behind --------------------------------


class TickClock:
    """A clock that advances 1 ms per reading: the same hook calls print the same times."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 0.001
        return self.now


def _lambda_callback(cls: type, workdir: Path, log: list) -> Callback:
    def recorder(name: str) -> Callable[[RunContext], None]:
        def record(run_context: RunContext) -> None:
            params = run_context.original_args()
            log.append((name, params.get("mode"), params.get("cur_step_num")))

        return record

    names = [n for n in inspect.signature(LambdaCallback).parameters if n.startswith("on_")]
    return cls(**{name: recorder(name) for name in names})


def _summary_events(workdir: Path) -> dict[tuple[str, str], list[int]]:
    steps: dict[tuple[str, str], list[int]] = defaultdict(list)
    for event in iter_events(workdir / "summary"):
        tag = "graph" if event.plugin == "graph" else event.tag
        steps[(event.plugin, tag)].append(event.step)
    return dict(steps)


def _history(callback: History) -> tuple[Any, Any]:
    values = {
        key: [float(v) if isinstance(v, int | float | np.number) else v for v in items]
        for key, items in callback.history.items()
    }
    return values, callback.epoch


@dataclass(frozen=True)
class Case:
    """A built-in callback: how to make one (of ``cls``, the built-in or a subclass) and
    what it keeps besides what every run is compared on."""

    builtin: type
    subclass: type
    make: Callable[[type, Path, list], Callback]
    observe: Callable[[Any, Path], Any] = lambda callback, workdir: None

    @property
    def id(self) -> str:
        return self.builtin.__name__


CASES = [
    Case(LossMonitor, MyLossMonitor, lambda cls, workdir, log: cls(per_print_times=2)),
    Case(TimeMonitor, MyTimeMonitor, lambda cls, workdir, log: cls(clock=TickClock())),
    Case(
        ModelCheckpoint,
        MyModelCheckpoint,
        lambda cls, workdir, log: cls(
            prefix="net",
            directory=str(workdir / "ckpt"),
            config=CheckpointConfig(save_checkpoint_steps=3, keep_checkpoint_max=20),
        ),
        lambda callback, workdir: Path(callback.latest_ckpt_file_name).name,
    ),
    Case(
        LearningRateScheduler,
        MyLearningRateScheduler,
        lambda cls, workdir, log: cls(lambda lr, step: lr * 0.9 if step % 2 else lr),
    ),
    Case(History, MyHistory, lambda cls, workdir, log: cls(), lambda cb, workdir: _history(cb)),
    Case(LambdaCallback, MyLambdaCallback, _lambda_callback),
    Case(
        EarlyStopping,
        MyEarlyStopping,
        # never improves by 10 after the first epoch: stops after epoch 2
        lambda cls, workdir, log: cls(monitor="loss", min_delta=10.0, patience=1, verbose=True),
        lambda callback, workdir: (callback.stopped_epoch, callback.best, callback.wait),
    ),
    Case(
        ReduceLROnPlateau,
        MyReduceLROnPlateau,
        lambda cls, workdir, log: cls(monitor="loss", factor=0.5, patience=0, verbose=True),
        lambda callback, workdir: (callback.best, callback.wait, callback.cooldown_counter),
    ),
    Case(MonitorCallback, MyMonitorCallback, lambda cls, workdir, log: cls(monitor="loss")),
    Case(
        SummaryCollector,
        MySummaryCollector,
        lambda cls, workdir, log: cls(str(workdir / "summary"), collect_freq=1),
        lambda callback, workdir: _summary_events(workdir),
    ),
]


def test_every_builtin_callback_has_a_case() -> None:
    """A new built-in callback must be added to CASES."""
    exported = {
        getattr(builtin_callbacks, name)
        for name in builtin_callbacks.__all__
        if isinstance(getattr(builtin_callbacks, name), type)
        and issubclass(getattr(builtin_callbacks, name), Callback)
    }
    assert exported | {SummaryCollector} == {case.builtin for case in CASES}
    for case in CASES:
        assert case.subclass.__bases__ == (case.builtin,)
        assert not case.subclass.__module__.startswith("sumlens")


# ---- the runs ---------------------------------------------------------------------------


class Probe(Callback):
    """Records every hook with the run parameters that drive the callbacks."""

    def __init__(self) -> None:
        self.trace: list[tuple] = []

    def _record(self, name: str, run_context: RunContext) -> None:
        params = run_context.original_args()
        self.trace.append(
            (name, params.get("mode"), params.get("cur_epoch_num"), params.get("cur_step_num"))
        )


for _name in (f"on_{phase}_{hook}" for phase in ("train", "eval") for hook in (
    "begin", "epoch_begin", "step_begin", "step_end", "epoch_end", "end"
)):  # fmt: skip
    setattr(Probe, _name, lambda self, run_context, _n=_name: self._record(_n, run_context))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))


def _run(kind: str, callback: Callback, probe: Probe) -> Model:
    torch.manual_seed(0)
    images = torch.rand(12, 1, 4, 4)
    labels = torch.randint(0, 2, (12,))
    train = DataLoader(TensorDataset(images[:8], labels[:8]), batch_size=2)  # 4 steps
    valid = DataLoader(TensorDataset(images[8:], labels[8:]), batch_size=2)  # 2 steps
    net = Net()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    model = Model(net, nn.CrossEntropyLoss(), optimizer, metrics={"acc", "loss"})
    callbacks = [callback, probe]
    if kind == "train":
        model.train(EPOCHS, train, callbacks=callbacks)
    elif kind == "eval":
        model.eval(valid, callbacks=callbacks)
    else:
        model.fit(EPOCHS, train, valid, callbacks=callbacks)
    return model


def _files(workdir: Path) -> list[str]:
    return sorted(
        str(path.relative_to(workdir))
        for path in workdir.rglob("*")
        if path.is_file() and "summary" not in path.relative_to(workdir).parts
    )


def _outcome(case: Case, cls: type, kind: str, workdir: Path, capsys: Any) -> dict[str, Any]:
    workdir.mkdir()
    log: list = []
    callback = case.make(cls, workdir, log)
    probe = Probe()
    capsys.readouterr()
    model = _run(kind, callback, probe)
    network = model.predict_network
    return {
        "printed": capsys.readouterr().out.splitlines(),
        "probe": probe.trace,
        "log": log,
        "files": _files(workdir),
        "weights": {k: v.tolist() for k, v in network.state_dict().items()},
        "lr": [group["lr"] for group in model.train_network.optimizer.param_groups],
        "own": case.observe(callback, workdir),
    }


@pytest.mark.parametrize("kind", ["train", "eval", "fit"])
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_subclass_behaves_as_the_builtin(
    case: Case, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    builtin = _outcome(case, case.builtin, kind, tmp_path / "builtin", capsys)
    subclass = _outcome(case, case.subclass, kind, tmp_path / "subclass", capsys)
    for key, value in builtin.items():
        assert subclass[key] == value, key


def test_collector_subclass_in_fit_writes_every_epoch(tmp_path: Path) -> None:
    """The issue's example: 3 epochs of 4 steps, collect_freq=1 -> steps 1 .. 12."""
    collector = MySummaryCollector(str(tmp_path / "summary"), collect_freq=1)
    _run("fit", collector, Probe())
    events = _summary_events(tmp_path)
    assert events[("scalar", "loss/auto")] == list(range(1, 4 * EPOCHS + 1))
    assert events[("train_lineage", "train_lineage")] == [0]
    assert ("eval_lineage", "eval_lineage") not in events  # fit's evaluation: not collected


def test_fit_eval_calls_only_callbacks_that_declare_it() -> None:
    """TimeMonitor and user callbacks run in fit's evaluation, the other built-ins do not;
    a subclass inherits the declaration and an instance may change it."""
    assert TimeMonitor.runs_in_fit_eval and MyTimeMonitor.runs_in_fit_eval
    assert Callback.runs_in_fit_eval and Probe.runs_in_fit_eval
    for case in CASES:
        if case.builtin not in (TimeMonitor, MonitorCallback):
            assert not case.builtin.runs_in_fit_eval and not case.subclass.runs_in_fit_eval

    seen: list[str] = []
    lam = LambdaCallback(on_eval_begin=lambda ctx: seen.append("lambda"))
    _run("fit", lam, Probe())
    assert seen == []
    lam.runs_in_fit_eval = True
    _run("fit", lam, Probe())
    assert seen == ["lambda"] * EPOCHS
