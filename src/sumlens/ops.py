"""Summary operators: record values from inside a model's ``forward``.

``ScalarSummary``, ``ImageSummary``, ``TensorSummary`` and ``HistogramSummary`` are
``nn.Module``s called as ``op(name, value)``, as in MindSpore; the functions
:func:`scalar`, :func:`image`, :func:`tensor` and :func:`histogram` do the same without a
module. A value goes to the innermost active ``SummaryRecord`` (the one entered with
``with`` in this context, else the most recently opened one) and is written at that
record's next ``record(step)`` in train mode; in eval mode, or with no record open, it
is dropped at once (with no record open, the ``sumlens`` logger warns once per process).
While a graph is captured (:func:`sumlens.graph.capturing.capturing`) the model runs on
fake tensors and the operators record nothing. The same name twice before a record keeps
the last value.

The operators return None, detach what they keep (autograd never sees them) and run
eagerly under ``torch.compile`` (a graph break, never a traced copy of stale data).
"""

from __future__ import annotations

from typing import Any

import torch

from sumlens._log import warn_once
from sumlens.graph.capturing import capturing
from sumlens.summary import registry


@torch.compiler.disable
def _emit(plugin: str, name: str, value: Any) -> None:
    if capturing():  # a graph capture runs forward on fake tensors: nothing to record
        return
    record = registry.active_record()
    if record is None:
        warn_once(
            "ops:no-record",
            "summary operator %s(%r) was called with no open SummaryRecord: its value is "
            "dropped, as is every summary operator value while no record is open (said once)",
            plugin,
            name,
        )
        return
    record.add_operator_value(plugin, name, value)


def scalar(name: str, value: Any) -> None:
    """Record a one-element value as scalar ``name`` at the next ``record(step)``."""
    _emit("scalar", name, value)


def image(name: str, value: Any) -> None:
    """Record an NCHW image batch (C = 1 or 3) as image ``name``."""
    _emit("image", name, value)


def tensor(name: str, value: Any) -> None:
    """Record a tensor (at least 1-D) as tensor ``name``."""
    _emit("tensor", name, value)


def histogram(name: str, value: Any) -> None:
    """Record the histogram of a tensor (at least 1-D) as histogram ``name``."""
    _emit("histogram", name, value)


class _SummaryOp(torch.nn.Module):
    """Base of the operator modules: ``op(name, value)`` records and returns None."""

    plugin = ""

    def forward(self, name: str, value: Any) -> None:
        _emit(self.plugin, name, value)


class ScalarSummary(_SummaryOp):
    """``ScalarSummary()(name, value)``: record a one-element value as a scalar."""

    plugin = "scalar"


class ImageSummary(_SummaryOp):
    """``ImageSummary()(name, value)``: record an NCHW image batch."""

    plugin = "image"


class TensorSummary(_SummaryOp):
    """``TensorSummary()(name, value)``: record a tensor."""

    plugin = "tensor"


class HistogramSummary(_SummaryOp):
    """``HistogramSummary()(name, value)``: record a tensor's histogram."""

    plugin = "histogram"


__all__ = [
    "HistogramSummary",
    "ImageSummary",
    "ScalarSummary",
    "TensorSummary",
    "histogram",
    "image",
    "scalar",
    "tensor",
]
