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
import os
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch.utils import _pytree as pytree

from sumlens._log import logger, warn_once
from sumlens._proto import anf_ir_pb2
from sumlens.graph.build import EXPORT_PATH, graph_from_program
from sumlens.graph.fallback import HIERARCHY_PATH, hierarchy_graph

_state = threading.local()
_QUIET_LOGGERS = (
    "torch.export",
    "torch._export",
    "torch.fx.experimental.symbolic_shapes",
    "torch._subclasses.fake_tensor",  # "failed while attempting to run meta" on a wrong shape
)
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
    outputs: pytree.TreeSpec | None = None
    """How the model's outputs are nested (tuples, lists, dicts of tensors), from the
    export; None for the module hierarchy."""


def unwrap(module: torch.nn.Module) -> torch.nn.Module:
    """The user's model inside DDP / DataParallel (``.module``) and ``torch.compile``
    (``._orig_mod``) wrappers, however deeply nested."""
    parallel = (torch.nn.DataParallel, torch.nn.parallel.DistributedDataParallel)
    while True:
        compiled = getattr(module, "_orig_mod", None)
        if isinstance(module, parallel):
            module = module.module
        elif isinstance(compiled, torch.nn.Module):
            module = compiled
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


class _OutermostHooks:
    """The global module hooks behind :class:`OutermostCalls`, one set per process: one
    before and one after every module call, and one that sees ``torch.compile`` wrap a
    module (its submodule ``_orig_mod`` is registered) before that module is ever called."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.held = 0
        self.compiled = False
        """Set when a compiled module is met: no hooks until every holder has let go."""
        self.handles: tuple[Any, ...] = ()
        self.depth = threading.local()
        self.inputs: weakref.WeakKeyDictionary[torch.nn.Module, tuple[tuple, dict]] = (
            weakref.WeakKeyDictionary()
        )

    def hold(self) -> None:
        with self.lock:
            self.held += 1
            if self.held == 1 and not self.compiled:
                modules = torch.nn.modules.module
                self.handles = (
                    modules.register_module_forward_pre_hook(self.enter),
                    modules.register_module_forward_hook(
                        self.leave, with_kwargs=True, always_call=True
                    ),
                    modules.register_module_module_registration_hook(self.registered),
                )

    def release(self) -> None:
        with self.lock:
            self.held -= 1
            if self.held == 0:
                self._remove()
                self.inputs.clear()
                self.compiled = False

    def _remove(self) -> None:
        # torch's handle of a global forward hook registered with_kwargs leaves that mark
        # behind when removed, after which TorchDynamo warns of global hooks for good.
        marks = getattr(torch.nn.modules.module, "_global_forward_hooks_with_kwargs", {})
        for handle in self.handles:
            handle.remove()
            marks.pop(handle.id, None)
        self.handles = ()

    def after_fork(self) -> None:
        """In a forked child (which records nothing): no hooks, no holders, a fresh lock
        (another thread may have held the old one at the fork)."""
        self.lock = threading.Lock()
        self.held = 0
        self.compiled = False
        self._remove()
        self.inputs.clear()

    def _stand_down(self) -> None:
        """A compiled module is about: no hooks until every holder has let go."""
        with self.lock:
            self.compiled = True
            self._remove()

    def registered(self, module: torch.nn.Module, name: str, submodule: Any) -> None:
        if name == "_orig_mod":  # torch.compile(module) made a wrapper: before its first call
            self._stand_down()

    def enter(self, module: torch.nn.Module, args: tuple) -> None:
        if _compiled(module):  # before TorchDynamo traces anything with the hooks present
            self._stand_down()
            return
        if capturing() or torch.compiler.is_compiling():  # traced calls are not the run's
            return
        self.depth.count = getattr(self.depth, "count", 0) + 1

    def leave(self, module: torch.nn.Module, args: tuple, *rest: Any) -> None:
        """After a call: ``rest`` is (kwargs, output); a call that raised passes only
        (result,) (torch gives global hooks no kwargs then), and its inputs are not kept."""
        if capturing() or torch.compiler.is_compiling():
            return
        self.depth.count = max(0, getattr(self.depth, "count", 1) - 1)
        if self.depth.count or len(rest) != 2:
            return
        kwargs = rest[0]
        model = unwrap(module)
        if model not in self.inputs:
            self.inputs[model] = pytree.tree_map_only(
                torch.Tensor, lambda t: t.detach(), (tuple(args), dict(kwargs))
            )


_OUTERMOST = _OutermostHooks()
os.register_at_fork(after_in_child=_OUTERMOST.after_fork)


def _compiled(module: torch.nn.Module) -> bool:
    """Whether ``module`` runs through TorchDynamo (``torch.compile(module)``,
    ``module.compile()``): global hooks present while it compiles make it compile again
    once they are gone."""
    return getattr(module, "_compiled_call_impl", None) is not None or hasattr(module, "_orig_mod")


class OutermostCalls:
    """While held: the inputs of each model's first outermost forward call, kept for a
    graph asked for only after that call (``record(step, train_network=model)`` after
    the step's forward, as MindSpore's one-shot usage has it).

    Every module call passes through two global hooks while any is held (a depth count
    per thread tells the outermost call, whose inputs are kept as detached references,
    as :class:`FirstCall` keeps them); the last :meth:`release` removes the hooks and
    lets the inputs go. Meant to be held briefly (``SummaryRecord`` holds one until its
    first ``record``): a module call costs a little more meanwhile. Calls traced by a
    graph capture or ``torch.export`` are not the run's and are ignored; at the first
    call of a compiled module (``torch.compile``) the hooks go until every holder has let
    go, before TorchDynamo compiles with them (which would make it compile again once
    they were gone), and such a model's graph comes from its next call.
    """

    def __init__(self) -> None:
        _OUTERMOST.hold()
        # Let go when garbage-collected too: a record dropped without close() would
        # otherwise keep the hooks for the life of the process.
        self._hold = weakref.finalize(self, _OUTERMOST.release)

    def inputs_of(self, module: torch.nn.Module) -> tuple[tuple, dict] | None:
        """(args, kwargs) of ``module``'s first outermost call while held, or None."""
        return _OUTERMOST.inputs.get(unwrap(module)) if self._hold.alive else None

    def release(self) -> None:
        """Stop holding (idempotent); the last holder removes the hooks and the inputs."""
        self._hold()

    def abandon(self) -> None:
        """Stop holding without a word to the hooks: in a forked child, which has none."""
        self._hold.detach()


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
    before_fallback: Callable[[str], None] | None = None,
) -> GraphCapture:
    """Capture the graph of ``module``; see :func:`from_module` for the arguments.

    Never raises for a model that cannot be traced: it returns the module-hierarchy graph
    and logs one warning (once per model class and reason) that names the reason. A caller
    that must refuse some of those models (``SummaryWriter.add_graph`` refuses what torch's
    writer refuses) passes ``before_fallback``: it is called with the reason before the
    hierarchy is made, and what it raises reaches the caller instead.
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
            return GraphCapture(graph, EXPORT_PATH, None, seconds, program.call_spec.out_spec)
    if before_fallback is not None:
        before_fallback(reason)
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
    graph is written); ``build()`` captures once and lets go of the kept inputs. With
    ``inputs`` (args, kwargs of a call that already happened, see :class:`OutermostCalls`)
    it is ready at once.
    """

    def __init__(self, network: torch.nn.Module, inputs: tuple[tuple, dict] | None = None) -> None:
        self.network = network
        self.first_call = FirstCall(network)
        if inputs is not None:
            self.first_call.remove()
            self.first_call.args, self.first_call.kwargs = inputs

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
