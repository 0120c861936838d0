"""The callback protocol: ``Callback``, ``RunContext``, the run parameters and the callback list.

A training driver (``sumlens.Model``, or a hand-written loop) owns one
:class:`RunParams` per run (MindSpore's ``cb_params``: a dict with attribute access,
whose keys are documented there), wraps it in a :class:`RunContext`, and calls every
hook of a :class:`CallbackList` in list order. Hooks come in two spellings: the new
``on_train_*``/``on_eval_*`` ones, which say the phase, and the old style of older
MindSpore docs (``begin``, ``epoch_begin``, ``step_begin``, ``step_end``, ``epoch_end``,
``end``), which the new ones call by default, so a callback that overrides only
``step_end`` runs after training *and* evaluation steps (as in MindSpore). The built-in
callbacks use the new hooks only; a class that overrides an old-style hook gets one
DeprecationWarning.

What a callback declares about itself, the driver reads from its class (so a user's
subclass of a built-in behaves as the built-in): :attr:`Callback.runs_in_fit_eval`.

Driving callbacks from your own loop (the parameters a driver sets; SummaryCollector reads
``list_callback``, ``train_dataset`` and ``loss_fn`` too)::

    params = RunParams(mode="train", network=net, train_network=net, optimizer=opt,
                       loss_fn=loss_fn, epoch_num=epochs, batch_num=len(loader),
                       cur_epoch_num=0, cur_step_num=0, dataset_sink_mode=False,
                       train_dataset=loader, train_dataset_element=None, net_outputs=None)
    context = RunContext(params)
    with CallbackList(callbacks) as cbs:
        params.list_callback = cbs.callbacks
        cbs.on_train_begin(context)
        for epoch in range(epochs):
            params.cur_epoch_num = epoch + 1
            cbs.on_train_epoch_begin(context)
            for x, y in loader:
                params.cur_step_num += 1
                params.train_dataset_element = (x, y)
                cbs.on_train_step_begin(context)
                loss = loss_fn(net(x), y)
                loss.backward(); opt.step(); opt.zero_grad()
                params.net_outputs = loss.detach()
                cbs.on_train_step_end(context)
                if context.get_stop_requested():
                    break
            cbs.on_train_epoch_end(context)
            if context.get_stop_requested():
                break
        cbs.on_train_end(context)
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

from sumlens._log import logger

if TYPE_CHECKING:  # annotations of RunParams only: this module does not need torch
    import torch

    from sumlens.train.loss_scale import LossScaleManager

OLD_STYLE_HOOKS = ("begin", "epoch_begin", "step_begin", "step_end", "epoch_end", "end")
NEW_STYLE_HOOKS = tuple(
    f"on_{phase}_{hook}" for phase in ("train", "eval") for hook in OLD_STYLE_HOOKS
)


class Callback:
    """Base of every callback: all hooks are no-ops; ``on_train_X``/``on_eval_X`` call ``X``.

    A callback is also a context manager: the driver enters every callback before a run
    and exits them all afterwards (in reverse order), even when the run fails.
    """

    runs_in_fit_eval: bool = True
    """Whether the evaluation inside ``Model.fit`` calls this callback's ``on_eval_*``
    hooks. True for user callbacks; the built-ins that follow training (LossMonitor,
    ModelCheckpoint, SummaryCollector, History, ...) declare False, as MindSpore leaves
    them out of that evaluation, and TimeMonitor keeps True (it times it). A subclass
    inherits the value; set it on a class or an instance to change it."""

    def __enter__(self) -> Callback:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    # old style (older MindSpore docs)
    def begin(self, run_context: RunContext) -> None:
        """Called once before the run's first epoch."""

    def epoch_begin(self, run_context: RunContext) -> None:
        """Called before each epoch."""

    def step_begin(self, run_context: RunContext) -> None:
        """Called before each step (each sink, in sink mode)."""

    def step_end(self, run_context: RunContext) -> None:
        """Called after each step (each sink, in sink mode)."""

    def epoch_end(self, run_context: RunContext) -> None:
        """Called after each epoch."""

    def end(self, run_context: RunContext) -> None:
        """Called once after the run."""

    # new style: default to the old-style hook of the same name
    def on_train_begin(self, run_context: RunContext) -> None:
        self.begin(run_context)

    def on_train_epoch_begin(self, run_context: RunContext) -> None:
        self.epoch_begin(run_context)

    def on_train_step_begin(self, run_context: RunContext) -> None:
        self.step_begin(run_context)

    def on_train_step_end(self, run_context: RunContext) -> None:
        self.step_end(run_context)

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        self.epoch_end(run_context)

    def on_train_end(self, run_context: RunContext) -> None:
        self.end(run_context)

    def on_eval_begin(self, run_context: RunContext) -> None:
        self.begin(run_context)

    def on_eval_epoch_begin(self, run_context: RunContext) -> None:
        self.epoch_begin(run_context)

    def on_eval_step_begin(self, run_context: RunContext) -> None:
        self.step_begin(run_context)

    def on_eval_step_end(self, run_context: RunContext) -> None:
        self.step_end(run_context)

    def on_eval_epoch_end(self, run_context: RunContext) -> None:
        self.epoch_end(run_context)

    def on_eval_end(self, run_context: RunContext) -> None:
        self.end(run_context)


@dataclass(frozen=True)
class SinkInfo:
    """``cb_params.dataset_helper`` in sink mode: how the epoch is cut into sinks."""

    sink_steps: int  # steps per sink (the last sink of an epoch may be shorter)
    sinks_per_epoch: int
    steps_per_epoch: int

    def sink_size(self) -> int:
        """Steps per sink (MindSpore's ``DatasetHelper.sink_size()``)."""
        return self.sink_steps


class MissingRunParam(KeyError, AttributeError):
    """A run parameter that the driver has not set (both a KeyError and an AttributeError)."""


class RunParams(dict):
    """The run parameters (MindSpore's ``cb_params``): a dict whose keys are also attributes.

    ``params.cur_step_num`` and ``params["cur_step_num"]`` are the same value, and so are
    setting either; ``"metrics" in params``, ``params.get(name, default)`` and
    ``params.pop(name, None)`` work as on any dict. Reading a key that is not set raises
    :class:`MissingRunParam`, both a KeyError (MindSpore raises one) and an AttributeError
    (so ``getattr(params, name, None)`` and ``hasattr`` work). Callbacks may add keys of
    their own: within one phase the driver and every callback share this object.

    A key that does not apply to a phase is *absent*, not None. The keys, as
    :class:`sumlens.train.Model` sets them (names as MindSpore's, its misspelled
    ``loss_scale_mananger`` included); *T*: ``train``/``fit``, *E*: ``eval``, *F*: the
    evaluation inside ``fit``, which gets its own ``RunParams``: a copy of the training's
    (so it also holds every *T* key) with the *E* keys set, and training's object is not
    touched by it except for ``metrics``/``eval_results``, handed over afterwards.

    Set once per run:

    * ``mode`` (T E F): ``"train"`` or ``"eval"``.
    * ``network`` (T E F): the user's bare ``nn.Module``.
    * ``train_network`` (T): the module that runs one training step (network, loss and
      optimizer: :class:`sumlens.train.model.TrainOneStep`; in a hand-written loop, the
      network).
    * ``eval_network`` (E F; T in ``fit``): the module evaluation runs.
    * ``loss_fn`` (T): the loss callable, or None when the network returns the loss.
    * ``optimizer`` (T): the ``torch.optim.Optimizer``.
    * ``loss_scale_mananger`` (T): the loss-scale manager, or None.
    * ``train_dataset`` (T) / ``valid_dataset`` (E F; T in ``fit``): the data sources.
    * ``epoch_num`` (T): epochs this call runs (``epoch - initial_epoch``).
    * ``batch_num`` (T E F): steps per epoch (``len(dataset)``); in sink mode the number
      of sinks per epoch (``ceil(len(dataset) / sink_size)``; 1 for a whole-epoch sink).
    * ``initial_step`` (T): ``initial_epoch * len(dataset)``, where ``cur_step_num`` starts.
    * ``dataset_sink_mode`` (T E F): whether several steps run per step hook.
    * ``sink_size`` (T, sink mode): steps per sink (``len(dataset)`` for ``-1``).
    * ``parallel_mode`` (T): ``"stand_alone"``, or ``"data_parallel"`` under an
      initialised ``torch.distributed`` process group; ``device_number`` (T): world size.
    * ``list_callback`` (T E F): the callbacks of the call, in the order given.
    * ``last_save_ckpt_step``, ``latest_ckpt_file`` (T): None (MindSpore's driver sets
      them and never updates them; ``ModelCheckpoint.latest_ckpt_file_name`` is the file).

    Updated while it runs:

    * ``cur_epoch_num`` (T): the 1-based epoch, ``initial_epoch + 1`` onwards, set before
      ``epoch_begin``; ``initial_epoch`` before the first one. Absent in ``eval``.
    * ``cur_step_num`` (T E F): the 1-based global step, set before ``step_begin``;
      training continues from ``initial_step``, an evaluation counts from 0. In sink mode
      it advances by the sink's number of steps.
    * ``train_dataset_element`` (T) / ``eval_dataset_element`` (E F): the current batch
      as the network gets it (a tuple; the first batch of a sink); None before the first.
    * ``net_outputs`` (T E F): what the step returned, detached (training: the loss, or
      the network's outputs when it computes the loss; evaluation: ``(loss, outputs,
      label)`` with a ``loss_fn``), set before ``step_end``; None before the first step.
    * ``dataset_helper`` (T, sink mode): a :class:`SinkInfo`, per epoch.
    * ``metrics`` (E F from ``on_eval_end``; T in ``fit`` during ``on_train_epoch_end`` of
      an evaluated epoch): ``{metric name: value}``.
    * ``eval_results`` (F from ``on_eval_end``; T like ``metrics``): a copy of ``metrics``
      plus ``eval_loss``, the mean evaluation loss (when the loss position is known).
    """

    mode: str
    network: torch.nn.Module
    train_network: torch.nn.Module
    eval_network: Callable[..., Any] | None
    loss_fn: Callable[..., Any] | None
    optimizer: torch.optim.Optimizer | None
    loss_scale_mananger: LossScaleManager | None
    train_dataset: Any
    valid_dataset: Any
    epoch_num: int
    batch_num: int
    initial_step: int
    dataset_sink_mode: bool
    sink_size: int
    parallel_mode: str
    device_number: int
    list_callback: list[Callback]
    last_save_ckpt_step: int | None
    latest_ckpt_file: str | None
    cur_epoch_num: int
    cur_step_num: int
    train_dataset_element: tuple[Any, ...] | None
    eval_dataset_element: tuple[Any, ...] | None
    net_outputs: Any
    dataset_helper: SinkInfo
    metrics: dict[str, Any]
    eval_results: dict[str, Any]

    # The annotations above declare the keys for readers and type checkers; they create no
    # class attributes, so reading one of them always reaches __getattr__, i.e. the dict.
    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise MissingRunParam(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def __delattr__(self, name: str) -> None:
        try:
            del self[name]
        except KeyError:
            raise MissingRunParam(name) from None

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *(k for k in self if isinstance(k, str))})

    def copy(self) -> RunParams:
        """A shallow copy that is a :class:`RunParams` too (``dict.copy`` gives a dict)."""
        return RunParams(self)


class RunContext:
    """What a hook receives: the run parameters and the stop flag.

    ``original_args`` is any dict (MindSpore's rule); every sumlens driver gives a
    :class:`RunParams`, whose attribute access the built-in callbacks rely on.
    """

    def __init__(self, original_args: dict[str, Any]) -> None:
        if not isinstance(original_args, dict):
            raise TypeError(f"original_args must be a dict, got {type(original_args).__name__}")
        self._original_args = cast(RunParams, original_args)
        self._stop_requested = False

    def original_args(self) -> RunParams:
        """The run parameters given at construction, the same object (mutable: callbacks
        may add their own keys)."""
        return self._original_args

    def request_stop(self) -> None:
        """Ask the driver to stop after the current step (sink) and this epoch's end hooks."""
        self._stop_requested = True

    def get_stop_requested(self) -> bool:
        """Whether a stop has been requested."""
        return self._stop_requested


def check_callbacks(callbacks: object) -> list[Callback]:
    """``None``, one Callback or a list of them, as a list; anything else is a TypeError."""
    if callbacks is None:
        return []
    if isinstance(callbacks, Callback):
        return [callbacks]
    if not isinstance(callbacks, list | tuple):
        raise TypeError(
            f"callbacks must be a Callback or a list of Callback, got {type(callbacks).__name__}"
        )
    for index, callback in enumerate(callbacks):
        if not isinstance(callback, Callback):
            raise TypeError(f"callbacks[{index}] is a {type(callback).__name__}, not a Callback")
    return list(callbacks)


_noted_classes: set[type] = set()


def _note_old_style(callback: Callback) -> None:
    """One DeprecationWarning per class that overrides an old-style hook (itself or through
    a base class other than :class:`Callback`). A nested CallbackList is a dispatcher, not
    a callback with hooks of its own: its members were noted when it was built."""
    kind = type(callback)
    if kind in _noted_classes or isinstance(callback, CallbackList):
        return
    _noted_classes.add(kind)
    overridden = [
        name for name in OLD_STYLE_HOOKS if getattr(kind, name) is not vars(Callback)[name]
    ]
    if overridden:
        warnings.warn(
            f"{kind.__name__} overrides old-style hooks ({', '.join(overridden)}); they run "
            "for training and evaluation alike. The on_train_*/on_eval_* hooks say which.",
            DeprecationWarning,
            stacklevel=3,
        )


class CallbackList(Callback):
    """Several callbacks called as one, in list order; entering it enters each of them."""

    def __init__(self, callbacks: Iterable[Callback] | Callback | None = None) -> None:
        self.callbacks = check_callbacks(
            list(callbacks) if isinstance(callbacks, Iterable) else callbacks
        )
        for callback in self.callbacks:
            _note_old_style(callback)
        self._stack: contextlib.ExitStack | None = None

    def __enter__(self) -> CallbackList:
        stack = contextlib.ExitStack()
        try:
            for callback in self.callbacks:
                entered = stack.enter_context(callback)
                if not isinstance(entered, Callback):
                    logger.warning(
                        "%s.__enter__ should return self or a Callback; using the original",
                        type(callback).__name__,
                    )
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        return self

    def __exit__(self, *exc_info: Any) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            stack.__exit__(*exc_info)


def _dispatch(name: str) -> Callable[[CallbackList, RunContext], None]:
    def hook(self: CallbackList, run_context: RunContext) -> None:
        for callback in self.callbacks:
            getattr(callback, name)(run_context)

    hook.__name__ = name
    hook.__doc__ = f"Call ``{name}`` of every callback, in list order."
    return hook


for _name in OLD_STYLE_HOOKS + NEW_STYLE_HOOKS:
    setattr(CallbackList, _name, _dispatch(_name))
