"""``GET /api/v1/snapshot``: the shareable snapshot of some runs and tags, as a download.

The Scalars view's "Snapshot" button asks for the runs and tags it shows, with its
smoothing, envelope and groups; the answer is the HTML file ``sumlens snapshot`` writes for
the same choice (one builder, :func:`sumlens.board.snapshot.build.build`): charts, images,
colours and annotations in one file that opens with no server and no network.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response

from sumlens.board.data.surface import ReadSurface
from sumlens.board.query.group_query import (
    BandParam,
    FieldParam,
    GroupRegexParam,
    MethodParam,
    SmoothingParam,
    StatParam,
)
from sumlens.board.snapshot.build import build
from sumlens.board.snapshot.content import Grouping, check_smoothing
from sumlens.board.state.annotations import AnnotationStore

FILE_NAME = "sumlens-snapshot.html"


def make_snapshot_router(
    surface: ReadSurface, annotations: AnnotationStore, plotly_js: Callable[[], Path]
) -> APIRouter:
    """The snapshot route over ``surface``; ``plotly_js`` finds the bundle to inline."""
    router = APIRouter(prefix="/api/v1")

    @router.get("/snapshot", summary="One self-contained HTML file of runs' scalars and images")
    def snapshot(
        run: Annotated[list[str], Query(description="run ids (repeatable)")] = [],  # noqa: B006
        run_regex: Annotated[str | None, Query(description="runs whose id matches")] = None,
        tag: Annotated[list[str], Query(description="tags (repeatable)")] = [],  # noqa: B006
        tag_regex: Annotated[str | None, Query(description="tags that match")] = None,
        smoothing: SmoothingParam = 0.0,
        method: MethodParam = "ema",
        group_by: Annotated[
            str | None, Query(description="group the runs: regex, tag or field (none: don't)")
        ] = None,
        group_regex: GroupRegexParam = None,
        field: FieldParam = None,
        stat: StatParam = "mean",
        band: BandParam = "std",
        members: Annotated[str, Query(description="a group's members: faint or hidden")] = "faint",
        envelope: Annotated[
            bool, Query(description="add each series' min-max envelope (full resolution)")
        ] = False,
    ) -> Response:
        check_smoothing(smoothing, method)
        grouping = (
            None
            if group_by is None
            else Grouping(group_by, group_regex, field, stat, band, members)
        )
        page = build(
            surface,
            annotations.all(),
            plotly_js(),
            runs=run,
            run_regex=run_regex,
            tags=tag,
            tag_regex=tag_regex,
            smoothing=smoothing,
            method=method,
            grouping=grouping,
            group_colours=annotations.group_colours(),
            envelope=envelope,
        )
        return Response(
            page,
            media_type="text/html; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{FILE_NAME}"'},
        )

    return router
