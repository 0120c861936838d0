"""The landscape view's routes under ``/api/v1``: a run's loss landscapes, and one of them.

* ``GET /landscapes?run=`` lists every kept landscape of a run (each tag, rank and step):
  its kind (``train``, with an interval and a loss path, or ``result``), interval, metadata
  and grid shape, train landscapes first in interval order. A landscape that cannot be
  drawn is listed with its ``error``, so the page can say so without asking again.
* ``GET /landscape?run=&tag=&rank=&step=`` gives one landscape to draw: the grid (``x``,
  ``y``, ``z`` with its ``shape``), the path with the epoch or step of each point, the
  convergence point and the metadata (see :mod:`sumlens.board.query.landscape_values`).

Unknown runs, tags and steps answer 404; a message that cannot be drawn (crafted or
damaged: a ``z`` that does not fit ``x`` and ``y``, a path without its points) answers
422; both with a one-line ``detail``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, Response

from sumlens._proto import summary_pb2
from sumlens.board.data.surface import ReadSurface, Samples
from sumlens.board.errors import NotFound, ValueUnreadable
from sumlens.board.query.landscape_values import (
    RESULT,
    LandscapeError,
    interval_key,
    landscape_info,
    landscape_json,
)
from sumlens.board.query.lookup import pick_series, step_index
from sumlens.board.responses import json_response

PLUGIN = "landscape"

RunParam = Annotated[str, Query(description="run id, e.g. ./ or ./a/b")]
TagParam = Annotated[str, Query(description="the landscape's tag, e.g. landscape_[1, 3]")]
RankParam = Annotated[int | None, Query(description="the rank (files without one: omit)")]
StepParam = Annotated[int | None, Query(description="the step (default: the newest kept)")]


def _message(surface: ReadSurface, samples: Samples, index: int) -> summary_pb2.LossLandscape:
    """The landscape message of ``samples.items[index]``, read back from its file."""
    event = surface.value(samples, index)
    step = int(samples.items["step"][index])
    if event is None:
        raise NotFound(f"landscape {samples.tag!r} at step {step} is no longer in its file")
    if not isinstance(event.value, summary_pb2.LossLandscape):
        raise NotFound(f"{samples.tag!r} at step {step} holds no loss landscape")
    return event.value


def _listed(surface: ReadSurface, samples: Samples, index: int) -> dict[str, Any]:
    """One landscape as the listing gives it (``error`` set when it cannot be drawn)."""
    item = samples.items[index]
    entry: dict[str, Any] = {
        "tag": samples.tag,
        "rank": samples.rank,
        "step": int(item["step"]),
        "wall": float(item["wall"]),
        "kind": None,
        "interval": None,
        "intervals": [],
        "decomposition": None,
        "unit": None,
        "step_per_epoch": None,
        "shape": None,
        "error": None,
    }
    try:
        message = _message(surface, samples, index)
        info = landscape_info(message)
        entry.update(
            kind=info.kind,
            interval=interval_key(info.intervals) if info.intervals else None,
            intervals=info.intervals,
            decomposition=info.decomposition,
            unit=info.unit,
            step_per_epoch=info.step_per_epoch,
        )
        entry["shape"] = landscape_json(message)["shape"]
    except (NotFound, LandscapeError, ValueUnreadable) as err:
        entry["error"] = str(err)
    return entry


def _order(entry: dict[str, Any]) -> tuple[Any, ...]:
    """Train landscapes by interval, then result ones, then what cannot be read."""
    group = {"train": 0, RESULT: 1}.get(entry["kind"], 2)
    rank = -1 if entry["rank"] is None else entry["rank"]
    return (group, entry["intervals"], entry["tag"], rank, entry["step"])


def make_landscape_router(surface: ReadSurface) -> APIRouter:
    """The landscape view's routes over ``surface``'s runs."""
    router = APIRouter(prefix="/api/v1")

    @router.get("/landscapes", summary="Every kept loss landscape of a run, listed")
    def landscapes(run: RunParam) -> Response:
        if not surface.has_run(run):
            raise NotFound(f"run={run!r} is not a run the server knows")
        summary = next((entry for entry in surface.runs() if entry["id"] == run), None)
        tags = [] if summary is None else summary["tags"].get(PLUGIN, [])
        listed = [
            _listed(surface, samples, index)
            for tag in tags
            for samples in surface.samples(run, PLUGIN, tag)
            for index in range(samples.items.size)
        ]
        return json_response({"run": run, "landscapes": sorted(listed, key=_order)})

    @router.get("/landscape", summary="One loss landscape: grid, path, convergence point")
    def landscape(
        run: RunParam, tag: TagParam, rank: RankParam = None, step: StepParam = None
    ) -> Response:
        samples = pick_series(surface, run, PLUGIN, tag, rank)
        index = step_index(samples, step)
        message = _message(surface, samples, index)
        try:
            body = landscape_json(message)
        except LandscapeError as err:
            where = f"run={run!r} landscape {tag!r} at step {int(samples.items['step'][index])}"
            return JSONResponse({"detail": f"{where} cannot be drawn: {err}"}, status_code=422)
        return json_response(
            {
                "run": run,
                "tag": tag,
                "rank": samples.rank,
                "step": int(samples.items["step"][index]),
                "wall": float(samples.items["wall"][index]),
                **body,
            }
        )

    return router
