"""``/api/v1`` routes of the non-scalar plugins: images, histograms, tensors.

The read surface keeps a sample of each series' values (see
:mod:`sumlens.board.data.samples`); these routes list them and read the asked-for values
back through it (:class:`~sumlens.board.data.surface.ReadSurface`). Names are only looked
up in the surface: no parameter is ever joined to a path.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, Query
from fastapi.responses import Response
from google.protobuf.message import Message as ProtoMessage

from sumlens.board.data.surface import ReadSurface
from sumlens.board.errors import NotFound, QueryError, ValueUnreadable
from sumlens.board.plugins import MESSAGE_PLUGINS
from sumlens.board.plugins import SAMPLED as PLUGINS
from sumlens.board.proto_json import message_json
from sumlens.board.query.kept import at_step, recorded_json, value_at, value_at_step
from sumlens.board.query.lookup import pick_series, step_index
from sumlens.board.responses import image_media_type, json_response
from sumlens.board.slicing import SliceError, statistics, take
from sumlens.io import Histogram, Image

RunParam = Annotated[str, Query(description="run id, e.g. ./ or ./a/b")]
TagParam = Annotated[str, Query(description="the value's tag")]
RankParam = Annotated[int | None, Query(description="the rank (files without one: omit)")]
StepParam = Annotated[int | None, Query(description="the step (default: the newest kept)")]
AnyStepParam = Annotated[
    int | None,
    Query(description="any recorded step, kept or not (default: the newest kept)"),
]


def histogram_json(step: int, wall: float, histogram: Histogram) -> dict[str, Any]:
    """One histogram as the pages read it (non-finite statistics as null)."""
    return {
        "step": step,
        "wall": wall,
        "min": histogram.min,
        "max": histogram.max,
        "sum": histogram.sum,
        "count": histogram.count,
        "nan_count": histogram.nan_count,
        "pos_inf_count": histogram.pos_inf_count,
        "neg_inf_count": histogram.neg_inf_count,
        "left": np.asarray(histogram.left, dtype=np.float64),
        "width": np.asarray(histogram.width, dtype=np.float64),
        "counts": np.asarray(histogram.counts, dtype=np.float64),
    }


def make_plugin_router(surface: ReadSurface) -> APIRouter:
    """The routes of images, histograms and tensors over ``surface``."""
    router = APIRouter(prefix="/api/v1")

    @router.get(
        "/samples",
        summary="The kept steps of a non-scalar series, per rank, and every recorded step "
        "(`recorded`; every `stride`-th once a long series' index is thinned out)",
    )
    def samples(
        run: RunParam,
        plugin: Annotated[str, Query(description=f"one of {', '.join(PLUGINS)}")],
        tag: TagParam,
    ) -> Response:
        if plugin not in PLUGINS:
            raise QueryError(f"plugin={plugin!r} is not one of {', '.join(PLUGINS)}")
        return json_response(
            {
                "series": [
                    {
                        "run": s.run,
                        "rank": s.rank,
                        "plugin": s.plugin,
                        "tag": s.tag,
                        "step": np.ascontiguousarray(s.items["step"]),
                        "wall": np.ascontiguousarray(s.items["wall"]),
                        **recorded_json(s),
                    }
                    for s in surface.samples(run, plugin, tag)
                ]
            }
        )

    @router.get("/image", summary="One image as stored (PNG for sumlens and MindSpore runs)")
    def image(
        run: RunParam, tag: TagParam, step: AnyStepParam = None, rank: RankParam = None
    ) -> Response:
        chosen, index = at_step(pick_series(surface, run, "image", tag, rank), step)
        picture = value_at(surface, chosen, index)
        if not isinstance(picture, Image):
            raise NotFound(f"{tag!r} holds no image")
        media = image_media_type(picture.encoded)
        return Response(
            picture.encoded,
            media_type=media or "application/octet-stream",
            headers={"Cache-Control": "no-cache"},  # a resumed run may rewrite a step
        )

    @router.get(
        "/histograms",
        summary="Every kept histogram of a tag, per rank, and every recorded step (`recorded`)",
    )
    def histograms(run: RunParam, tag: TagParam) -> Response:
        series = []
        for chosen in surface.samples(run, "histogram", tag):
            steps = []
            unreadable = 0  # damaged, or its file changed since it was listed: counted, said
            for index, item in enumerate(chosen.items):
                try:
                    event = surface.value(chosen, index)
                except ValueUnreadable:  # counted in the run's damage by the surface
                    event = None
                if event is not None and isinstance(event.value, Histogram):
                    steps.append(
                        histogram_json(int(item["step"]), float(item["wall"]), event.value)
                    )
                else:
                    unreadable += 1
            series.append(
                {
                    "run": run,
                    "rank": chosen.rank,
                    "tag": tag,
                    "histograms": steps,
                    "unreadable": unreadable,
                    **recorded_json(chosen),
                }
            )
        return json_response({"series": series})

    @router.get("/histograms/at", summary="The histogram of a tag at any recorded step")
    def histogram_at(
        run: RunParam, tag: TagParam, step: AnyStepParam = None, rank: RankParam = None
    ) -> Response:
        samples = pick_series(surface, run, "histogram", tag, rank)
        found = histogram_json(*value_at_step(surface, samples, step, Histogram))
        return json_response({"run": run, "rank": samples.rank, "tag": tag, **found})

    @router.get("/tensor", summary="A tensor (or a slice of it) at one step, with statistics")
    def tensor(
        run: RunParam,
        tag: TagParam,
        step: AnyStepParam = None,
        rank: RankParam = None,
        slice: Annotated[
            str | None, Query(description="e.g. [0,:,:]; one entry per dimension")
        ] = None,
        bins: Annotated[int, Query(ge=0, le=1000, description="histogram of the slice")] = 0,
    ) -> Response:
        chosen, index = at_step(pick_series(surface, run, "tensor", tag, rank), step)
        array = np.asarray(value_at(surface, chosen, index))
        try:
            part = take(array, slice)
        except SliceError as err:
            raise QueryError(str(err)) from None
        body: dict[str, Any] = {
            "run": run,
            "rank": chosen.rank,
            "tag": tag,
            "step": int(chosen.items["step"][index]),
            "wall": float(chosen.items["wall"][index]),
            "shape": list(array.shape),
            "dtype": str(array.dtype),
            "slice": slice,
            "slice_shape": list(part.shape),
            "statistics": statistics(array),
            "slice_statistics": statistics(part),
            "values": part.tolist() if part.dtype.kind in "fiub" else [str(v) for v in part.flat],
        }
        if bins and part.dtype.kind in "fiub":
            finite = part[np.isfinite(part.astype(np.float64))].astype(np.float64)
            counts, edges = np.histogram(finite, bins=bins) if finite.size else ([], [])
            body["histogram"] = {"edges": np.asarray(edges), "counts": np.asarray(counts)}
        return json_response(body)

    @router.get("/message", summary="A graph, lineage, dataset graph or landscape value, as JSON")
    def message(
        run: RunParam,
        plugin: Annotated[str, Query(description=f"one of {', '.join(MESSAGE_PLUGINS)}")],
        tag: TagParam,
        step: StepParam = None,
        rank: RankParam = None,
    ) -> Response:
        if plugin not in MESSAGE_PLUGINS:
            raise QueryError(f"plugin={plugin!r} is not one of {', '.join(MESSAGE_PLUGINS)}")
        chosen = pick_series(surface, run, plugin, tag, rank)
        index = step_index(chosen, step)
        value = value_at(surface, chosen, index)
        if not isinstance(value, ProtoMessage):
            raise NotFound(f"{plugin} {tag!r} holds no message")
        return json_response(
            {
                "run": run,
                "rank": chosen.rank,
                "plugin": plugin,
                "tag": tag,
                "step": int(chosen.items["step"][index]),
                "wall": float(chosen.items["wall"][index]),
                "message": message_json(value),
            }
        )

    return router
