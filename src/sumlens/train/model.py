"""``Model``: MindSpore's high-level training driver for a PyTorch ``nn.Module``.

::

    model = Model(net, loss_fn=nn.CrossEntropyLoss(), optimizer=opt, metrics={"acc"})
    model.train(5, train_loader, callbacks=[LossMonitor()])
    print(model.eval(test_loader))          # {'acc': 0.97}
    model.fit(5, train_loader, test_loader, valid_frequency=1)
    logits = model.predict(x)

**Datasets** are re-iterables of batches; see :mod:`sumlens.train.dataset` (tuples whose
last item is the label, or dicts read with ``label_key``/``input_keys``).

**The training step** is forward, loss, backward, ``optimizer.step()``,
``optimizer.zero_grad(set_to_none=True)``. With ``loss_fn`` the network gets the inputs
and ``net_outputs`` is the detached loss; without it the network gets the whole element
and must return the loss or a tuple whose first item is the loss (``net_outputs`` is that
output, detached). The step never calls ``.item()``: the loss stays on the device, so
a CUDA run is not synchronised per step (except when a loss-scale manager must know
whether the gradients overflowed). ``cb_params.train_network`` is a
:class:`TrainOneStep` module (network + loss + optimizer; calling it runs one step).

**Evaluation** (MindSpore semantics): with ``loss_fn`` and no ``eval_network`` the eval
step returns ``(loss, outputs, label)`` and ``eval_indexes`` is ``[0, 1, 2]``: the
``Loss`` metric gets ``outputs[eval_indexes[0]]``, every other metric gets
``(outputs[eval_indexes[1]], outputs[eval_indexes[2]])``. A custom ``eval_network`` gets
the whole element; with ``eval_indexes=None`` every metric gets ``update(*outputs)``.
``metrics`` without ``loss_fn`` and without ``eval_network`` is a ValueError (MindSpore).
``eval_loss`` (in ``cb_params.eval_results`` during ``fit``) is the mean of
``outputs[eval_indexes[0]]`` and is only there when ``eval_indexes`` is known.

**Mixed precision**: ``amp_level`` is documented in :mod:`sumlens.train.amp`; loss
scaling in :mod:`sumlens.train.loss_scale`.

**Sink mode** (``dataset_sink_mode=True``; MindSpore's device-side loop, here simply
several steps per callback call, to cut per-step callback cost or reproduce MindSpore's
step accounting). With ``sink_size=k`` (``-1``: the whole epoch) an epoch is still one
pass over the dataset, cut into *sinks* of ``k`` steps (the last one may be shorter):

* ``on_train_step_begin``/``on_train_step_end`` fire once per sink;
* ``cb_params.cur_step_num`` advances by the sink's number of steps (``k``; the last
  sink of an epoch by what is left), so it always counts batches trained on;
* ``cb_params.batch_num`` is the number of sinks per epoch (``ceil(len(dataset) / k)``,
  1 for ``k=-1``); ``cb_params.sink_size`` is ``k`` (``len(dataset)`` for ``k=-1``);
* ``cb_params.train_dataset_element`` is the first batch of the sink (set before
  ``step_begin``), ``net_outputs`` the outputs of its last step;
* ``cb_params.dataset_helper`` is a :class:`SinkInfo`;
* a stop request is honoured at the next sink boundary (after ``step_end``).

``eval(..., dataset_sink_mode=True)`` runs the whole dataset as one sink (``batch_num``
1, ``cur_step_num`` jumps to the number of batches).

**Hook order**: callbacks are entered before and exited after the run (also on errors);
a stop requested in ``step_end`` ends the epoch after that step, ``on_train_epoch_end``
(and ``fit``'s evaluation) still run, then ``on_train_end``. In ``fit`` the evaluation
runs after the epoch's steps and before ``on_train_epoch_end``, with the callbacks that
declare :attr:`~sumlens.train.Callback.runs_in_fit_eval` (user callbacks and
``TimeMonitor``, not the other built-ins), a fresh ``RunContext`` and run parameters of
its own (a copy of the training's with the evaluation's keys: the training's are not
changed by it); ``cb_params.metrics``/``eval_results`` exist during that
``on_train_epoch_end`` only. Every key is documented in :class:`~sumlens.train.RunParams`.

**Resume**: ``load_checkpoint(path, net, optimizer=opt)`` then
``model.train(epoch, ds, initial_epoch=done)`` continues the run: ``cur_epoch_num``
starts at ``initial_epoch + 1`` and ``cur_step_num`` at ``initial_epoch * len(ds)``
(``cb_params.initial_step``).

**Driving callbacks from your own loop** (no ``Model``): see the recipe in
:mod:`sumlens.train.callback` and ``examples/hand_driven_callbacks.py``.
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch

from sumlens._checks import check_bool, check_int
from sumlens.metrics import Loss, get_metrics
from sumlens.train.amp import AmpPlan, cast_network, network_device, resolve_amp
from sumlens.train.callback import (
    Callback,
    CallbackList,
    RunContext,
    RunParams,
    SinkInfo,
    check_callbacks,
)
from sumlens.train.dataset import dataset_size, element_converter
from sumlens.train.loss_scale import (
    DynamicLossScaleManager,
    FixedLossScaleManager,
    LossScaleManager,
)

__all__ = ["Model", "SinkInfo", "TrainOneStep"]

_END = object()


def _check_sink_size(value: object, owner: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"For '{owner}', the argument 'sink_size' must be an int (-1 or > 0), "
            f"but got {type(value).__name__} {value!r}"
        )
    if value != -1 and value <= 0:
        raise ValueError(
            f"For '{owner}', the argument 'sink_size' must be -1 (a whole epoch) or > 0, "
            f"but got {value}"
        )
    return value


def _detach(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, tuple | list):
        return type(value)(_detach(item) for item in value)
    return value


def _to_float32(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.float() if value.is_floating_point() else value
    if isinstance(value, tuple | list):
        return type(value)(_to_float32(item) for item in value)
    return value


def _cast_inputs(items: Sequence[Any], dtype: torch.dtype) -> tuple:
    return tuple(
        item.to(dtype) if isinstance(item, torch.Tensor) and item.is_floating_point() else item
        for item in items
    )


def _is_optimizer(value: object) -> bool:
    """Duck-typed: what the training step and the callbacks use of an optimizer."""
    return (
        callable(getattr(value, "step", None))
        and callable(getattr(value, "zero_grad", None))
        and hasattr(value, "param_groups")
    )


def _parallel_info() -> tuple[str, int]:
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return "data_parallel", dist.get_world_size()
    return "stand_alone", 1


def _unscale_and_check(optimizer: Any, inv_scale: float) -> torch.Tensor | None:
    """Divide the gradients by the scale in place; a 1-element tensor > 0 when any is
    inf/NaN (None when there are no gradients). One fused op per device, no sync."""
    by_device: dict[torch.device, list[torch.Tensor]] = {}
    for group in optimizer.param_groups:
        for param in group["params"]:
            if param.grad is not None:
                by_device.setdefault(param.grad.device, []).append(param.grad)
    found: torch.Tensor | None = None
    for device, grads in by_device.items():
        flag = torch.zeros(1, device=device)
        torch._amp_foreach_non_finite_check_and_unscale_(
            grads, flag, torch.full((1,), inv_scale, device=device)
        )
        found = flag if found is None else found + flag.to(found.device)
    return found


def _never(epoch: int) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class _EvalPlan:
    """What an evaluation runs over: ``size`` batches of ``dataset``, as one sink if
    ``sink``; in ``fit``, ``due(epoch)`` says whether it runs after that epoch."""

    dataset: Any
    size: int
    sink: bool
    due: Callable[[int], bool] = _never


@dataclass(frozen=True, slots=True)
class _TrainPlan:
    """What a ``train``/``fit`` call runs, validated: epochs ``initial_epoch + 1 .. epoch``
    of ``size`` batches (in sink mode cut into sinks of ``sink_steps``), and for ``fit``
    the evaluation."""

    dataset: Any
    size: int
    initial_epoch: int
    epoch: int
    sink: bool
    sink_steps: int
    validation: _EvalPlan | None = None

    @property
    def sinks(self) -> int:
        """Sinks per epoch in sink mode (the last one may be shorter)."""
        return math.ceil(self.size / self.sink_steps)

    @property
    def initial_step(self) -> int:
        """Where ``cur_step_num`` starts: the steps of the epochs already done."""
        return self.initial_epoch * self.size


@dataclass(frozen=True, slots=True)
class _Epochs:
    """What the epochs of a training run share, and the two ways to run one: a step per
    batch, or (sink mode) sinks of several steps per pair of step hooks. Each returns the
    new global step number; a stop request ends the epoch after the current step (sink)."""

    plan: _TrainPlan
    params: RunParams
    context: RunContext
    cbs: CallbackList
    step: Callable[[tuple], Any]
    convert: Callable[[Any], tuple]

    def run_steps(self, step_num: int) -> int:
        """One epoch, a step per batch: the hot loop, so everything is bound to locals."""
        params, context, step, convert = self.params, self.context, self.step, self.convert
        step_begin, step_end = self.cbs.on_train_step_begin, self.cbs.on_train_step_end
        stop_requested = context.get_stop_requested
        for batch in self.plan.dataset:
            element = convert(batch)
            step_num += 1
            params["cur_step_num"] = step_num
            params["train_dataset_element"] = element
            step_begin(context)
            params["net_outputs"] = step(element)
            step_end(context)
            if stop_requested():
                break
        return step_num

    def run_sinks(self, step_num: int) -> int:
        """One epoch of sinks of ``plan.sink_steps`` steps (the last one may be shorter)."""
        params, context, cbs = self.params, self.context, self.cbs
        step, convert = self.step, self.convert
        sink_steps = self.plan.sink_steps
        iterator = iter(self.plan.dataset)
        left = self.plan.size
        while True:
            batch = next(iterator, _END)
            if batch is _END:
                return step_num
            element = convert(batch)
            planned = min(sink_steps, left) if left > 0 else sink_steps
            params["cur_step_num"] = step_num + planned
            params["train_dataset_element"] = element
            cbs.on_train_step_begin(context)
            outputs = step(element)
            done = 1
            while done < planned:
                batch = next(iterator, _END)
                if batch is _END:
                    break
                outputs = step(convert(batch))
                done += 1
            step_num += done
            left -= done
            params["cur_step_num"] = step_num
            params["net_outputs"] = outputs
            cbs.on_train_step_end(context)
            if done < planned or context.get_stop_requested():
                return step_num


def _update_all(metric: Any, outputs: tuple) -> None:
    """Give ``metric`` every output of an eval step."""
    metric.update(*outputs)


def _update_picked(metric: Any, indexes: tuple[int, ...], outputs: tuple) -> None:
    """Give ``metric`` the outputs of an eval step at ``indexes`` (``eval_indexes``')."""
    metric.update(*[outputs[i] for i in indexes])


def _fit_eval_callbacks(callbacks: Iterable[Callback]) -> list[Callback]:
    """The callbacks ``fit``'s evaluation calls: those whose class (or instance) declares
    :attr:`Callback.runs_in_fit_eval`; the members of a nested CallbackList each by its own."""
    chosen: list[Callback] = []
    for callback in callbacks:
        if isinstance(callback, CallbackList):
            chosen.extend(_fit_eval_callbacks(callback.callbacks))
        elif callback.runs_in_fit_eval:
            chosen.append(callback)
    return chosen


class TrainOneStep(torch.nn.Module):
    """Network + loss + optimizer (``cb_params.train_network``): ``step(element)`` (or
    calling the module with the element's items) runs one training step and returns the
    step's ``net_outputs``.

    Parameter names are the network's prefixed with ``network.`` (as any wrapper module);
    ``load_param_into_net`` matches them against the bare network's names.
    """

    def __init__(
        self,
        network: torch.nn.Module,
        loss_fn: Callable[..., Any] | None,
        optimizer: Any,
        amp: AmpPlan,
        loss_scale_manager: LossScaleManager | None,
    ) -> None:
        super().__init__()
        self.network = network
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.amp = amp
        self.loss_scale_manager = loss_scale_manager
        self.step = self._build_step()

    def forward(self, *element: Any) -> Any:
        return self.step(element)

    def _build_step(self) -> Callable[[tuple], Any]:
        network, loss_fn, optimizer = self.network, self.loss_fn, self.optimizer
        amp, manager = self.amp, self.loss_scale_manager
        low = amp.dtype if amp.cast_network else None

        if loss_fn is None:

            def compute(element: tuple) -> tuple[torch.Tensor, Any]:
                if low is not None:
                    element = _cast_inputs(element, low)
                outputs = network(*element)
                if low is not None:
                    outputs = _to_float32(outputs)
                loss = outputs[0] if isinstance(outputs, tuple | list) else outputs
                return loss, outputs

        elif low is None:

            def compute(element: tuple) -> tuple[torch.Tensor, Any]:
                return loss_fn(network(*element[:-1]), element[-1]), None

        else:

            def compute(element: tuple) -> tuple[torch.Tensor, Any]:
                outputs = _to_float32(network(*_cast_inputs(element[:-1], low)))
                return loss_fn(outputs, element[-1]), None

        if amp.enabled:
            plain_compute = compute

            def compute(element: tuple) -> tuple[torch.Tensor, Any]:
                with amp.autocast():
                    return plain_compute(element)

        def result(loss: torch.Tensor, outputs: Any) -> Any:
            return loss.detach() if outputs is None else _detach(outputs)

        if manager is None:

            def step(element: tuple) -> Any:
                loss, outputs = compute(element)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                return result(loss, outputs)

            return step

        read_flag = not (
            isinstance(manager, FixedLossScaleManager) and not manager.get_drop_overflow_update()
        )

        def scaled_step(element: tuple) -> Any:
            loss, outputs = compute(element)
            scale = manager.get_loss_scale()
            (loss * scale).backward()
            found = _unscale_and_check(optimizer, 1.0 / scale)
            if read_flag:
                overflow = bool(found is not None and found.item() > 0)
                if not (overflow and manager.get_drop_overflow_update()):
                    optimizer.step()
                manager.update_loss_scale(overflow)
            else:
                optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            return result(loss, outputs)

        return scaled_step


class Model:
    """High-level training and evaluation of a ``torch.nn.Module`` (``mindspore.Model``).

    Args:
        network: the model (``nn.Module``).
        loss_fn: ``loss_fn(outputs, label)``; None when ``network`` computes the loss.
        optimizer: a ``torch.optim.Optimizer`` (needed by ``train``/``fit``).
        metrics: names (``{"acc", "loss"}``) or a dict name -> metric (sumlens,
            MindSpore-like or torchmetrics), see :func:`sumlens.metrics.get_metrics`.
        eval_network: module used by ``eval`` (gets the whole element).
        eval_indexes: positions of (loss, outputs, label) in the eval outputs, 3 ints.
        amp_level: ``"O0"``, ``"O1"``, ``"O2"``, ``"O3"`` or ``"auto"``
            (see :mod:`sumlens.train.amp`).
        loss_scale_manager: a :class:`FixedLossScaleManager` / :class:`DynamicLossScaleManager`.
        keep_batchnorm_fp32: keep normalisation layers float32 under O3 (None: level default).
        label_key: the label's key for dict batches (None: dict batches have no label).
        input_keys: the input keys of dict batches, in the network's argument order
            (None: every key but ``label_key``, in the dict's order).
    """

    def __init__(
        self,
        network: torch.nn.Module,
        loss_fn: Callable[..., Any] | None = None,
        optimizer: torch.optim.Optimizer | None = None,
        metrics: Any = None,
        eval_network: Callable[..., Any] | None = None,
        eval_indexes: list[int] | None = None,
        amp_level: str = "O0",
        loss_scale_manager: LossScaleManager | None = None,
        keep_batchnorm_fp32: bool | None = None,
        *,
        label_key: str | None = "label",
        input_keys: Sequence[str] | None = None,
    ) -> None:
        if not isinstance(network, torch.nn.Module):
            raise TypeError(
                "For 'Model', the argument 'network' must be a torch.nn.Module, "
                f"but got {type(network).__name__}"
            )
        for name, value, accepts, allowed in (
            ("loss_fn", loss_fn, callable, "callable"),
            ("optimizer", optimizer, _is_optimizer, "a torch.optim.Optimizer"),
            ("eval_network", eval_network, callable, "a module (callable)"),
            (
                "loss_scale_manager",
                loss_scale_manager,
                lambda manager: isinstance(manager, LossScaleManager),
                "a LossScaleManager (FixedLossScaleManager, DynamicLossScaleManager)",
            ),
        ):
            if value is not None and not accepts(value):
                raise TypeError(
                    f"For 'Model', the argument '{name}' must be {allowed} or None, "
                    f"but got {type(value).__name__}"
                )
        if eval_indexes is not None and not (
            isinstance(eval_indexes, list | tuple)
            and len(eval_indexes) == 3
            and all(isinstance(i, int) and not isinstance(i, bool) for i in eval_indexes)
        ):
            raise ValueError(
                "For 'Model', the argument 'eval_indexes' must be None or a list of 3 ints "
                f"(positions of loss, outputs and label), but got {eval_indexes!r}"
            )
        self._network = network
        self._loss_fn = loss_fn
        self._optimizer = optimizer
        self._device = network_device(network)
        self._amp = resolve_amp(amp_level, keep_batchnorm_fp32, self._device)
        self._amp_level = amp_level
        self._keep_batchnorm_fp32 = self._amp.keep_batchnorm_fp32
        if loss_scale_manager is None and self._amp.default_loss_scale:
            loss_scale_manager = DynamicLossScaleManager()
        self._loss_scale_manager = loss_scale_manager
        if self._amp.cast_network:
            assert self._amp.dtype is not None
            cast_network(network, self._amp.dtype, self._amp.keep_batchnorm_fp32)
        self._convert = element_converter(label_key, input_keys, self._device)

        self._metric_fns = get_metrics(metrics) or {}
        self._eval_network: Callable[..., Any] | None = None
        self._eval_indexes: list[int] | None = None
        self._with_eval_cell = False
        if self._metric_fns:
            if eval_network is not None:
                self._eval_network = eval_network
                self._eval_indexes = None if eval_indexes is None else list(eval_indexes)
            elif loss_fn is None:
                raise ValueError(
                    "For 'Model', 'metrics' is set but there is neither a 'loss_fn' nor an "
                    "'eval_network' to evaluate with; pass one of them, or drop 'metrics' if "
                    "you do not evaluate"
                )
            else:
                self._eval_network = network
                self._eval_indexes = [0, 1, 2] if eval_indexes is None else list(eval_indexes)
                self._with_eval_cell = True
        elif eval_network is not None:
            self._eval_network = eval_network
            self._eval_indexes = None if eval_indexes is None else list(eval_indexes)

        self._train_network: TrainOneStep | None = None
        if optimizer is not None:
            self._train_network = TrainOneStep(
                network, loss_fn, optimizer, self._amp, loss_scale_manager
            )

    # ------------------------------------------------------------------ properties

    @property
    def train_network(self) -> TrainOneStep | None:
        """The training-step module (None without an optimizer)."""
        return self._train_network

    @property
    def eval_network(self) -> Callable[..., Any] | None:
        """The module evaluation runs (the network itself when built from ``loss_fn``)."""
        return self._eval_network

    @property
    def predict_network(self) -> torch.nn.Module:
        """The network ``predict`` runs."""
        return self._network

    @property
    def loss_fn(self) -> Callable[..., Any] | None:
        """The loss function given to the model (None without one)."""
        return self._loss_fn

    @property
    def metrics(self) -> dict[str, Any]:
        """The resolved metrics, name -> metric."""
        return self._metric_fns

    @property
    def loss_scale_manager(self) -> LossScaleManager | None:
        return self._loss_scale_manager

    # ------------------------------------------------------------------ public API

    def train(
        self,
        epoch: int,
        train_dataset: Any,
        callbacks: Callback | list[Callback] | None = None,
        dataset_sink_mode: bool = False,
        sink_size: int = -1,
        initial_epoch: int = 0,
    ) -> None:
        """Train for epochs ``initial_epoch + 1 .. epoch``, calling ``callbacks``."""
        plan = self._plan_training(
            "Model.train", epoch, train_dataset, dataset_sink_mode, sink_size, initial_epoch
        )
        self._train(plan, check_callbacks(callbacks))

    def fit(
        self,
        epoch: int,
        train_dataset: Any,
        valid_dataset: Any = None,
        valid_frequency: int | list[int] = 1,
        callbacks: Callback | list[Callback] | None = None,
        dataset_sink_mode: bool = False,
        valid_dataset_sink_mode: bool = False,
        sink_size: int = -1,
        initial_epoch: int = 0,
    ) -> None:
        """``train``, evaluating ``valid_dataset`` after every ``valid_frequency`` epochs
        (an int) or after the listed epochs (a list of 1-based epoch numbers)."""
        owner = "Model.fit"
        plan = self._plan_training(
            owner, epoch, train_dataset, dataset_sink_mode, sink_size, initial_epoch
        )
        valid_sink = check_bool(valid_dataset_sink_mode, "valid_dataset_sink_mode", owner)
        callback_list = check_callbacks(callbacks)
        if valid_dataset is not None:
            self._check_can_eval(owner)
            validation = _EvalPlan(
                valid_dataset,
                dataset_size(valid_dataset, "valid_dataset"),
                valid_sink,
                self._valid_schedule(valid_frequency, owner),
            )
            plan = replace(plan, validation=validation)
        self._train(plan, callback_list)

    def eval(
        self,
        valid_dataset: Any,
        callbacks: Callback | list[Callback] | None = None,
        dataset_sink_mode: bool = False,
    ) -> dict[str, Any]:
        """Evaluate the metrics over ``valid_dataset``; returns ``{name: value}``."""
        sink = check_bool(dataset_sink_mode, "dataset_sink_mode", "Model.eval")
        self._check_can_eval("Model.eval")
        plan = _EvalPlan(valid_dataset, dataset_size(valid_dataset, "valid_dataset"), sink)
        callback_list = check_callbacks(callbacks)
        params = RunParams(network=self._network, list_callback=callback_list)
        params.update(self._eval_keys(plan))
        with CallbackList(callback_list) as cbs:
            return self._evaluate(plan, params, cbs, with_eval_results=False)

    def predict(self, *inputs: Any) -> Any:
        """``network(*inputs)`` in evaluation mode, without gradients (and under the
        ``amp_level``'s autocast)."""
        network = self._network
        was_training = network.training
        network.eval()
        try:
            with torch.no_grad():
                if self._amp.cast_network:
                    assert self._amp.dtype is not None
                    inputs = _cast_inputs(inputs, self._amp.dtype)
                if self._amp.enabled:
                    with self._amp.autocast():
                        return network(*inputs)
                return network(*inputs)
        finally:
            network.train(was_training)

    # ------------------------------------------------------------------ internals

    def _check_can_eval(self, owner: str) -> None:
        if not self._metric_fns:
            raise ValueError(
                f"For '{owner}', the Model has no metrics; pass 'metrics' (e.g. {{'acc'}}) "
                "to Model(...) to evaluate"
            )

    def _eval_step_fn(self) -> Callable[[tuple], tuple]:
        amp = self._amp
        low = amp.dtype if amp.cast_network else None
        if self._with_eval_cell:
            network, loss_fn = self._network, self._loss_fn
            assert loss_fn is not None

            def compute(element: tuple) -> tuple:
                inputs = element[:-1] if low is None else _cast_inputs(element[:-1], low)
                outputs = network(*inputs)
                if low is not None:
                    outputs = _to_float32(outputs)
                return loss_fn(outputs, element[-1]), outputs, element[-1]

        else:
            eval_network = self._eval_network
            assert eval_network is not None

            def compute(element: tuple) -> tuple:
                if low is not None:
                    element = _cast_inputs(element, low)
                outputs = eval_network(*element)
                if low is not None:
                    outputs = _to_float32(outputs)
                return (
                    outputs
                    if isinstance(outputs, tuple)
                    else (tuple(outputs) if isinstance(outputs, list) else (outputs,))
                )

        if not amp.enabled:
            return compute

        def compute_autocast(element: tuple) -> tuple:
            with amp.autocast():
                return compute(element)

        return compute_autocast

    def _metric_updaters(self) -> list[Callable[[tuple], None]]:
        indexes = self._eval_indexes
        updaters: list[Callable[[tuple], None]] = []
        for metric in self._metric_fns.values():
            if indexes is None:
                updaters.append(functools.partial(_update_all, metric))
            elif isinstance(metric, Loss):
                updaters.append(functools.partial(_update_picked, metric, (indexes[0],)))
            else:
                picked = (indexes[1], indexes[2])
                updaters.append(functools.partial(_update_picked, metric, picked))
        return updaters

    def _eval_keys(self, plan: _EvalPlan) -> dict[str, Any]:
        """The run parameters an evaluation sets before it starts (``eval`` and ``fit``)."""
        return {
            "mode": "eval",
            "eval_network": self._eval_network,
            "valid_dataset": plan.dataset,
            "batch_num": 1 if plan.sink else plan.size,
            "cur_step_num": 0,
            "dataset_sink_mode": plan.sink,
            "eval_dataset_element": None,
            "net_outputs": None,
        }

    def _evaluate(
        self, plan: _EvalPlan, params: RunParams, cbs: CallbackList, *, with_eval_results: bool
    ) -> dict[str, Any]:
        """One evaluation on ``params`` (callbacks already entered): ``on_eval_begin``,
        ``on_eval_epoch_begin``, the steps (or one sink), ``on_eval_epoch_end``, then
        ``metrics`` (and, for ``fit``, ``eval_results``) are set and ``on_eval_end`` runs.
        A stop request ends the steps early. The networks are in eval mode meanwhile."""
        context = RunContext(params)
        step = self._eval_step_fn()
        updaters = self._metric_updaters()
        convert = self._convert
        size, sink = plan.size, plan.sink
        loss_index = None if self._eval_indexes is None else self._eval_indexes[0]
        loss_total: torch.Tensor | float = 0.0
        loss_count = 0
        for metric in self._metric_fns.values():
            metric.clear()
        modules = [self._network]
        eval_network = self._eval_network
        if isinstance(eval_network, torch.nn.Module) and eval_network is not self._network:
            modules.append(eval_network)
        modes = [module.training for module in modules]
        for module in modules:
            module.eval()
        try:
            cbs.on_eval_begin(context)
            cbs.on_eval_epoch_begin(context)
            with torch.no_grad():
                iterator = iter(plan.dataset)
                step_num = 0
                while True:
                    batch = next(iterator, _END)
                    if batch is _END:
                        break
                    element = convert(batch)
                    step_num += size if sink else 1
                    params["cur_step_num"] = step_num
                    params["eval_dataset_element"] = element
                    cbs.on_eval_step_begin(context)
                    while True:
                        outputs = step(element)
                        for update in updaters:
                            update(outputs)
                        if loss_index is not None:
                            loss_total = loss_total + outputs[loss_index].detach().float().mean()
                            loss_count += 1
                        if not sink:
                            break
                        batch = next(iterator, _END)
                        if batch is _END:
                            break
                        element = convert(batch)
                    params["net_outputs"] = outputs
                    cbs.on_eval_step_end(context)
                    if sink or context.get_stop_requested():
                        break
            cbs.on_eval_epoch_end(context)
            results = {name: metric.eval() for name, metric in self._metric_fns.items()}
            params["metrics"] = results
            if with_eval_results:
                eval_results = copy.deepcopy(results)
                if loss_count:
                    eval_results["eval_loss"] = float(loss_total) / loss_count
                params["eval_results"] = eval_results
            cbs.on_eval_end(context)
        finally:
            for module, mode in zip(modules, modes, strict=True):
                module.train(mode)
        return results

    def _plan_training(
        self,
        owner: str,
        epoch: object,
        dataset: Any,
        sink: object,
        sink_size: object,
        initial_epoch: object,
    ) -> _TrainPlan:
        """Validate the arguments ``train`` and ``fit`` share, for ``owner``."""
        epoch = check_int(epoch, "epoch", owner, 1)
        initial_epoch = check_int(initial_epoch, "initial_epoch", owner, 0)
        if initial_epoch >= epoch:
            raise ValueError(
                f"For '{owner}', the argument 'initial_epoch' must be < 'epoch' ({epoch}), "
                f"but got {initial_epoch}"
            )
        sink = check_bool(sink, "dataset_sink_mode", owner)
        sink_size = _check_sink_size(sink_size, owner)
        if self._train_network is None:
            raise ValueError(
                f"For '{owner}', the Model has no optimizer; pass 'optimizer' to Model(...) "
                "to train"
            )
        size = dataset_size(dataset, "train_dataset")
        sink_steps = size if sink_size == -1 else sink_size
        return _TrainPlan(dataset, size, initial_epoch, epoch, sink, sink_steps)

    def _train_params(self, plan: _TrainPlan, callback_list: list[Callback]) -> RunParams:
        """The run parameters of a training run before its first epoch."""
        parallel_mode, device_number = _parallel_info()
        params = RunParams(
            mode="train",
            network=self._network,
            train_network=self._train_network,
            loss_fn=self._loss_fn,
            optimizer=self._optimizer,
            train_dataset=plan.dataset,
            epoch_num=plan.epoch - plan.initial_epoch,
            batch_num=plan.sinks if plan.sink else plan.size,
            cur_epoch_num=plan.initial_epoch,
            cur_step_num=plan.initial_step,
            initial_step=plan.initial_step,
            train_dataset_element=None,
            net_outputs=None,
            dataset_sink_mode=plan.sink,
            parallel_mode=parallel_mode,
            device_number=device_number,
            list_callback=callback_list,
            last_save_ckpt_step=None,
            latest_ckpt_file=None,
            loss_scale_mananger=self._loss_scale_manager,
        )
        if plan.sink:
            params["sink_size"] = plan.sink_steps
        if plan.validation is not None:
            params["valid_dataset"] = plan.validation.dataset
            params["eval_network"] = self._eval_network
        return params

    def _train(self, plan: _TrainPlan, callback_list: list[Callback]) -> None:
        """A training run (``train``, ``fit``): the epochs, each a step loop (or sinks),
        then, in ``fit`` after a due epoch, the evaluation, then ``on_train_epoch_end``."""
        assert self._train_network is not None and self._optimizer is not None
        params = self._train_params(plan, callback_list)
        context = RunContext(params)
        validation = plan.validation
        eval_cbs = CallbackList(_fit_eval_callbacks(callback_list) if validation else [])
        self._network.train()
        self._optimizer.zero_grad(set_to_none=True)
        step_num = plan.initial_step
        with CallbackList(callback_list) as cbs:
            epochs = _Epochs(plan, params, context, cbs, self._train_network.step, self._convert)
            run_epoch = epochs.run_sinks if plan.sink else epochs.run_steps
            cbs.on_train_begin(context)
            for epoch in range(plan.initial_epoch + 1, plan.epoch + 1):
                params["cur_epoch_num"] = epoch
                if plan.sink:
                    params["dataset_helper"] = SinkInfo(plan.sink_steps, plan.sinks, plan.size)
                cbs.on_train_epoch_begin(context)
                step_num = run_epoch(step_num)
                if validation is not None and validation.due(epoch):
                    self._fit_eval(validation, params, eval_cbs)
                cbs.on_train_epoch_end(context)
                params.pop("metrics", None)
                params.pop("eval_results", None)
                if context.get_stop_requested():
                    break
            cbs.on_train_end(context)

    def _fit_eval(self, plan: _EvalPlan, train_params: RunParams, cbs: CallbackList) -> None:
        """``fit``'s evaluation after an epoch: on its own run parameters (a copy of the
        training's with the evaluation's keys), so training's are untouched; its
        ``metrics`` and ``eval_results`` are handed to training for ``on_train_epoch_end``.
        """
        params = train_params.copy()
        params.update(self._eval_keys(plan))
        self._evaluate(plan, params, cbs, with_eval_results=True)
        train_params["metrics"] = params["metrics"]
        train_params["eval_results"] = params["eval_results"]

    @staticmethod
    def _valid_schedule(valid_frequency: object, owner: str) -> Callable[[int], bool]:
        if isinstance(valid_frequency, int) and not isinstance(valid_frequency, bool):
            if valid_frequency < 1:
                raise ValueError(
                    f"For '{owner}', the argument 'valid_frequency' must be >= 1, "
                    f"but got {valid_frequency}"
                )
            return lambda epoch: epoch % valid_frequency == 0
        if isinstance(valid_frequency, list) and all(
            isinstance(e, int) and not isinstance(e, bool) and e >= 1 for e in valid_frequency
        ):
            chosen = frozenset(valid_frequency)
            return lambda epoch: epoch in chosen
        raise TypeError(
            f"For '{owner}', the argument 'valid_frequency' must be an int >= 1 or a list of "
            f"epoch numbers (ints >= 1), but got {valid_frequency!r}"
        )
