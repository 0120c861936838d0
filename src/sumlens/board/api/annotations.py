"""Run annotations (tags, a note, a colour) and group colours under ``/api/v1``: set one,
export them a page at a time, import.

* ``PUT /annotation?run=<run id>`` with ``{"tags": [...], "note": "...", "colour": "#rrggbb"
  | null}`` (all three) stores the run's annotation and answers it; an unknown run is a 404.
* ``PUT /group-colour?group=<name>`` with ``{"colour": "#rrggbb" | null}`` (null: back to
  the automatic colour) stores the colour of a group of the Scalars view (``api/groups.py``
  answers it with the group) and answers ``{"group": ..., "colour": ...}``.
* ``GET /annotations?limit=<n>&after=<run id>`` answers one page of the file a team
  shares: ``{"base_dir": ..., "annotations": {run id: annotation}, "group_colours": {group
  name: colour}, "total": <annotated runs>, "next": <run id> | null}``, at most ``limit``
  runs (default and most: :data:`~sumlens.board.state.annotation_checks.MAX_PAGE`) sorted by id,
  those after ``after``; ``next`` is the ``after`` of the next page (null on the last).
  The page's "Export tags" reads every page and saves them as one file.
* ``POST /annotations`` takes that same JSON (a whole export, or one page of it) and merges
  it in (runs not served now are kept for when they appear); it answers what it did, in
  counts. An import holds at most
  :data:`~sumlens.board.state.annotation_checks.MAX_IMPORT_RUNS` runs and may not take the
  workspace past :data:`~sumlens.board.state.annotations.MAX_ANNOTATIONS` annotated runs
  (413, naming the limit: nothing of it is stored).

Bodies are read by :func:`sumlens.board.request_reading.json_body` (JSON only). What
is stored is :mod:`sumlens.board.state.annotations`', the checks
:mod:`sumlens.board.state.annotation_checks`'.
"""

from __future__ import annotations

from typing import Annotated

import orjson
from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from sumlens.board.data.surface import ReadSurface
from sumlens.board.errors import NotFound, QueryError
from sumlens.board.request_reading import json_body
from sumlens.board.responses import json_response
from sumlens.board.state.annotation_checks import (
    MAX_PAGE,
    check_group_name,
    check_run_id,
    parse_annotation,
    parse_colour,
    parse_import,
    parse_imported_group_colours,
)
from sumlens.board.state.annotations import AnnotationStore


def make_annotation_router(surface: ReadSurface, store: AnnotationStore) -> APIRouter:
    """The annotation routes of ``surface``'s runs, kept in ``store``."""
    router = APIRouter(prefix="/api/v1")

    @router.put("/annotation", summary="Set a run's tags, note and colour")
    async def put_annotation(
        request: Request,
        run: Annotated[str, Query(description="the run id, e.g. ./a/b")],
    ) -> Response:
        run_id = check_run_id(run)
        annotation = parse_annotation(await json_body(request))

        def put() -> Response:  # off the event loop: it waits on the loader's lock and disk
            if not surface.has_run(run_id):
                raise NotFound(f"run={run_id!r} is not a run being served")
            return json_response(store.put(run_id, annotation).as_json())

        return await run_in_threadpool(put)

    @router.put("/group-colour", summary="Set (or clear) the colour of a group of runs")
    async def put_group_colour(
        request: Request,
        group: Annotated[str, Query(description="the group's name, as /scalars/groups says")],
    ) -> Response:
        name = check_group_name(group)
        body = await json_body(request)
        if not isinstance(body, dict) or set(body) != {"colour"}:
            raise QueryError(
                f'body={body!r:.80} is not allowed: a group colour is {{"colour": "#rrggbb"}} '
                'or {"colour": null}'
            )
        colour = parse_colour(body["colour"])

        def put() -> Response:  # off the event loop: it writes to disk
            return json_response({"group": name, "colour": store.put_group_colour(name, colour)})

        return await run_in_threadpool(put)

    @router.get("/annotations", summary="The runs' annotations, a page at a time, to share")
    def export_annotations(
        limit: Annotated[
            int, Query(ge=1, le=MAX_PAGE, description="the most runs in the page")
        ] = MAX_PAGE,
        after: Annotated[
            str | None, Query(description="the page starts after this run id (next's value)")
        ] = None,
    ) -> Response:
        found, following = store.page(after, limit)
        body = {
            "base_dir": store.base_dir,
            "annotations": {run: each.as_json() for run, each in found.items()},
            "group_colours": store.group_colours() if after is None else {},  # once
            "total": store.count(),
            "next": following,
        }
        return Response(
            orjson.dumps(body, option=orjson.OPT_INDENT_2),
            media_type="application/json",
            headers={"Content-Disposition": 'attachment; filename="annotations.json"'},
        )

    @router.post("/annotations", summary="Merge annotations exported by GET /annotations")
    async def import_annotations(request: Request) -> Response:
        body = await json_body(request)
        base_dir, incoming = parse_import(body)
        group_colours = parse_imported_group_colours(body)

        def merge() -> Response:  # off the event loop, as put's
            counts = store.merge(incoming, group_colours)
            served = sum(surface.has_run(run_id) for run_id in incoming)
            return json_response(
                {
                    **counts,
                    "runs": len(incoming),
                    "not_served": len(incoming) - served,  # kept for when they appear
                    "from_base_dir": base_dir,
                }
            )

        return await run_in_threadpool(merge)

    return router
