"""``LossLandscape``: a loss surface over a 2-D plane of parameter space, as MindInsight draws it.

A landscape is a square grid: coordinates ``x`` and ``y`` (length L each) and losses
``z`` (L x L). An *interval* landscape (PCA directions through the weights of several
epochs or steps) also carries the path the training took across the plane (one point
per entry of ``intervals``); the *final* ("result") landscape has no path, which is how
MindInsight tells the two apart. Tags follow MindSpore: ``landscape_[first, last]`` and
``landscape_[last]`` (see :meth:`LossLandscape.default_tag`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from sumlens._proto import anf_ir_pb2, summary_pb2
from sumlens.io.decode import ms_tensor_to_array
from sumlens.summary.tensor import MS_DTYPES, ms_tensor

UNITS = ("step", "epoch")
DECOMPOSITIONS = ("PCA", "Random")

Floats = Sequence[float] | np.ndarray
Point3 = tuple[Floats, Floats, Floats]


def _array(name: str, value: object, ndim: int) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype not in MS_DTYPES or array.dtype == np.bool_:
        raise TypeError(f"{name} must hold numbers, got dtype {array.dtype}")
    if array.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {array.shape}")
    return array


@dataclasses.dataclass
class LossLandscape:
    """A loss landscape value for ``SummaryRecord.add_value("landscape", tag, ...)``.

    ``x``, ``y``: grid coordinates (1-D, length L); ``z``: losses, L x L.
    ``intervals``: the epochs/steps whose weights the plane was fitted through, with
    ``path`` = (xs, ys, zs), one point per interval entry; omit both for a final landscape.
    ``convergence_point``: (x, y, z) of the trained weights.

    It follows SummaryRecord's value protocol (``plugin`` and :meth:`to_proto`).
    """

    plugin: ClassVar[str] = "landscape"
    x: Sequence[float] | np.ndarray
    y: Sequence[float] | np.ndarray
    z: Sequence[Sequence[float]] | np.ndarray
    intervals: Sequence[int] | None = None
    path: Point3 | None = None
    convergence_point: tuple[float, float, float] | None = None
    decomposition: str = "PCA"
    unit: str = "step"
    step_per_epoch: int | None = None

    def __post_init__(self) -> None:
        self.x = _array("x", self.x, 1)
        self.y = _array("y", self.y, 1)
        self.z = _array("z", self.z, 2)
        if self.z.shape != (self.y.size, self.x.size):
            raise ValueError(
                f"z has shape {self.z.shape}; with len(x)={self.x.size} and len(y)={self.y.size} "
                f"it must be {(self.y.size, self.x.size)}"
            )
        if self.unit not in UNITS:
            raise ValueError(f"unit={self.unit!r} is not one of {UNITS}")
        if self.decomposition not in DECOMPOSITIONS:
            raise ValueError(f"decomposition={self.decomposition!r} is not one of {DECOMPOSITIONS}")
        if (self.intervals is None) != (self.path is None):
            raise ValueError("intervals and path go together: give both (interval) or neither")
        if self.path is not None and self.intervals is not None:  # both or neither (above)
            points = [np.asarray(p, dtype=np.float64).reshape(-1) for p in self.path]
            if any(p.size != len(self.intervals) for p in points):
                raise ValueError(
                    f"path needs one point per interval entry ({len(self.intervals)}), "
                    f"got {[p.size for p in points]}"
                )

    @classmethod
    def from_proto(cls, msg: summary_pb2.LossLandscape) -> LossLandscape:
        """The value of a ``LossLandscape`` message, e.g. an ``Event.value`` from a reader."""

        def array(tensor: anf_ir_pb2.TensorProto) -> np.ndarray:
            return ms_tensor_to_array(tensor).astype(np.float64)

        path = intervals = None
        if msg.loss_path.intervals:
            intervals = list(msg.loss_path.intervals)
            points = msg.loss_path.points
            path = (array(points.x), array(points.y), array(points.z))
        convergence = None
        if msg.HasField("convergence_point"):
            point = msg.convergence_point
            x, y, z = (float(array(t)[0]) for t in (point.x, point.y, point.z))
            convergence = (x, y, z)
        return cls(
            x=array(msg.landscape.x),
            y=array(msg.landscape.y),
            z=array(msg.landscape.z),
            intervals=intervals,
            path=path,
            convergence_point=convergence,
            decomposition=msg.metadata.decomposition,
            unit=msg.metadata.unit,
            step_per_epoch=msg.metadata.step_per_epoch or None,
        )

    @property
    def is_final(self) -> bool:
        """True for a final ("result") landscape, which has no training path."""
        return self.intervals is None

    def default_tag(self, last: int) -> str:
        """MindSpore's tag: ``landscape_[first, last]`` (interval) or ``landscape_[last]``."""
        if self.intervals is None:
            return f"landscape_[{last}]"
        return f"landscape_[{self.intervals[0]}, {self.intervals[-1]}]"

    def to_proto(self) -> summary_pb2.LossLandscape:
        """The ``LossLandscape`` message."""
        msg = summary_pb2.LossLandscape()
        # arrays since __post_init__ (asarray: no copy, for the type checker)
        msg.landscape.x.CopyFrom(ms_tensor(np.asarray(self.x)))
        msg.landscape.y.CopyFrom(ms_tensor(np.asarray(self.y)))
        msg.landscape.z.CopyFrom(ms_tensor(np.asarray(self.z)))
        if self.intervals is not None and self.path is not None:
            msg.loss_path.intervals.extend(int(i) for i in self.intervals)
            for axis, values in zip("xyz", self.path, strict=True):
                getattr(msg.loss_path.points, axis).CopyFrom(
                    ms_tensor(np.asarray(values, dtype=np.float64).reshape(-1))
                )
        if self.convergence_point is not None:
            for axis, value in zip("xyz", self.convergence_point, strict=True):
                getattr(msg.convergence_point, axis).CopyFrom(
                    ms_tensor(np.asarray([value], dtype=np.float64))
                )
        msg.metadata.decomposition = self.decomposition
        msg.metadata.unit = self.unit
        if self.step_per_epoch is not None:
            msg.metadata.step_per_epoch = self.step_per_epoch
        return msg
