"""Capturing a model's operator graph: ``torch.export`` (non-strict), else the module hierarchy.

Why ``torch.export`` and not ``torch.fx.symbolic_trace``: export traces with fake tensors
through the real Python code, so it follows dict inputs, keyword arguments and
non-tensor arguments (the cases where TensorBoard's ``add_graph`` fails, pytorch#28206),
records ATen operators with their dtypes and shapes (``node.meta["val"]``) and the module
each ran in (``nn_module_stack``), and lifts parameters and buffers with their dotted
names. ``symbolic_trace`` stops at every ``torch.nn`` module (a Conv2d or an LSTM stays
one opaque call), cannot branch on tensor shapes or ``isinstance`` checks inside library
modules, and knows no shapes without a second pass. Non-strict mode (no TorchDynamo) is
used because it is fast (ResNet-18 in a fraction of a second once torch is warm) and
accepts any Python the forward runs; only data-dependent control flow and unsupported
input types make it fail, and then the module hierarchy is written instead.

Export runs on the calling thread: it temporarily swaps the live module's parameters for
fake tensors, which a training step running at the same time on another thread would
see. While it runs, :func:`capturing` is true on that thread: summary operators inside
``forward`` record nothing (they would record fake values; :mod:`sumlens.ops` asks it),
and the hook that captures a model's first inputs ignores the traced call. Torch's own
warnings and error dumps are kept quiet: one warning of ours names the reason for a
fallback.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import logging
import threading
import time
import warnings
import weakref
from collections.abc import Iterator
from typing import Any

import torch
from torch.utils import _pytree as pytree

from sumlens._log import logger, warn_once
from sumlens._proto import anf_ir_pb2
from sumlens.graph.build import EXPORT_PATH, graph_from_program
from sumlens.graph.fallback import HIERARCHY_PATH, hierarchy_graph

_state = threading.local()
_QUIET_LOGGERS = ("torch.export", "torch._export", "torch.fx.experimental.symbolic_shapes")
MAX_REASON = 200
"""Characters of an export error kept in the warning and the graph's ``reason`` attribute."""


@dataclasses.dataclass(frozen=True)
class GraphCapture:
    """The result of :func:`capture`: the graph, how it was made, why not otherwise, how long."""

    graph: anf_ir_pb2.GraphProto
    path: str
    """``"torch.export"`` (operator graph) or ``"module_hierarchy"`` (the fallback)."""
    reason: str | None
    """Why the operator graph could not be captured (None when it was)."""
    seconds: float


def unwrap(module: torch.nn.Module) -> torch.nn.Module:
    """The user's model inside DDP / DataParallel (``.module``) and ``torch.compile``
    (``._orig_mod``) wrappers, however deeply nested."""
    parallel = (torch.nn.DataParallel, torch.nn.parallel.DistributedDataParallel)
    while True:
        if isinstance(module, parallel):
            module = module.module
        elif isinstance(getattr(module, "_orig_mod", None), torch.nn.Module):
            module = module._orig_mod
        else:
            return module


def capturing() -> bool:
    """True while this thread is capturing a graph (the model runs on fake tensors).

    Whatever runs inside the model's ``forward`` and must not see fake values asks this:
    the summary operators of :mod:`sumlens.ops` record nothing then, and the hook that
    keeps a model's first inputs ignores the traced call.
    """
    return getattr(_state, "active", False)


class FirstCall:
    """A one-shot forward pre-hook: keeps the inputs of a module's next call, then removes
    itself. Tensors are kept as detached references (no copy); :func:`from_module` uses
    them when it is given no example inputs."""

    def __init__(self, module: torch.nn.Module) -> None:
        self.args: tuple[Any, ...] | None = None
        self.kwargs: dict[str, Any] | None = None
        self._module = weakref.ref(module)
        self._handle = module.register_forward_pre_hook(self._hook, with_kwargs=True)

    @property
    def fired(self) -> bool:
        """True once the module has been called (and its inputs kept)."""
        return self.args is not None

    def _hook(self, module: torch.nn.Module, args: tuple, kwargs: dict) -> None:
        if capturing() or self.fired:
            return
        self.args, self.kwargs = pytree.tree_map_only(
            torch.Tensor, lambda t: t.detach(), (tuple(args), dict(kwargs))
        )
        self.remove()
        _first_calls[unwrap(module)] = self

    def remove(self) -> None:
        """Stop watching (idempotent)."""
        self._handle.remove()

    def clear(self) -> None:
        """Forget the kept inputs (frees the batch they reference)."""
        self.args = self.kwargs = None


_first_calls: weakref.WeakKeyDictionary[torch.nn.Module, FirstCall] = weakref.WeakKeyDictionary()


def watch_inputs(module: torch.nn.Module) -> FirstCall:
    """Keep the inputs of ``module``'s next forward call for a later :func:`from_module`."""
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
    return FirstCall(module)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Mark this thread as capturing; silence torch's warnings, logs and error dumps."""
    saved = {name: logging.getLogger(name).level for name in _QUIET_LOGGERS}
    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    before, _state.active = capturing(), True
    try:
        with (
            warnings.catch_warnings(),
            contextlib.redirect_stderr(io.StringIO()),  # export prints partial graphs on errors
        ):
            warnings.simplefilter("ignore")
            yield
    finally:
        _state.active = before
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


def _example(
    module: torch.nn.Module, example_inputs: Any, example_kwargs: dict[str, Any] | None
) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    if example_inputs is None and example_kwargs is None:
        first = _first_calls.get(unwrap(module))
        if first is None or not first.fired:
            return None
        assert first.args is not None and first.kwargs is not None
        return first.args, first.kwargs
    if example_inputs is None:
        args: tuple[Any, ...] = ()
    elif isinstance(example_inputs, tuple):
        args = example_inputs
    else:
        args = (example_inputs,)
    if example_kwargs is not None and not isinstance(example_kwargs, dict):
        raise TypeError(f"example_kwargs must be a dict or None, got {type(example_kwargs)}")
    return args, dict(example_kwargs or {})


def _reason(err: BaseException) -> str:
    """A one-line reason: the kind of problem when it is known, the error's type and text."""
    text = " ".join(str(err).split())
    if len(text) > MAX_REASON:
        text = text[: MAX_REASON - 3] + "..."
    reason = f"{type(err).__name__}: {text}" if text else type(err).__name__
    if "data-dependent" in text or "DataDependent" in type(err).__name__:
        reason = f"data-dependent control flow ({reason})"
    return reason


def capture(
    module: torch.nn.Module,
    example_inputs: Any = None,
    *,
    example_kwargs: dict[str, Any] | None = None,
) -> GraphCapture:
    """Capture the graph of ``module``; see :func:`from_module` for the arguments.

    Never raises for a model that cannot be traced: it returns the module-hierarchy graph
    and logs one warning (once per model class and reason) that names the reason.
    """
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
    start = time.perf_counter()
    model = unwrap(module)
    example = _example(module, example_inputs, example_kwargs)
    if example is None:
        reason = (
            "no example inputs: pass example_inputs, or call the model once after "
            "sumlens.graph.watch_inputs(model) / SummaryRecord(network=model)"
        )
    else:
        args, kwargs = example
        try:
            with _quiet():
                program = torch.export.export(model, args, kwargs, strict=False)
            graph = graph_from_program(program, model)
        except Exception as err:  # anything export cannot follow: fall back, never fail
            reason = _reason(err)
        else:
            seconds = time.perf_counter() - start
            logger.debug("captured the graph of %s in %.2f s", type(model).__name__, seconds)
            return GraphCapture(graph, EXPORT_PATH, None, seconds)
    name = type(model).__name__
    warn_once(
        f"graph:fallback:{type(model).__module__}.{type(model).__qualname__}:{reason}",
        "could not capture the operator graph of %s with torch.export (%s); writing its "
        "module hierarchy instead",
        name,
        reason,
    )
    graph = hierarchy_graph(model, reason)
    return GraphCapture(graph, HIERARCHY_PATH, reason, time.perf_counter() - start)


def from_module(
    module: torch.nn.Module,
    example_inputs: Any = None,
    *,
    example_kwargs: dict[str, Any] | None = None,
) -> anf_ir_pb2.GraphProto:
    """The computational graph of a PyTorch model as MindSpore's ``GraphProto``.

    ``example_inputs`` are the positional arguments of one forward call (a tuple; any
    other value is the single argument), ``example_kwargs`` its keyword arguments. Only
    their types, dtypes and shapes matter: the model runs on fake tensors, nothing is
    computed and nothing in the model changes. With neither given, the inputs of the
    model's first call after :func:`watch_inputs` (or ``SummaryRecord(network=model)``)
    are used. DDP/DataParallel (``module.``) and ``torch.compile`` (``_orig_mod.``)
    wrappers are unwrapped, so names are those of the user's model.

    Operators, their inputs, dtypes and shapes, parameters and buffers with their names
    and shapes, constants, and scopes from the module hierarchy (``Default/conv1-Conv2d``)
    are captured with ``torch.export``. When that fails (data-dependent control flow,
    unsupported inputs, no inputs known), one warning names the reason and the
    module-hierarchy graph is returned instead, marked by its name (``... (module
    hierarchy)``) and a ``capture`` attribute on every node. Use :func:`capture` to
    learn which path was taken.
    """
    return capture(module, example_inputs, example_kwargs=example_kwargs).graph


class PendingGraph:
    """A network whose graph ``SummaryRecord`` writes once: watch its first call, then build.

    ``ready()`` is a cheap check (``SummaryRecord.record`` asks it on every step until the
    graph is written); ``build()`` captures once and lets go of the kept inputs.
    """

    def __init__(self, network: torch.nn.Module) -> None:
        self.network = network
        self.first_call = FirstCall(network)

    def ready(self) -> bool:
        return self.first_call.fired

    def build(self) -> GraphCapture:
        first = self.first_call
        try:
            return capture(self.network, first.args, example_kwargs=first.kwargs)
        finally:
            first.clear()
            _first_calls.pop(unwrap(self.network), None)

    def cancel(self) -> None:
        self.first_call.remove()
        self.first_call.clear()
