"""Groups of runs in the scalars view: ``/api/v1/scalars/groups`` and its download.

The selected runs are grouped by a regular expression over their ids (the capture groups
name the group: ``lr([0-9.]+)/seed\\d`` puts ``./lr0.1/seed1`` and ``./lr0.1/seed2`` in
group ``0.1``; a named group reads ``lr=0.1``; a pattern without groups is named by its
whole match), by run tag (``annotation.tags`` of ``/api/v1/runs``: one group per tag, a
run with two tags is in both) or by a hyper-parameter or lineage field (``by=field&field=
hparam/lr``: the Lineage view's fields, :mod:`sumlens.board.query.group_fields`; a group per
value, named ``lr=0.1``). A run that does not match, has no tag or no value of the field
stays single: the answer lists it, and the page draws it as a run. ``all_groups`` names
every group of the runs with its chosen colour (null: automatic) and member runs, whatever
the tags asked, so the page colours each group alike in every chart. Per group and tag the
server answers the centre line and band of :mod:`sumlens.board.query.group_stats` (on full
resolution, each member smoothed first), downsampled only after that; the download gives
every step. ``/api/v1/scalars/groups/fields`` lists the fields the selected runs have.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Annotated

import orjson
from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response, StreamingResponse

from sumlens.board.csv_cells import safe_cell
from sumlens.board.data.surface import ReadSurface
from sumlens.board.errors import QueryError
from sumlens.board.query.curves import MAX_POINTS, MIN_POINTS
from sumlens.board.query.group_fields import RunFields
from sumlens.board.query.group_query import (
    BandParam,
    FieldParam,
    GroupQuery,
    GroupRegexParam,
    Groups,
    MethodParam,
    RunsParam,
    SmoothingParam,
    StatParam,
    TagsParam,
    every_group,
    group_entry,
    inside_range,
)
from sumlens.board.responses import json_response
from sumlens.board.state.annotations import AnnotationStore


def csv_rows(query: GroupQuery, surface: ReadSurface, groups: Groups) -> Iterator[bytes]:
    """Every step of every group as CSV: group, tag, step, (x,) centre, low, high, members."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    x_column = ("x",) if query.axis.name != "step" else ()
    writer.writerow(("group", "tag", "step", *x_column, *query.statistic.columns, "members"))
    yield buffer.getvalue().encode()
    for tag, name, _, stats in query.aggregates(surface, groups):
        inside = inside_range(stats, query.axis)
        buffer.seek(0)
        buffer.truncate()
        columns = [stats.step[inside].tolist()]
        if stats.x is not None:
            columns.append(stats.x[inside].tolist())
        columns += [a[inside].tolist() for a in (stats.center, stats.low, stats.high)]
        columns.append(stats.count[inside].tolist())
        group, tag_cell = safe_cell(name), safe_cell(tag)
        writer.writerows((group, tag_cell, *row) for row in zip(*columns, strict=True))
        yield buffer.getvalue().encode()


def _download_json(query: GroupQuery, surface: ReadSurface, groups: Groups) -> bytes:
    """Every step of every group as one JSON document (NaN as null)."""
    centre, low, high = query.statistic.columns
    body = {
        "axis": query.axis.name,
        "stat": query.statistic.stat,
        "band": query.statistic.band,
        "smoothing": query.smoothing,
        "method": query.method,
        "single": groups.single,
        "groups": [
            {
                "group": name,
                "tag": tag,
                "members": [{"run": ref.run, "rank": ref.rank} for ref in refs],
                "step": stats.step[inside],
                **({} if stats.x is None else {"x": stats.x[inside]}),
                centre: stats.center[inside],
                low: stats.low[inside],
                high: stats.high[inside],
                "members_at_step": stats.count[inside],
            }
            for tag, name, refs, stats in query.aggregates(surface, groups)
            for inside in [inside_range(stats, query.axis)]
        ],
    }
    return orjson.dumps(body, option=orjson.OPT_SERIALIZE_NUMPY)


def group_query(
    run: RunsParam = [],  # noqa: B006 - FastAPI reads the default
    tag: TagsParam = [],  # noqa: B006
    by: Annotated[
        str, Query(description="regex (over run ids), tag (run tags) or field (a lineage field)")
    ] = "regex",
    group_regex: GroupRegexParam = None,
    field: FieldParam = None,
    stat: StatParam = "mean",
    band: BandParam = "std",
    axis: Annotated[
        str, Query(description="step, relative, wall or tag:<scalar tag>; aligned by step")
    ] = "step",
    start: Annotated[float | None, Query(description="first x, inclusive")] = None,
    end: Annotated[float | None, Query(description="last x, inclusive")] = None,
    smoothing: SmoothingParam = 0.0,
    method: MethodParam = "ema",
) -> GroupQuery:
    """The groups request of the query string (a FastAPI dependency of both routes)."""
    return GroupQuery.create(
        run, tag, by, group_regex, field, stat, band, axis, start, end, smoothing, method
    )


def make_groups_router(surface: ReadSurface, annotations: AnnotationStore) -> APIRouter:
    """``/api/v1/scalars/groups``, its ``/download`` and ``/fields`` over ``surface``;
    grouping by run tag, and each group's chosen colour, read ``annotations``."""
    router = APIRouter(prefix="/api/v1")
    fields = RunFields(surface)

    @router.get("/scalars/groups/fields", summary="The lineage fields runs can be grouped by")
    def group_fields(run: RunsParam = []) -> Response:  # noqa: B006 - FastAPI reads it
        return json_response(
            {
                "fields": [
                    {"id": column.id, "label": column.label, "kind": column.kind}
                    for column in fields.of_runs(run)
                ]
            }
        )

    @router.get("/scalars/groups", summary="Per group of runs: mean or median with a band")
    def scalar_groups(
        query: Annotated[GroupQuery, Depends(group_query)],
        points: Annotated[
            int, Query(ge=MIN_POINTS, le=MAX_POINTS, description="points per group")
        ] = 2000,
    ) -> Response:
        groups = query.groups(annotations.all(), fields)
        colours = annotations.group_colours()
        return json_response(
            {
                "by": query.by,
                **({"field": query.field} if query.field is not None else {}),
                "stat": query.statistic.stat,
                "band": query.statistic.band,
                "axis": query.axis.name,
                "smoothing": query.smoothing,
                "method": query.method,
                "points": points,
                "single": groups.single,
                "all_groups": every_group(groups, colours),
                "groups": [
                    group_entry(tag, name, refs, stats, query.axis, points, colours.get(name))
                    for tag, name, refs, stats in query.aggregates(surface, groups)
                ],
            }
        )

    @router.get("/scalars/groups/download", summary="Every step of each group, as a file")
    def download(
        query: Annotated[GroupQuery, Depends(group_query)],
        format: Annotated[str, Query(description="csv or json")] = "csv",
    ) -> Response:
        if format not in ("csv", "json"):
            raise QueryError(f"format={format!r} is not one of csv, json")
        groups = query.groups(annotations.all(), fields)
        headers = {"Content-Disposition": f'attachment; filename="scalar-groups.{format}"'}
        if format == "json":
            body = _download_json(query, surface, groups)
            return Response(body, media_type="application/json", headers=headers)
        return StreamingResponse(
            csv_rows(query, surface, groups), media_type="text/csv", headers=headers
        )

    return router
