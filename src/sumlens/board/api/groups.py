"""Groups of runs in the scalars view: ``/api/v1/scalars/groups`` and its download.

The selected runs are grouped by a regular expression over their ids (the capture groups
name the group: ``lr([0-9.]+)/seed\\d`` puts ``./lr0.1/seed1`` and ``./lr0.1/seed2`` in
group ``0.1``; a named group reads ``lr=0.1``; a pattern without groups is named by its
whole match), by run tag (``annotation.tags`` of ``/api/v1/runs``: one group per tag, a
run with two tags is in both) or by a hyper-parameter or lineage field (``by=field&field=
hparam/lr``: the Lineage view's fields, :mod:`sumlens.board.api.group_fields`; a group per
value, named ``lr=0.1``). A run that does not match, has no tag or no value of the field
stays single: the answer lists it, and the page draws it as a run. Per group and tag the
server answers the centre line and band of :mod:`sumlens.board.api.group_stats` (on full
resolution, each member smoothed first), downsampled only after that; the download gives
every step. ``/api/v1/scalars/groups/fields`` lists the fields the selected runs have.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, cast

import numpy as np
import orjson
from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response, StreamingResponse

from sumlens.board.api.curves import MAX_POINTS, METHODS, MIN_POINTS, Method, pick
from sumlens.board.api.group_fields import RunFields, group_name
from sumlens.board.api.group_stats import Aggregate, Statistic, aggregate
from sumlens.board.api.query import Pattern, compile_pattern
from sumlens.board.api.xaxis import XAxis
from sumlens.board.csv_cells import safe_cell
from sumlens.board.data.annotations import Annotation, AnnotationStore
from sumlens.board.data.surface import ReadSurface, SeriesRef
from sumlens.board.errors import QueryError
from sumlens.board.responses import json_response

GROUP_BY = ("regex", "tag", "field")

RunsParam = Annotated[list[str], Query(description="run ids, e.g. ./ or ./a/b (repeatable)")]
TagsParam = Annotated[list[str], Query(description="scalar tags (repeatable)")]


@dataclass(frozen=True, slots=True)
class Groups:
    """The selected runs split into named groups (in order of first member) and singles."""

    members: dict[str, list[str]]
    single: list[str]


def group_runs(
    runs: list[str], by: str, pattern: Pattern | None, run_names: dict[str, tuple[str, ...]]
) -> Groups:
    """Split ``runs`` by ``pattern`` (``by="regex"``) or else by the group names
    ``run_names`` gives each (its run tags, or its field's value)."""
    members: dict[str, list[str]] = {}
    single = []
    for run in dict.fromkeys(runs):
        names = _regex_names(pattern, run) if by == "regex" else list(run_names.get(run, ()))
        for name in names:
            members.setdefault(name, []).append(run)
        if not names:
            single.append(run)
    return Groups(members, single)


def _regex_names(pattern: Pattern | None, run: str) -> list[str]:
    """The group ``run`` falls in by ``pattern`` (none when it does not match)."""
    found: Any = pattern.search(run) if pattern is not None else None
    if found is None:
        return []
    captured = found.groups()
    if not captured:
        return [found.group(0)]
    names = {index: name for name, index in getattr(found.re, "groupindex", {}).items()}
    parts = [
        f"{names[i]}={value or ''}" if i in names else (value or "")
        for i, value in enumerate(captured, start=1)
    ]
    return [" ".join(parts)]


@dataclass(frozen=True, slots=True)
class GroupQuery:
    """A checked groups request."""

    runs: list[str]
    tags: list[str]
    by: str
    pattern: Pattern | None
    field: str | None
    statistic: Statistic
    axis: XAxis
    smoothing: float
    method: Method

    @classmethod
    def create(
        cls,
        runs: list[str],
        tags: list[str],
        by: str,
        group_regex: str | None,
        field: str | None,
        stat: str,
        band: str,
        axis: str,
        start: float | None,
        end: float | None,
        smoothing: float,
        method: str,
    ) -> GroupQuery:
        """Every parameter checked; a :class:`QueryError` names the first not allowed."""
        if by not in GROUP_BY:
            raise QueryError(f"by={by!r} is not one of {', '.join(GROUP_BY)}")
        if method not in METHODS:
            raise QueryError(f"method={method!r} is not one of {', '.join(METHODS)}")
        pattern = compile_pattern("group_regex", group_regex)
        if by == "regex" and pattern is None:
            raise QueryError("group_regex='' is empty: give a regular expression (by=regex)")
        if by == "field" and not field:
            raise QueryError(
                f"field={field or ''!r} is empty: give a hyper-parameter or lineage field id "
                "(by=field), e.g. hparam/lr or learning_rate"
            )
        statistic = Statistic.create(stat, band)
        return cls(
            list(runs),
            list(tags),
            by,
            pattern,
            field if by == "field" else None,
            statistic,
            XAxis.create(axis, start, end),
            smoothing,
            cast(Method, method),
        )

    def groups(self, annotations: Mapping[str, Annotation], fields: RunFields) -> Groups:
        """The selected runs grouped as asked (``annotations``: each run's, for its tags)."""
        names: dict[str, tuple[str, ...]] = {}
        if self.by == "tag":
            names = {run: a.tags for run, a in annotations.items()}
        elif self.field is not None:
            column = fields.column(self.field)
            names = {
                run: (group_name(column, value),)
                for run, value in column.values.items()
                if value is not None
            }
        return group_runs(self.runs, self.by, self.pattern, names)

    def aggregates(
        self, surface: ReadSurface, groups: Groups
    ) -> Iterator[tuple[str, str, list[SeriesRef], Aggregate]]:
        """Per tag, then group: its name, its member series and their statistics."""
        for tag in dict.fromkeys(self.tags):
            for name, runs in groups.members.items():
                refs = [ref for run in runs for ref in surface.series(run) if ref.tag == tag]
                stats = aggregate(
                    surface, refs, self.statistic, self.axis, self.smoothing, self.method
                )
                if stats is not None:
                    yield tag, name, refs, stats


def _inside(stats: Aggregate, axis: XAxis) -> np.ndarray:
    """Indices of the steps with an x inside ``axis``'s range (all along step, unranged)."""
    x = stats.step if stats.x is None else stats.x
    keep = np.isfinite(x)
    if axis.start is not None:
        keep &= x >= axis.start
    if axis.end is not None:
        keep &= x <= axis.end
    return np.flatnonzero(keep)


def group_entry(
    tag: str,
    name: str,
    refs: list[SeriesRef],
    stats: Aggregate,
    axis: XAxis,
    points: int,
    colour: str | None,
) -> dict[str, Any]:
    """A group's JSON entry: its chosen ``colour`` (None: automatic), its members, and at
    most ``points`` of its steps in range, picked by the centre line's min-max downsample
    (the band follows the same steps)."""
    inside = _inside(stats, axis)
    chosen = inside[pick(stats.step[inside], stats.center[inside], points)]
    entry: dict[str, Any] = {
        "name": name,
        "tag": tag,
        "colour": colour,
        "members": [{"run": ref.run, "rank": ref.rank} for ref in refs],
        "total": int(stats.step.size),
        "shown": int(chosen.size),
        "step": stats.step[chosen],
        "center": stats.center[chosen],
        "low": stats.low[chosen],
        "high": stats.high[chosen],
        "count": stats.count[chosen],
    }
    if stats.x is not None:
        entry.update(x=stats.x[chosen], missing=stats.missing)
    return entry


def csv_rows(query: GroupQuery, surface: ReadSurface, groups: Groups) -> Iterator[bytes]:
    """Every step of every group as CSV: group, tag, step, (x,) centre, low, high, members."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    x_column = ("x",) if query.axis.name != "step" else ()
    writer.writerow(("group", "tag", "step", *x_column, *query.statistic.columns, "members"))
    yield buffer.getvalue().encode()
    for tag, name, _, stats in query.aggregates(surface, groups):
        inside = _inside(stats, query.axis)
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
            for inside in [_inside(stats, query.axis)]
        ],
    }
    return orjson.dumps(body, option=orjson.OPT_SERIALIZE_NUMPY)


def group_query(
    run: RunsParam = [],  # noqa: B006 - FastAPI reads the default
    tag: TagsParam = [],  # noqa: B006
    by: Annotated[
        str, Query(description="regex (over run ids), tag (run tags) or field (a lineage field)")
    ] = "regex",
    group_regex: Annotated[
        str | None, Query(description="RE2 pattern; its capture groups name the group")
    ] = None,
    field: Annotated[
        str | None, Query(description="by=field: a lineage field id, e.g. hparam/lr")
    ] = None,
    stat: Annotated[str, Query(description="the centre line: mean or median")] = "mean",
    band: Annotated[str, Query(description="std, minmax or p<lo>-<hi> (p25-75)")] = "std",
    axis: Annotated[
        str, Query(description="step, relative, wall or tag:<scalar tag>; aligned by step")
    ] = "step",
    start: Annotated[float | None, Query(description="first x, inclusive")] = None,
    end: Annotated[float | None, Query(description="last x, inclusive")] = None,
    smoothing: Annotated[float, Query(ge=0.0, lt=1.0, description="weight in [0, 1)")] = 0.0,
    method: Annotated[str, Query(description="ema or average")] = "ema",
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
