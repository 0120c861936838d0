"""The graph view's route under ``/api/v1``: one network or dataset graph, ready to lay out.

``GET /api/v1/graph?run=&tag=&plugin=&rank=&step=`` answers with the graph as
:mod:`sumlens.board.query.graph_model` builds it (nodes with their scope, type, attributes,
shapes and inputs; the scope tree with counts), plus the ranks and kept steps of that tag,
so the page can offer them. A graph is named by where its record lies (run, rank, step,
wall time, record offset and length): the last few answers are kept under that name, and
it is the answer's ETag, so a page asking again while a run grows gets ``304 Not
Modified`` until the graph itself changes.

``GET /api/v1/graph/stats?run=&tag=&rank=&step=`` answers with what a ``run_metadata``
value (TensorBoard's ``RunMetadata``, written beside a ``GraphDef``: torch's ``add_graph``
writes tag ``step1``) says of each node: its devices, compute time and memory
(:func:`sumlens.io.tb_graph.node_stats`), by node name, for the side panel.

The page lays graphs out with Graphviz compiled to WebAssembly, which ``make`` installs
with npm into ``static/vendor`` (see package.json at the repository root). When it is
missing, the server says so once in its log, and every answer carries the same line in
``layout_library`` for the page to show.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Annotated

import orjson
from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from sumlens._proto import anf_ir_pb2, lineage_pb2, tensorboard_graph_pb2
from sumlens.board.data.surface import ReadSurface
from sumlens.board.errors import NotFound, QueryError
from sumlens.board.query.graph_model import dataset_view, network_view
from sumlens.board.query.lookup import pick_series, step_index
from sumlens.board.responses import json_response
from sumlens.io.tb_graph import node_stats

_log = logging.getLogger("sumlens.board")

GRAPH_PLUGINS = ("graph", "dataset_graph")
STATS_PLUGIN = "run_metadata"
LAYOUT_MODULE = Path("vendor/node_modules/@hpcc-js/wasm-graphviz/dist/index.js")
"""The Graphviz ES module, relative to the static folder (the page imports the same path)."""
STATIC_DIR = Path(__file__).parent.parent / "static"
CACHED_ANSWERS = 8


def layout_library_problem(static_dir: Path = STATIC_DIR) -> str | None:
    """One line saying the layout library is not installed, or None when it is."""
    path = static_dir / LAYOUT_MODULE
    if path.is_file():
        return None
    return (
        f"The graph layout library is not installed ({path} is missing): run `make` in the "
        "sumlens repository (it runs `npm ci`), or install a sumlens wheel that ships it."
    )


class _AnswerCache:
    """The last few encoded answers, by what names their graph."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answers: OrderedDict[str, bytes | memoryview] = OrderedDict()

    def get(self, key: str) -> bytes | memoryview | None:
        with self._lock:
            answer = self._answers.get(key)
            if answer is not None:
                self._answers.move_to_end(key)
            return answer

    def put(self, key: str, answer: bytes | memoryview) -> None:
        with self._lock:
            self._answers[key] = answer
            while len(self._answers) > CACHED_ANSWERS:
                self._answers.popitem(last=False)


def make_graph_router(surface: ReadSurface) -> APIRouter:
    """The graph view's routes over ``surface``'s runs."""
    router = APIRouter(prefix="/api/v1")
    cache = _AnswerCache()
    problem = layout_library_problem()
    if problem:
        _log.warning("%s", problem)

    @router.get("/graph", summary="A network or dataset graph: nodes, scopes, shapes, inputs")
    def graph(
        request: Request,
        run: Annotated[str, Query(description="run id, e.g. ./ or ./a/b")],
        tag: Annotated[str, Query(description="the graph's tag")],
        plugin: Annotated[str, Query(description="graph or dataset_graph")] = "graph",
        rank: Annotated[int | None, Query(description="the rank (default: the first)")] = None,
        step: Annotated[int | None, Query(description="the step (default: newest)")] = None,
    ) -> Response:
        if plugin not in GRAPH_PLUGINS:
            raise QueryError(f"plugin={plugin!r} is not one of {', '.join(GRAPH_PLUGINS)}")
        chosen = pick_series(surface, run, plugin, tag, rank)
        index = step_index(chosen, step)
        steps = chosen.items["step"]
        item = chosen.items[index]
        ranks = [samples.rank for samples in surface.samples(run, plugin, tag)]
        library = layout_library_problem()
        where = [run, plugin, tag, chosen.rank, *(item[f].item() for f in item.dtype.names)]
        named = orjson.dumps([where, steps.tolist(), ranks, library])
        etag = f'"{hashlib.sha1(named).hexdigest()[:20]}"'
        headers = {"ETag": etag, "Cache-Control": "no-cache"}
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers=headers)
        cached = cache.get(etag)
        if cached is not None:
            return Response(cached, media_type="application/json", headers=headers)
        event = surface.value(chosen, index)
        value = None if event is None else event.value
        if isinstance(value, anf_ir_pb2.GraphProto):
            drawn = network_view(value)
        elif isinstance(value, lineage_pb2.DatasetGraph):
            drawn = dataset_view(value)
        else:
            raise NotFound(f"{plugin} tag={tag!r} at step {int(steps[index])} holds no graph")
        answer = json_response(
            {
                "run": run,
                "plugin": plugin,
                "tag": tag,
                "rank": chosen.rank,
                "step": int(steps[index]),
                "wall": float(chosen.items["wall"][index]),
                "ranks": ranks,
                "steps": steps.tolist(),
                "layout_library": library,
                "graph": drawn,
            }
        )
        cache.put(etag, answer.body)
        answer.headers.update(headers)
        return answer

    @router.get("/graph/stats", summary="What a run's RunMetadata says of each graph node")
    def graph_stats(
        run: Annotated[str, Query(description="run id, e.g. ./ or ./a/b")],
        tag: Annotated[str, Query(description="the run_metadata tag, e.g. step1")],
        rank: Annotated[int | None, Query(description="the rank (default: the first)")] = None,
        step: Annotated[int | None, Query(description="the step (default: newest)")] = None,
    ) -> Response:
        chosen = pick_series(surface, run, STATS_PLUGIN, tag, rank)
        index = step_index(chosen, step)
        steps = chosen.items["step"]
        event = surface.value(chosen, index)
        value = None if event is None else event.value
        if not isinstance(value, tensorboard_graph_pb2.RunMetadata):
            raise NotFound(f"run_metadata tag={tag!r} at step {int(steps[index])} is not readable")
        stats = node_stats(value)
        return json_response(
            {
                "run": run,
                "tag": tag,
                "rank": chosen.rank,
                "step": int(steps[index]),
                "steps": steps.tolist(),
                "devices": [device.device for device in value.step_stats.dev_stats],
                "nodes": {name: entry.to_json() for name, entry in stats.items()},
            }
        )

    return router
