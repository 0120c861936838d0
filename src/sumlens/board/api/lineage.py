"""The lineage view's routes under ``/api/v1``: every run's lineage as one table, and the
dataset graphs of chosen runs.

``GET /lineage`` answers, for every run that recorded lineage, its fields
(:mod:`sumlens.board.query.lineage_values`) as a columnar table: the run ids, and per column
its id, label, kind (hyper, metric, dataset, model, custom), type (number or text) and one
value per run. Numbers stay numbers. A quantity recorded under several names (``lr`` as
TensorBoard's hparams, custom lineage and MindSpore's ``learning_rate``) is one column
(:mod:`sumlens.board.query.lineage_fold`), whose ``sources`` list the fields folded into it
(id, label, what recorded it) and ``held`` says, per run, which of them held its value
(bit ``i`` for ``sources[i]``). A run's lineage files are read through the read
surface (:meth:`~sumlens.board.data.surface.ReadSurface.record_file`) once and kept until
they change (name, size or modification time as the surface last saw them); the encoded
table is kept per surface version, so at 10,000 runs a repeated request costs nothing and
a new one re-reads only the runs that changed; over a loading surface the table is first
read in the background as soon as its first pass is over. The answer's ``key`` names the
table's content: ``?known=<key>`` answers ``{"key": ..., "unchanged": true}`` when nothing
changed, so a page polling it does not download the table again.

A run that recorded TensorBoard's hyper-parameters is a row too, beside or with its
MindSpore lineage (:mod:`sumlens.board.query.hparams_values`; its messages are read again
when another arrives, its metrics on every new surface version). The run torch's
``add_hparams`` makes in a directory named by the time is shown as its parent run's row
when the parent is a run holding no hyper-parameters of its own and no other such
sub-run (:func:`~sumlens.board.query.hparams_values.time_parent` says why); several of them
are several trials, each its own row.

``GET /dataset-graph?run=...`` (repeatable) gives each run's dataset graph as
:func:`~sumlens.board.mindinsight.lineage.dataset_graph_json` shapes it (null without one).
"""

from __future__ import annotations

import threading
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response

from sumlens.board.data.surface import Polling, ReadSurface
from sumlens.board.errors import NotFound, QueryError
from sumlens.board.query.lineage_table import LineageIndex
from sumlens.board.responses import json_response

MAX_GRAPH_RUNS = 50
"""Runs one dataset-graph request may name."""


def make_lineage_router(surface: ReadSurface) -> APIRouter:
    """The lineage view's routes over ``surface``'s runs."""
    router = APIRouter(prefix="/api/v1")
    index = LineageIndex(surface)

    def warm(loading: Polling) -> None:
        """Read every run's lineage once the first loading pass is done, so the first visit
        of the Lineage view does not wait for thousands of files (seconds at 10,000 runs)."""
        while not loading.stopped:
            if loading.wait_for_pass(1, timeout=5.0):
                index.table()
                return

    if isinstance(surface, Polling):  # a surface held in memory has nothing to wait for
        threading.Thread(
            target=warm, args=(surface,), name="sumlens-lineage-warm", daemon=True
        ).start()

    @router.get("/lineage", summary="Every run's lineage fields as a columnar table")
    def lineage(
        known: Annotated[
            str | None, Query(description="the key of the table the page has", max_length=64)
        ] = None,
    ) -> Response:
        key, body = index.table()
        if known == key:
            return json_response({"key": key, "unchanged": True})
        return Response(body, media_type="application/json")

    @router.get("/dataset-graph", summary="The dataset graph of each run named")
    def dataset_graph(
        run: Annotated[list[str], Query(description="run ids (repeatable)")] = [],  # noqa: B006
    ) -> Response:
        if not run:
            raise QueryError("run=[] names no run: give at least one run id")
        if len(run) > MAX_GRAPH_RUNS:
            raise QueryError(f"run= names {len(run)} runs: give at most {MAX_GRAPH_RUNS}")
        graphs = []
        for name in dict.fromkeys(run):
            if not surface.has_run(name):
                raise NotFound(f"run={name!r} is not a run being served")
            found = index.run(name)
            graphs.append({"run": name, "graph": None if found is None else found.graph})
        return json_response({"graphs": graphs})

    return router
