"""One series of the scalars route: placed on its x-axis, smoothed, downsampled, enveloped.

Smoothing runs on the whole series in step order (points the x-axis leaves out included),
before anything is cut or picked (see :mod:`sumlens.board.query.curves`); the downsample and
the envelope then work on the points in range, in step order, whatever the x-axis.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sumlens.board.data.surface import ReadSurface, SeriesRef
from sumlens.board.query.curves import Method, envelope, pick, smooth
from sumlens.board.query.xaxis import XAxis, place


def scalar_series(
    surface: ReadSurface,
    ref: SeriesRef,
    axis: XAxis,
    points: int,
    smoothing: float,
    method: Method,
    with_envelope: bool,
) -> dict[str, Any] | None:
    """The JSON entry of ``ref`` as the scalars route answers it; None when it has no points.

    On a tag axis it also holds ``x`` (per point), ``missing`` (points without an x, left
    out) and ``monotonic``; with ``with_envelope``, ``envelope``: ``step``, ``wall`` (and
    ``x``) of each bucket's first and last point, and its ``min`` and ``max`` (twice each).
    """
    data = surface.points(ref)
    if data.size == 0:
        return None
    smoothed = smooth(data["value"], smoothing, method)
    placed = place(surface, ref, data, axis)
    inside = placed.index
    picked = pick(data["step"][inside], data["value"][inside], points)
    chosen = inside[picked]
    entry: dict[str, Any] = {
        "run": ref.run,
        "rank": ref.rank,
        "tag": ref.tag,
        "total": int(data.size),
        "range": {
            "step": [int(data["step"][0]), int(data["step"][-1])],
            "wall": [float(data["wall"][0]), float(data["wall"][-1])],
        },
        "shown": int(chosen.size),
        "step": np.ascontiguousarray(data["step"][chosen]),
        "wall": np.ascontiguousarray(data["wall"][chosen]),
        "value": np.ascontiguousarray(data["value"][chosen]),
        "smoothed": smoothed[chosen],
    }
    if placed.x is not None:
        entry.update(x=placed.x[picked], missing=placed.missing, monotonic=placed.monotonic)
    if with_envelope:
        at, low, high = envelope(data["value"][inside], points)
        band: dict[str, Any] = {
            "step": np.ascontiguousarray(data["step"][inside[at]]),
            "wall": np.ascontiguousarray(data["wall"][inside[at]]),
            "min": low,
            "max": high,
        }
        if placed.x is not None:
            band["x"] = placed.x[at]
        entry["envelope"] = band
    return entry
