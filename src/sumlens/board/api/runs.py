"""The JSON API under ``/api/v1``: runs, tags and scalars of many runs in one request.

Responses are built with orjson from numpy columns (FastAPI's default encoder takes
seconds for a million numbers); the run list is encoded once per surface version. Every
route reads through the :class:`~sumlens.board.data.surface.ReadSurface` and only looks
names up in it: no parameter is ever joined to a path.
"""

from __future__ import annotations

import os
import threading
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Query, Request
from fastapi.responses import Response, StreamingResponse

from sumlens._version import __version__
from sumlens.board.data.surface import ReadSurface
from sumlens.board.errors import QueryError
from sumlens.board.query.curves import MAX_POINTS, METHODS, MIN_POINTS
from sumlens.board.query.export import csv_chunks, json_chunks
from sumlens.board.query.scalar_series import scalar_series
from sumlens.board.query.selection import select
from sumlens.board.query.xaxis import XAxis
from sumlens.board.responses import json_response
from sumlens.board.state.annotation_checks import EMPTY
from sumlens.board.state.annotations import AnnotationStore
from sumlens.board.state.runs import RunStates

_JSON = "application/json"
_NUMPY = orjson.OPT_SERIALIZE_NUMPY

RunsParam = Annotated[list[str], Query(description="run ids, e.g. ./ or ./a/b (repeatable)")]
TagsParam = Annotated[list[str], Query(description="scalar tags (repeatable); none: every tag")]
RegexParam = Annotated[str | None, Query(description="regular expression over tags")]
AxisParam = Annotated[
    str,
    Query(description="step, relative (seconds), wall (epoch seconds) or tag:<scalar tag>"),
]
StartParam = Annotated[float | None, Query(description="first x of the range, inclusive")]
EndParam = Annotated[float | None, Query(description="last x of the range, inclusive")]


class _RunsCache:
    """The encoded run list of the surface's and the shared state's current versions."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version = -1
        self._body = b""

    def get(
        self, surface: ReadSurface, annotations: AnnotationStore, states: RunStates
    ) -> tuple[bytes, str]:
        """The encoded run list, each run with its annotation and state, and its entity tag
        (the list's version: the surface's plus the shared state's, which moves on any
        change of an annotation or a run's state, so either moves it)."""
        with self._lock:
            version = surface.version + annotations.version
            if version != self._version:
                status = surface.status()
                self._body = orjson.dumps(
                    {
                        "base_dir": status["base_dir"],
                        "loading": status["loading"],
                        "reload_interval": status["reload_interval"],
                        "truncated": status["truncated"],
                        "engine": status["engine"],
                        "version": version,
                        "runs": annotated(surface.runs(), annotations, states.states()),
                        # moves when a run's annotation or a group's colour changes: the
                        # groups' colours come with the groups (/scalars/groups), not here
                        "annotations_version": annotations.version,
                    }
                )
                self._version = version
            return self._body, f'"{self._version}-{os.getpid()}"'


def annotated(
    runs: list[dict[str, Any]], annotations: AnnotationStore, states: dict[str, str]
) -> list[dict[str, Any]]:
    """Copies of the run list's entries (the surface shares its own), each with its
    ``annotation`` and its ``state`` (``"hidden"``, ``"archived"`` or None: shown)."""
    given = annotations.all()
    return [
        {
            **run,
            "annotation": given.get(run["id"], EMPTY).as_json(),
            "state": states.get(run["id"]),
        }
        for run in runs
    ]


def make_router(
    surface: ReadSurface, port: int, annotations: AnnotationStore, states: RunStates
) -> APIRouter:
    """The ``/api/v1`` routes over ``surface``; runs carry their ``annotations`` and their
    ``states`` (hidden, archived)."""
    router = APIRouter(prefix="/api/v1")
    runs_cache = _RunsCache()

    @router.get("/health", summary="The server answers; which base directory it serves")
    def health() -> Response:
        status = surface.status()
        return json_response(
            {
                "status": "ok",
                "version": __version__,
                "base_dir": status["base_dir"],
                "pid": os.getpid(),
                "port": port,
                "loading": status["loading"],
                "watching": status["watching"],
                "polling_reason": status["polling_reason"],
                # requests and bytes of the last reload and in all (object storage only)
                "requests": status.get("requests"),
                "reloads": status.get("reloads"),  # passes over the base directory so far
            }
        )

    @router.get("/runs", summary="Every run: times, tags per plugin, load status, damage")
    def runs(request: Request) -> Response:
        body, etag = runs_cache.get(surface, annotations, states)
        headers = {"ETag": etag, "Cache-Control": "no-cache"}
        if request.headers.get("if-none-match") == etag:  # a poll that found nothing new
            return Response(status_code=304, headers=headers)
        return Response(body, media_type=_JSON, headers=headers)

    @router.get("/tags", summary="The tags of the given runs (all runs when none), per plugin")
    def tags(run: RunsParam = []) -> Response:  # noqa: B006 - FastAPI reads the default
        wanted = set(run)
        union: dict[str, set[str]] = {}
        for item in surface.runs():
            if wanted and item["id"] not in wanted:
                continue
            for plugin, names in item["tags"].items():
                union.setdefault(plugin, set()).update(names)
        return json_response({"tags": {plugin: sorted(names) for plugin, names in union.items()}})

    @router.get("/scalars", summary="Scalars of many runs and tags, smoothed and downsampled")
    def scalars(
        run: RunsParam = [],  # noqa: B006
        tag: TagsParam = [],  # noqa: B006
        tag_regex: RegexParam = None,
        points: Annotated[
            int, Query(ge=MIN_POINTS, le=MAX_POINTS, description="points per series")
        ] = 2000,
        start: StartParam = None,
        end: EndParam = None,
        axis: AxisParam = "step",
        smoothing: Annotated[float, Query(ge=0.0, lt=1.0, description="weight in [0, 1)")] = 0.0,
        method: Annotated[str, Query(description="ema or average")] = "ema",
        envelope: Annotated[
            bool, Query(description="add each bucket's min and max (full resolution)")
        ] = False,
    ) -> Response:
        if method not in METHODS:
            raise QueryError(f"method={method!r} is not one of {', '.join(METHODS)}")
        span = XAxis.create(axis, start, end)
        series = []
        for ref in select(surface, run, tag, tag_regex=tag_regex):
            entry = scalar_series(surface, ref, span, points, smoothing, method, envelope)  # type: ignore[arg-type]
            if entry is not None:
                series.append(entry)
        return json_response(
            {
                "axis": span.name,
                "start": span.start,
                "end": span.end,
                "points": points,
                "smoothing": smoothing,
                "method": method,
                "envelope": envelope,
                "series": series,
            }
        )

    @router.get("/scalars/download", summary="The same selection at full resolution, as a file")
    def download(
        request: Request,
        run: RunsParam = [],  # noqa: B006
        tag: TagsParam = [],  # noqa: B006
        tag_regex: RegexParam = None,
        start: StartParam = None,
        end: EndParam = None,
        axis: AxisParam = "step",
        format: Annotated[str, Query(description="csv or json")] = "csv",
    ) -> StreamingResponse:
        if format not in ("csv", "json"):
            raise QueryError(f"format={format!r} is not one of csv, json")
        span = XAxis.create(axis, start, end)
        refs = select(surface, run, tag, tag_regex=tag_regex)
        chunks = (
            csv_chunks(surface, refs, span)
            if format == "csv"
            else json_chunks(surface, refs, span, annotations.all())
        )
        media = "text/csv" if format == "csv" else _JSON
        return StreamingResponse(
            chunks,
            media_type=media,
            headers={"Content-Disposition": f'attachment; filename="scalars.{format}"'},
        )

    return router
