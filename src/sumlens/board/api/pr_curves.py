"""``/api/v1/pr_curves``: every kept precision-recall curve of a tag, per rank.

A ``pr_curve`` value is TensorBoard's tensor of shape ``(6, thresholds)``: true
positives, false positives, true negatives, false negatives, precision and recall at
each threshold, the thresholds evenly spaced over [0, 1] (``i / (thresholds - 1)``, as
TensorBoard's plugin lays them out). The view draws each kept step's curve and picks
the step on the page, so one answer holds them all (at most the plugin's cap of steps).
A value that is not such a tensor, or cannot be read back, is counted in the answer.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, Query
from fastapi.responses import Response

from sumlens.board.data.surface import ReadSurface
from sumlens.board.errors import NotFound, ValueUnreadable
from sumlens.board.responses import json_response

ROWS = ("tp", "fp", "tn", "fn", "precision", "recall")
"""The rows of a ``pr_curve`` value, in order."""


def curve_json(step: int, wall: float, value: object) -> dict[str, Any] | None:
    """One kept curve as the page reads it (None when ``value`` is no ``(6, n)`` tensor
    with n >= 1); non-finite values go out as null."""
    array = np.asarray(value) if isinstance(value, np.ndarray) else None
    if array is None or array.ndim != 2 or array.shape[0] != len(ROWS) or not array.shape[1]:
        return None
    if array.dtype.kind not in "fiu":
        return None
    count = array.shape[1]
    thresholds = np.arange(count) / (count - 1) if count > 1 else np.zeros(1)
    rows = {name: np.asarray(array[i], dtype=np.float64) for i, name in enumerate(ROWS)}
    return {"step": step, "wall": wall, "thresholds": thresholds, **rows}


def make_pr_curve_router(surface: ReadSurface) -> APIRouter:
    """The pr_curves view's routes over ``surface``."""
    router = APIRouter(prefix="/api/v1")

    @router.get("/pr_curves", summary="Every kept precision-recall curve of a tag, per rank")
    def pr_curves(
        run: Annotated[str, Query(description="run id, e.g. ./ or ./a/b")],
        tag: Annotated[str, Query(description="the curve's tag")],
    ) -> Response:
        found = surface.samples(run, "pr_curve", tag)
        if not found:
            if not surface.has_run(run):
                raise NotFound(f"run={run!r} is not a run being served")
            raise NotFound(f"run={run!r} has no pr_curve tag={tag!r}")
        series = []
        for chosen in found:
            curves = []
            unreadable = 0  # damaged, gone since listed, or not a (6, n) tensor: counted
            for index, item in enumerate(chosen.items):
                try:
                    event = surface.value(chosen, index)
                except ValueUnreadable:  # counted in the run's damage by the surface
                    event = None
                curve = None
                if event is not None:
                    curve = curve_json(int(item["step"]), float(item["wall"]), event.value)
                if curve is None:
                    unreadable += 1
                else:
                    curves.append(curve)
            series.append(
                {"run": run, "rank": chosen.rank, "tag": tag, "curves": curves,
                 "unreadable": unreadable}
            )  # fmt: skip
        return json_response({"series": series})

    return router
