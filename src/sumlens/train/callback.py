"""The callback protocol: ``Callback``, ``RunContext``, the run parameters and the callback list.

A training driver (``sumlens.Model``, or a hand-written loop) owns one
:class:`RunParams` per run (MindSpore's ``cb_params``: a dict with attribute access),
wraps it in a :class:`RunContext`, and calls every hook of a :class:`CallbackList` in
list order. Hooks come in two spellings: the old style of the seed docs (``begin``,
``epoch_begin``, ``step_begin``, ``step_end``, ``epoch_end``, ``end``) and the new
``on_train_*``/``on_eval_*`` ones, whose defaults call the old ones, so a callback that
overrides only ``step_end`` runs after training *and* evaluation steps (as in MindSpore).

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
from types import TracebackType
from typing import Any

from sumlens._log import logger

OLD_STYLE_HOOKS = ("begin", "epoch_begin", "step_begin", "step_end", "epoch_end", "end")
NEW_STYLE_HOOKS = tuple(
    f"on_{phase}_{hook}" for phase in ("train", "eval") for hook in OLD_STYLE_HOOKS
)


class Callback:
    """Base of every callback: all hooks are no-ops; ``on_train_X``/``on_eval_X`` call ``X``.

    A callback is also a context manager: the driver enters every callback before a run
    and exits them all afterwards (in reverse order), even when the run fails.
    """

    def __enter__(self) -> Callback:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    # old style (seed docs)
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


class MissingRunParam(KeyError, AttributeError):
    """A run parameter that the driver has not set (both a KeyError and an AttributeError)."""


class RunParams(dict):
    """The run parameters (MindSpore's ``cb_params``): a dict whose keys are also attributes."""

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


class RunContext:
    """What a hook receives: the shared run parameters and the stop flag."""

    def __init__(self, original_args: dict) -> None:
        if not isinstance(original_args, dict):
            raise TypeError(f"original_args must be a dict, got {type(original_args).__name__}")
        self._original_args = original_args
        self._stop_requested = False

    def original_args(self) -> dict:
        """The run parameters (shared, mutable: callbacks may add their own keys)."""
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


_warned_old_style: set[type] = set()


def _note_old_style(callback: Callback) -> None:
    """One DeprecationWarning per user class that overrides an old-style hook."""
    kind = type(callback)
    if kind in _warned_old_style or kind.__module__.startswith("sumlens."):
        return
    if any(name in vars(kind) for name in OLD_STYLE_HOOKS):
        _warned_old_style.add(kind)
        warnings.warn(
            f"{kind.__name__} overrides old-style hooks ({', '.join(OLD_STYLE_HOOKS)}); they run "
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

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            stack.__exit__(exc_type, exc, tb)


def _dispatch(name: str) -> Callable[[CallbackList, RunContext], None]:
    def hook(self: CallbackList, run_context: RunContext) -> None:
        for callback in self.callbacks:
            getattr(callback, name)(run_context)

    hook.__name__ = name
    hook.__doc__ = f"Call ``{name}`` of every callback, in list order."
    return hook


for _name in OLD_STYLE_HOOKS + NEW_STYLE_HOOKS:
    setattr(CallbackList, _name, _dispatch(_name))
