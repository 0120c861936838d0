"""The intake: every check a value passes on the caller's thread, and its conversion into an
:class:`~sumlens.summary.items.Item`.

One place for what ``SummaryRecord`` refuses and for the words it refuses it with: the
plugin, the name, the step and wall time, a value's dtype, shape and size (from its shape,
before anything is copied), a summary operator's name, a prepared TensorBoard event. Every
way in (``add_value``, ``record_value``, the scalar lane, the summary operators,
``record_tensorboard_event``) asks here, so one value is refused alike by each. What passes
is snapshotted: later in-place changes of the caller's value do not alter what is written.

:func:`plain_scalar` is the scalar fast lane's test (a number, or a one-element CPU tensor,
under a plain ASCII name): such a value needs no other check.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from sumlens._checks import check_choice, check_int, check_number, check_str
from sumlens.summary.convert import (
    copy_to_host_async,
    host_view,
    is_cuda_tensor,
    snapshot,
    torch_numpy_dtype,
)
from sumlens.summary.device_histogram import SMALL_TENSOR, DeviceHistogram, device_statistics
from sumlens.summary.histogram import compiled_histogram
from sumlens.summary.image import nchw_shape
from sumlens.summary.items import TENSORBOARD_EVENT, Item, StepBatch
from sumlens.summary.kernels import histogram_ready
from sumlens.summary.messages import MESSAGE_PLUGINS, message_of
from sumlens.summary.tensor import check_tensor_dtype, check_tensor_shape
from sumlens.summary.values import check_name, check_real_dtype, value_dtype

TENSOR_PLUGINS = ("scalar", "image", "tensor", "histogram")
SIZED_PLUGINS = ("image", "tensor")
"""Plugins whose encoded size grows with the value (checked against the step's limit)."""
PLUGINS = TENSOR_PLUGINS + tuple(MESSAGE_PLUGINS)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
MAX_STEP_BYTES = 2**31 - 1
"""Protobuf cannot serialize a message larger than this; one step's event must stay below."""
_PLAIN_NUMBERS = frozenset({float, int, np.float64, np.float32, np.float16, np.int64, np.int32})
"""Scalar values taken as they are (no snapshot needed: they are immutable)."""


def plain_scalar(plugin: str, name: Any, value: Any) -> float | None:
    """``value`` as a float when the scalar lane may take it unchecked: ``plugin`` is
    ``"scalar"``, ``name`` a non-empty ASCII str, and ``value`` a number or a one-element CPU
    tensor (read now, cheaply and safely). None: give it to :meth:`Intake.item`."""
    if plugin != "scalar" or type(name) is not str or not name or not name.isascii():
        return None
    kind = type(value)
    if kind is float:
        return value
    if kind in _PLAIN_NUMBERS:
        return float(value)
    torch = sys.modules.get("torch")
    if torch is not None and kind is torch.Tensor and value.is_cpu and value.numel() == 1:
        try:
            return float(value.item())
        except TypeError:  # a complex number: refused by the intake's checks
            return None
    return None


def checked_plugin(plugin: Any, owner: str) -> str:
    """``plugin`` as its canonical (lower-case) name, one of :data:`PLUGINS`."""
    return check_choice(plugin, "plugin", owner, PLUGINS, ignore_case=True)


def checked_step(step: Any, owner: str) -> int:
    """``step`` as an int of the format's range (int64)."""
    if type(step) is int and INT64_MIN <= step <= INT64_MAX:
        return step
    return check_int(step, "step", owner, INT64_MIN, maximum=INT64_MAX)


def checked_wall(wall_time: Any, owner: str) -> float:
    """``wall_time`` in seconds since the epoch (None: now)."""
    if wall_time is None:
        return time.time()
    return check_number(wall_time, "wall_time", owner, 0.0)


class Intake:
    """Checks and converts values into items for one record (its file format and exports)."""

    def __init__(self, file_format: str, export_options: dict[str, Any]) -> None:
        self.file_format = file_format
        self._export = export_options.get("tensor_format") == "npy"

    def item(
        self,
        plugin: str,
        name: Any,
        value: Any,
        dataformats: str = "NCHW",
        step: Mapping[tuple[str, str], Item] | None = None,
    ) -> Item:
        """A checked item of ``plugin`` (a name :func:`checked_plugin` returned).

        ``step``: the items already kept for the pending step, which share its size limit
        in MindSpore's format (None: the value is an event of its own, with the whole limit).
        ``dataformats`` is an image's layout (NCHW, NHWC, CHW, HWC or HW).
        """
        if plugin in TENSOR_PLUGINS:
            check_str(name, "name", "SummaryRecord.add_value", non_empty=True)
            check_name(name, plugin)
            # Only images and tensors grow with their value; the rest have a fixed size.
            budget = None
            if plugin in SIZED_PLUGINS and step is not None:
                budget = self._budget(step, (plugin, name))
            return _tensor_item(plugin, name, value, dataformats, self._export, budget)
        tag = str(name)
        check_name(tag, plugin)
        return Item(plugin, tag, message_of(plugin, value))

    def operator_item(self, plugin: str, name: Any, value: Any) -> Item:
        """A summary operator's checked item (``plugin``: scalar, image, tensor or histogram)."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"summary operator name must be a non-empty str, got {name!r}")
        check_name(name, plugin)
        return _tensor_item(plugin, name, value, "NCHW", self._export)

    @staticmethod
    def event_item(event: Any, nbytes: int | None, held: int) -> Item:
        """A prepared TensorBoard ``Event`` (or a function returning one, called on the
        writer thread: ``nbytes`` then estimates its size) as an item."""
        owner = "SummaryRecord.record_tensorboard_event"
        deferred = callable(event)
        if not deferred and not (hasattr(event, "SerializeToString") and hasattr(event, "step")):
            raise TypeError(
                f"{owner}: event must be a TensorBoard Event message or a function returning "
                f"one, got {event!r:.100}"
            )
        size = check_int(nbytes, "nbytes", owner, 0, allow_none=True)
        if size is None:
            size = 4096 if deferred else event.ByteSize()
        return Item(TENSORBOARD_EVENT, "event", event, nbytes=size + 32, held=held)

    def check_step_bytes(self, batch: StepBatch) -> None:
        """Raise ``ValueError`` when an event of ``batch`` would pass protobuf's limit."""
        per_event = batch.items if self.file_format == "tensorboard" else [batch]
        for part in per_event:
            if part.nbytes > MAX_STEP_BYTES:
                raise ValueError(
                    f"step {batch.step}: about {part.nbytes} bytes of values in one event, over "
                    f"the {MAX_STEP_BYTES}-byte limit of a protobuf message; record fewer or "
                    "smaller values per step"
                )

    def _budget(self, step: Mapping[tuple[str, str], Item], slot: tuple[str, str]) -> int:
        """Estimated bytes a new value for ``slot`` may take so that its step stays writable.

        In MindSpore's format the values already added for the step (but not the one this
        value replaces) share the limit; in TensorBoard's each value is an event of its own.
        """
        if self.file_format == "tensorboard":
            return MAX_STEP_BYTES
        others = sum(item.nbytes for key, item in step.items() if key != slot)
        return MAX_STEP_BYTES - StepBatch(0, 0.0).nbytes - others


def _tensor_item(
    plugin: str,
    name: str,
    value: Any,
    dataformats: str,
    export: bool,
    budget: int | None = None,
) -> Item:
    """Validate and snapshot an array-like value for ``plugin``.

    ``budget`` (default: the whole :data:`MAX_STEP_BYTES`) bounds the estimated encoded
    size; it is checked from the shape alone, before anything is copied, as is the dtype.
    """
    if plugin != "tensor":  # tensors take more dtypes; checked below, on the snapshot
        check_real_dtype(value_dtype(value), plugin, name)
    shape = _shape_of(value, name)
    size = math.prod(shape)
    budget = MAX_STEP_BYTES if budget is None else budget
    if plugin == "scalar":
        if size != 1:
            raise ValueError(f"scalar {name!r} must hold exactly one value, got shape {shape}")
        if isinstance(value, int | float) and not isinstance(value, bool):
            return Item(plugin, name, float(value))
        if not is_cuda_tensor(value) and hasattr(value, "item"):
            return Item(plugin, name, float(value.item()))
        return Item(plugin, name, snapshot(value, name))
    if plugin == "image":
        n, channels, height, width = nchw_shape(shape, dataformats, name)
        nbytes = _check_budget(plugin, name, n * channels * height * width + 1024, budget)
        pixels = snapshot(value, name)
        return Item(plugin, name, (pixels, dataformats.upper()), nbytes=nbytes, held=pixels.nbytes)
    if not shape:
        raise ValueError(f"{plugin} {name!r} must have at least one dimension, got a 0-d value")
    if plugin == "histogram":
        if is_cuda_tensor(value) and size > SMALL_TENSOR:
            packed = copy_to_host_async(device_statistics(value))
            return Item(plugin, name, DeviceHistogram(packed, torch_numpy_dtype(value), size))
        host = host_view(value)
        if host is not None and histogram_ready(host.dtype):  # cheaper than a copy to bin
            return Item(plugin, name, compiled_histogram(host), nbytes=4096)
        array = snapshot(value, name)
        return Item(plugin, name, array, nbytes=4096, held=array.nbytes)
    check_tensor_shape(shape, name)
    nbytes = _check_budget(plugin, name, 4 * size + 64, budget)
    array = snapshot(value, name)
    check_tensor_dtype(array.dtype, name)
    return Item(plugin, name, array, nbytes=nbytes, export=export, held=array.nbytes)


def _check_budget(plugin: str, name: str, nbytes: int, budget: int) -> int:
    """Return ``nbytes``; raise ``ValueError`` if it exceeds what the step has left."""
    if nbytes > budget:
        raise ValueError(
            f"{plugin} {name!r} would take about {nbytes} bytes, which puts its step over the "
            f"{MAX_STEP_BYTES}-byte limit of a protobuf message; record fewer or smaller "
            "values per step"
        )
    return nbytes


def _shape_of(value: Any, name: str) -> tuple[int, ...]:
    if isinstance(value, bool | int | float):
        return ()
    shape = getattr(value, "shape", None)
    if shape is None:
        snapshot(value, name)  # raises the TypeError that names what is accepted
        shape = np.shape(value)
    return tuple(int(s) for s in shape)
