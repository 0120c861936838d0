"""``/api/v1/pr_curve``: every kept precision-recall curve of a tag, per rank, and
``/api/v1/pr_curve/at``: the curve at any recorded step, kept or not.

A ``pr_curve`` value is TensorBoard's tensor of shape ``(6, thresholds)``: true
positives, false positives, true negatives, false negatives, precision and recall at
each threshold, the thresholds evenly spaced over [0, 1] (as TensorBoard's plugin lays
them out). As TensorBoard's plugin, a curve stops at its last threshold where some example
is predicted positive: the thresholds after it (TP + FP = 0, precision undefined; torch's
writer always ends on one at threshold 1.0) would draw a line to precision = recall = 0.
The first threshold is always kept. (TensorBoard truncates weighted counts to integers
before that test, so it also drops a point whose positives weigh less than 1; here only
points with no positive weight at all are dropped.) The view draws each kept step's curve and picks
the step on the page, so one answer holds them all (at most the plugin's cap of steps),
with every recorded step (``recorded``) the page may ask ``/pr_curve/at`` for. A kept
value that is not such a tensor, or cannot be read back, is counted in the answer.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, Query
from fastapi.responses import Response

from sumlens.board.data.surface import ReadSurface
from sumlens.board.errors import NotFound, ValueUnreadable
from sumlens.board.query.kept import at_step, recorded_json, value_at
from sumlens.board.query.lookup import pick_series
from sumlens.board.responses import json_response

ROWS = ("tp", "fp", "tn", "fn", "precision", "recall")
"""The rows of a ``pr_curve`` value, in order."""


def drawn_points(tp: np.ndarray, fp: np.ndarray) -> int:
    """How many of a curve's thresholds are drawn: up to the last one where some example is
    predicted positive (TP + FP is not 0), at least the first (see the module docstring)."""
    positive = np.flatnonzero((tp + fp) != 0)  # NaN counts as positive: shown, not hidden
    return int(positive[-1]) + 1 if positive.size else 1


def curve_json(step: int, wall: float, value: object) -> dict[str, Any] | None:
    """One kept curve as the page reads it, its undefined tail left out (None when
    ``value`` is no ``(6, n)`` tensor with n >= 1); non-finite values go out as null."""
    array = np.asarray(value) if isinstance(value, np.ndarray) else None
    if array is None or array.ndim != 2 or array.shape[0] != len(ROWS) or not array.shape[1]:
        return None
    if array.dtype.kind not in "fiu":
        return None
    data = np.asarray(array, dtype=np.float64)
    end = drawn_points(data[0], data[1])
    thresholds = np.linspace(0.0, 1.0, data.shape[1])[:end]
    rows = {name: data[i, :end] for i, name in enumerate(ROWS)}
    return {"step": step, "wall": wall, "thresholds": thresholds, **rows}


RunParam = Annotated[str, Query(description="run id, e.g. ./ or ./a/b")]
TagParam = Annotated[str, Query(description="the curve's tag")]


def make_pr_curve_router(surface: ReadSurface) -> APIRouter:
    """The PR-curve view's routes over ``surface``."""
    router = APIRouter(prefix="/api/v1")

    @router.get(
        "/pr_curve",
        summary="Every kept precision-recall curve of a tag, per rank, and every recorded step",
    )
    def pr_curve(run: RunParam, tag: TagParam) -> Response:
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
                 "unreadable": unreadable, **recorded_json(chosen)}
            )  # fmt: skip
        return json_response({"series": series})

    @router.get("/pr_curve/at", summary="The precision-recall curve of a tag at any step")
    def pr_curve_at(
        run: RunParam,
        tag: TagParam,
        step: Annotated[
            int | None, Query(description="any recorded step, kept or not (default: the newest)")
        ] = None,
        rank: Annotated[int | None, Query(description="the rank (files without one: omit)")] = None,
    ) -> Response:
        chosen, index = at_step(pick_series(surface, run, "pr_curve", tag, rank), step)
        item = chosen.items[index]
        curve = curve_json(int(item["step"]), float(item["wall"]), value_at(surface, chosen, index))
        if curve is None:
            raise NotFound(
                f"{tag!r} at step {int(item['step'])} holds no curve: a pr_curve value is a "
                f"numeric tensor of shape (6, thresholds)"
            )
        return json_response({"run": run, "rank": chosen.rank, "tag": tag, **curve})

    return router
