"""One ``LossLandscape`` message as the landscape view draws it, checked.

MindSpore's ``SummaryLandscape`` writes, per interval of epochs (or steps), a *train*
landscape: a grid of losses over a plane fitted (PCA) through the weights of that interval,
with the path training took across it, one point per interval entry. It also writes one
*result* landscape around the final weights (random directions), which has no path: as in
MindInsight, an empty ``loss_path.intervals`` is what tells the two apart. The grid is
``x`` (L values), ``y`` (M values) and ``z`` (M x L losses: row ``i`` lies at ``y[i]``),
as ``sumlens.landscape.LossLandscape`` writes it and plotly draws it.

Files may be crafted, so nothing in a message is trusted: tensors are decoded by
:func:`sumlens.io.decode.ms_tensor_to_array` (shapes checked, memory bounded by the record)
and every mismatch (a grid whose ``z`` does not fit ``x`` and ``y``, a path with fewer
points than intervals) raises :class:`LandscapeError`, a one-line reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sumlens._proto import anf_ir_pb2, summary_pb2
from sumlens.io.decode import PayloadError, ms_tensor_to_array

TRAIN, RESULT = "train", "result"


class LandscapeError(ValueError):
    """A landscape message that cannot be drawn; the message says why, in one line."""


@dataclass(frozen=True)
class LandscapeInfo:
    """What the listing says of one landscape without its grid."""

    kind: str
    intervals: list[int]
    decomposition: str
    unit: str
    step_per_epoch: int | None


def interval_key(intervals: list[int]) -> str:
    """The id of an interval as MindInsight's routes give it (its entries joined by ``-``)."""
    return "-".join(str(entry) for entry in intervals)


def landscape_info(message: summary_pb2.LossLandscape) -> LandscapeInfo:
    """The kind, interval and metadata of ``message`` (cheap: no tensor is decoded)."""
    intervals = [int(entry) for entry in message.loss_path.intervals]
    metadata = message.metadata
    return LandscapeInfo(
        kind=TRAIN if intervals else RESULT,
        intervals=intervals,
        decomposition=metadata.decomposition,
        unit=metadata.unit,
        step_per_epoch=metadata.step_per_epoch or None,
    )


def _array(tensor: anf_ir_pb2.TensorProto, name: str) -> np.ndarray:
    """The values of ``tensor`` as float64 (none when the message leaves it unset)."""
    if not tensor.ListFields():
        return np.zeros(0)
    try:
        values = ms_tensor_to_array(tensor)
    except PayloadError as err:
        raise LandscapeError(f"{name} cannot be read: {err}") from None
    if values.dtype.kind not in "fiub":
        raise LandscapeError(f"{name} holds {values.dtype} values, not numbers")
    return values.astype(np.float64)


def _vector(tensor: anf_ir_pb2.TensorProto, name: str) -> np.ndarray:
    """A tensor that must hold a list of numbers (any shape of that many values)."""
    return _array(tensor, name).reshape(-1)


def _grid(point: summary_pb2.LossLandscape.Point) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = _vector(point.x, "the grid's x")
    y = _vector(point.y, "the grid's y")
    z = _array(point.z, "the grid's z")
    if not x.size or not y.size:
        raise LandscapeError(f"the grid has {x.size} x and {y.size} y values: it is empty")
    if z.shape != (y.size, x.size):
        raise LandscapeError(
            f"the grid's z has shape {list(z.shape)} where x has {x.size} values and y "
            f"{y.size} (z must be [{y.size}, {x.size}])"
        )
    return x, y, z


def _path(message: summary_pb2.LossLandscape, info: LandscapeInfo) -> dict[str, Any] | None:
    if info.kind == RESULT:
        return None
    points = message.loss_path.points
    axes = [_vector(getattr(points, axis), f"the path's {axis}") for axis in "xyz"]
    count = len(info.intervals)
    if any(axis.size != count for axis in axes):
        sizes = ", ".join(f"{name}: {axis.size}" for name, axis in zip("xyz", axes, strict=True))
        raise LandscapeError(
            f"the loss path has {count} intervals but {sizes} points (one each expected)"
        )
    return {
        "intervals": info.intervals,
        "steps": _path_steps(info),
        "x": axes[0],
        "y": axes[1],
        "z": axes[2],
    }


def _path_steps(info: LandscapeInfo) -> list[int] | None:
    """The training step of each path point, when the metadata says it."""
    if info.unit == "step":
        return list(info.intervals)
    if info.unit == "epoch" and info.step_per_epoch:
        return [entry * info.step_per_epoch for entry in info.intervals]
    return None


def _convergence(message: summary_pb2.LossLandscape) -> list[float] | None:
    """(x, y, loss) of the trained weights; None when the message has none."""
    if not message.HasField("convergence_point"):
        return None
    point = message.convergence_point
    axes = [_vector(getattr(point, axis), f"the convergence point's {axis}") for axis in "xyz"]
    if not any(axis.size for axis in axes):
        return None
    if any(axis.size != 1 for axis in axes):
        sizes = [axis.size for axis in axes]
        raise LandscapeError(f"the convergence point has {sizes} x, y, z values (one each)")
    return [float(axis[0]) for axis in axes]


def landscape_json(message: summary_pb2.LossLandscape) -> dict[str, Any]:
    """The grid, path, convergence point and metadata of ``message`` (numpy arrays for the
    grid and path, which :func:`sumlens.board.responses.json_response` writes as lists)."""
    info = landscape_info(message)
    x, y, z = _grid(message.landscape)
    return {
        "kind": info.kind,
        "interval": interval_key(info.intervals) if info.intervals else None,
        "metadata": {
            "decomposition": info.decomposition,
            "unit": info.unit,
            "step_per_epoch": info.step_per_epoch,
        },
        "shape": [y.size, x.size],
        "x": x,
        "y": y,
        "z": z,
        "path": _path(message, info),
        "convergence_point": _convergence(message),
    }
