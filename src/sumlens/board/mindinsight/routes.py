"""MindInsight 2.3.1's REST routes under ``/v1/mindinsight``, with its JSON and semantics.

So that MindInsight's own tooling (and its page) can point at sumlens, and so that the real
MindInsight can check how we read the files (``tests/compat/test_mindinsight_routes.py``
compares every route's answer with MindInsight's):

* ``datavisual``: ``train-jobs`` (a page of jobs, newest first, or one job), ``plugins``,
  ``single-job``, ``scalar/metadata``, ``scalars``, ``histograms``, ``image/metadata``,
  ``image/single-image``, ``tensors`` (statistics, histogram, or a slice of one step),
  ``graphs/nodes``, ``graphs/nodes/names``, ``graphs/single-node``, ``landscape/intervals``
  and ``landscape/landscapes``;
* ``lineagemgr/lineages`` (POST, a search condition) and ``datasets/dataset_graph``.

A train job is a run with MindSpore files; runs of TensorBoard files alone are not listed.
Values are read as MindInsight reads them (:mod:`.jobs`: its sampling, its
handling of resumed and rotated files, one job per directory whatever the ranks), histograms
re-binned and tensors summarized as it does (:mod:`.values`), graphs shown as
its node tree (:mod:`.graph_nodes`), lineage as its querier (:mod:`.lineage`).
Errors answer ``{"error_code", "error_msg"}`` with MindInsight's codes and HTTP status.

Where we differ: every run the read surface serves is a job (MindInsight looks one directory
deep, at most 999 of them); a job's data is loaded when a route asks for it (MindInsight
answers "not in cache" for jobs beyond the 15 it loaded); landscape interval ids are their
epochs (MindInsight's are random per process); ``.pb`` graph files are neither listed nor
read (the read surface does not list them); damaged records are skipped and reading goes on
(MindInsight stops at the first one it cannot parse); a slice's steps must be positive.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Coroutine
from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute

from sumlens._proto import summary_pb2
from sumlens.board.data.surface import ReadSurface
from sumlens.board.mindinsight.graph_nodes import NodeGraph
from sumlens.board.mindinsight.jobs import (
    PLUGINS,
    POOL_SIZE,
    ImageValue,
    JobIndex,
    JobInfo,
    JobPool,
    LandscapeValue,
    Sample,
    TensorValue,
    Where,
    job_info,
    listing_order,
)
from sumlens.board.mindinsight.lineage import (
    ConditionError,
    JobLineage,
    check_condition,
    query,
    read_lineage,
)
from sumlens.board.mindinsight.values import (
    MAX_RESPONSE_VALUES,
    MAX_SLICED_DIMS,
    Buckets,
    display_range,
    rebin,
    statistics,
    tensor_json,
    tensor_values,
)
from sumlens.board.proto_text import data_type_name
from sumlens.board.responses import image_media_type
from sumlens.board.slicing import SliceError, parse_slice

PREFIX = "/v1/mindinsight"
MAX_JOBS_PER_PAGE = 999
MAX_NAMES_PER_PAGE = 1000
GRAPH_MODES = {"normal": "graph", "optimize": "optimized_graph"}
TOP_TAGS = {
    "graph": "ms_output_optimize.pb",
    "optimized_graph": "ms_output_optimize.pb (optimized)",
}
"""The graph tag MindInsight lists first, when present."""

Text = Annotated[str | None, Query()]
Texts = Annotated[list[str], Query()]


class MindInsightError(Exception):
    """An error MindInsight answers with ``{"error_code", "error_msg"}`` and ``status``."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.status = status


# MindInsight's error codes (its error classes, by the route that raises them)
PARAM_TYPE, PARAM_VALUE, PARAM_MISSING = "50540001", "50540002", "50540003"
TRAIN_JOB_MISSING, NODE_MISSING, PLUGIN_UNKNOWN = "50545005", "50545009", "5054500B"
GRAPH_MISSING, IMAGE_MISSING, SCALAR_MISSING = "5054500C", "5054500D", "5054500E"
HISTOGRAM_MISSING, NULL_BYTE, TENSOR_MISSING = "5054500F", "50545011", "50545012"
TOO_MANY_VALUES, STEP_NOT_KEPT, TENSOR_TOO_LARGE = "50545013", "50545014", "50545016"
LANDSCAPE_MISSING, LINEAGE_CONDITION, UNKNOWN = "50545017", "50542218", "50540000"
WRONG_PLUGIN = {"scalar": (PARAM_TYPE, 400), "histogram": (UNKNOWN, 500), "image": (UNKNOWN, 500)}
"""The error of a route asked for a tag of another plugin: MindInsight takes the values
for its own kind and fails (a scalar route on a non-number; the others crash)."""


class _Route(APIRoute):
    """A route whose :class:`MindInsightError` becomes MindInsight's error answer."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def answer(request: Request) -> Response:
            try:
                return await handler(request)
            except MindInsightError as err:
                body = {"error_code": err.code, "error_msg": str(err)}
                return JSONResponse(body, status_code=err.status)

        return answer


def json_answer(body: Any) -> Response:
    """``body`` as Flask's ``jsonify`` writes it (NaN and infinities as JS literals)."""
    return Response(json.dumps(body, allow_nan=True), media_type="application/json")


def _need(value: str | None, name: str) -> str:
    """``value``, which the route cannot do without."""
    if not value:
        raise MindInsightError(PARAM_MISSING, f"{name!r} is required")
    return value


def _graph_plugin(mode: str) -> str:
    if mode not in GRAPH_MODES:
        raise MindInsightError(PARAM_VALUE, f"mode={mode!r} is not one of normal, optimize")
    return GRAPH_MODES[mode]


def _int(value: str, name: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise MindInsightError(PARAM_TYPE, f"{name}={value!r} must be an integer") from None


def _page(offset: str | None, limit: str | None, most: int, default: int) -> tuple[int, int]:
    """``(offset, limit)``: ``offset`` counts pages of ``limit`` items."""
    first = 0 if offset is None else _int(offset, "offset")
    if first < 0:
        raise MindInsightError(PARAM_VALUE, "offset must be 0 or more")
    size = default if limit is None else _int(limit, "limit")
    if not 1 <= size <= most:
        raise MindInsightError(PARAM_VALUE, f"limit must be in [1, {most}]")
    return first, size


def _flag(value: str, name: str) -> bool:
    if value.lower() not in ("true", "false"):
        raise MindInsightError(PARAM_VALUE, f"{name} must be 'true' or 'false'")
    return value.lower() == "true"


class _Jobs:
    """The train jobs of a read surface, their indexes (:class:`JobPool`) and their lineage."""

    def __init__(self, surface: ReadSurface) -> None:
        self.surface = surface
        self.pool = JobPool(surface)
        self._lineage: dict[str, tuple[Any, JobLineage | None]] = {}
        self._lineage_lock = threading.Lock()

    def listing(self) -> list[JobInfo]:
        """Every train job, newest first."""
        found = [job_info(run["id"], self.surface.files(run["id"])) for run in self.surface.runs()]
        return listing_order([info for info in found if info is not None])

    def info(self, train_id: str) -> JobInfo | None:
        """The listing entry of one job (None when there is no such job)."""
        if not self.surface.has_run(train_id):
            return None
        return job_info(train_id, self.surface.files(train_id))

    def index(self, train_id: str) -> JobIndex:
        """The job's values; MindInsight's error when it has none to show."""
        job = self.pool.index(train_id) if self.info(train_id) else None
        if job is None:
            raise MindInsightError(TRAIN_JOB_MISSING, f"train job {train_id!r} has no values")
        return job

    def lineage(self, info: JobInfo) -> JobLineage | None:
        """The job's lineage, read again only when its lineage files changed or one of
        them could not be read."""
        key = (info.update_time, info.lineage)
        with self._lineage_lock:
            cached = self._lineage.get(info.train_id)
            if cached is not None and cached[0] == key:
                return cached[1]
            found = [self.surface.record_file(info.train_id, name) for name, _, _ in info.lineage]
            files = [records for records in found if records is not None]
            lineage, whole = read_lineage(info.train_id, files, info.update_time)
            if whole and len(files) == len(found):
                self._lineage[info.train_id] = (key, lineage)
            else:
                self._lineage.pop(info.train_id, None)
            return lineage

    def lineages(self) -> list[JobLineage]:
        """The lineage of every job that has one, in the listing's order."""
        jobs = self.listing()
        with self._lineage_lock:
            for gone in set(self._lineage) - {info.train_id for info in jobs}:
                del self._lineage[gone]
        return [found for info in jobs if (found := self.lineage(info)) is not None]


def _plugins(job: JobIndex | None) -> dict[str, list[str]]:
    """Each plugin's tags (sorted, MindInsight's favourite graph first); all empty when
    the job is not loaded."""
    plugins: dict[str, list[str]] = {}
    for plugin in PLUGINS:
        tags = [] if job is None else job.tags(plugin)
        top = TOP_TAGS.get(plugin)
        if top in tags:
            tags.remove(top)
            tags.insert(0, top)
        plugins[plugin] = tags
    return plugins


def _job_item(info: JobInfo, job: JobIndex | None) -> dict[str, Any]:
    return {
        "train_id": info.train_id,
        "relative_path": info.train_id,
        "create_time": info.create_time.strftime("%Y-%m-%d %H:%M:%S"),
        "update_time": info.update_time.strftime("%Y-%m-%d %H:%M:%S"),
        "profiler_dir": None,
        "cache_status": "NOT_IN_CACHE" if job is None else "CACHED",
        "profiler_type": "",
        "summary_files": info.summary_files,
        "graph_files": 0,
        "lineage_files": info.lineage_files,
        "dump_dir": None,
        "is_integrity": True if job is None else job.integral,
        "plugins": _plugins(job),
    }


def _samples(job: JobIndex, tag: str, plugin: str, missing: str) -> list[Sample]:
    """The kept values of ``tag``; ``missing`` is the error code of an unknown tag. A tag
    of another plugin fails as in MindInsight, which uses its values as this plugin's."""
    kind, found = job.samples(tag)
    if found is None:
        raise MindInsightError(missing, f"{job.train_id!r} has no {plugin} {tag!r}")
    if kind != plugin:
        code, status = WRONG_PLUGIN.get(plugin, (missing, 400))
        raise MindInsightError(code, f"{tag!r} holds {kind} values, not {plugin}", status)
    return found


def _record(job: JobIndex, where: Where, missing: str) -> summary_pb2.Event:
    """The event a kept value was read from; when its file no longer holds it (changed
    since it was read) or cannot be read now, the route's error for a missing value."""
    payload = job.payload(where)
    if payload is None:
        message = f"{where.file!r} of {job.train_id!r} changed since it was read, or cannot be read"
        raise MindInsightError(missing, message)
    return summary_pb2.Event.FromString(payload)


def _value_of(event: summary_pb2.Event, tag: str) -> Any:
    """The value of ``tag`` (``<name>/<plugin>``) in ``event``."""
    name = tag.rsplit("/", 1)[0]
    found = next((value for value in event.summary.value if value.tag == name), None)
    if found is None:
        raise MindInsightError(UNKNOWN, f"the record of {tag!r} no longer holds it", 500)
    return found


def _check_dims(dims: str) -> None:
    """MindInsight's slices: ``[...]`` with at most two entries that hold a ``:``."""
    text = dims.strip()
    if not (text.startswith("[") and text.endswith("]")):
        raise MindInsightError(PARAM_VALUE, f"dims={dims!r} must look like [0,:,:]")
    if sum(":" in part for part in text[1:-1].split(",")) > MAX_SLICED_DIMS:
        raise MindInsightError(PARAM_VALUE, f"dims={dims!r} leaves more than two dims whole")


def _slice(values: np.ndarray, dims: str) -> np.ndarray:
    """``values[dims]``: one entry per dimension (an empty tensor is returned whole)."""
    if values.size == 0:
        return values
    try:
        index = parse_slice(dims.strip(), values.shape)
    except SliceError as err:
        raise MindInsightError(PARAM_VALUE, str(err)) from None
    if len(index) != values.ndim:
        raise MindInsightError(PARAM_VALUE, f"dims={dims!r} must name all {values.ndim} dims")
    return np.asarray(values[index])


def _landscape_json(
    jobs: _Jobs, job: JobIndex, kind: str, interval_id: str | None
) -> dict[str, Any] | None:
    for tag in job.tags("loss_landscape"):
        for sample in _samples(job, tag, "loss_landscape", LANDSCAPE_MISSING):
            value: LandscapeValue = sample.value
            final = not value.intervals
            if not (kind == "final" and final) and not (
                kind == "interval" and not final and _interval_id(value) == interval_id
            ):
                continue
            landscape = _value_of(_record(job, value.where, LANDSCAPE_MISSING), tag).loss_landscape
            found: dict[str, Any] = {
                "train_id": job.train_id,
                "points": _points(landscape.landscape),
            }
            if not final:
                path = landscape.loss_path
                found["path"] = {**_points(path.points), "intervals": list(path.intervals)}
            found["metadata"] = {
                "decomposition": landscape.metadata.decomposition,
                "unit": landscape.metadata.unit,
                "step_per_epoch": landscape.metadata.step_per_epoch,
                **_landscape_lineage(jobs, job.train_id),
            }
            found["convergence_point"] = _convergence(landscape.convergence_point)
            return found
    return None


def _interval_id(value: LandscapeValue) -> str:
    return "-".join(str(epoch) for epoch in value.intervals)


def _points(point: Any) -> dict[str, Any]:
    return {axis: _tensor_list(getattr(point, axis)) for axis in ("x", "y", "z")}


def _tensor_list(tensor: Any) -> Any:
    return tensor_values(tensor.dims, tensor.float_data).tolist()


def _convergence(point: Any) -> list[Any]:
    axes = [_tensor_list(getattr(point, axis)) for axis in ("x", "y", "z")]
    if any(not axis for axis in axes):
        return [0, 0, 0]
    return [axis[0] for axis in axes]


def _landscape_lineage(jobs: _Jobs, train_id: str) -> dict[str, Any]:
    info = jobs.info(train_id)
    lineage = jobs.lineage(info) if info is not None else None
    if lineage is None:
        return {"network": None, "learning_rate": None, "optimizer": None, "metric": {}}
    row = lineage.model_lineage()
    rate, loss = row["learning_rate"], row["loss"]
    return {
        "network": row["network"],
        "learning_rate": None if rate is None else format(rate, "6e"),
        "optimizer": row["optimizer"],
        "metric": row["metric"],
        "loss": None if loss is None else format(loss, "6e"),
    }


def _graph(job: JobIndex, tag: str | None, plugin: str) -> NodeGraph:
    tags = job.tags(plugin)
    if not tags or (tag is not None and tag not in tags):
        raise MindInsightError(GRAPH_MISSING, f"{job.train_id!r} has no {plugin} {tag!r}")
    return _samples(job, tag or tags[0], plugin, GRAPH_MISSING)[0].value


def _node(graph: NodeGraph, name: str) -> str:
    """``name``, a node of ``graph`` (else MindInsight's error for a missing node)."""
    if not graph.has(name):
        raise MindInsightError(NODE_MISSING, f"the graph has no node {name!r}")
    return name


def make_mindinsight_router(surface: ReadSurface) -> APIRouter:
    """MindInsight's routes over the runs of ``surface`` (read only through it)."""
    router = APIRouter(prefix=PREFIX, route_class=_Route, tags=["mindinsight"])
    jobs = _Jobs(surface)

    def job_graph(train_id: str | None, tag: str | None, mode: str) -> NodeGraph:
        """The graph a graph route asks for (its ``mode`` checked first, as MindInsight)."""
        plugin = _graph_plugin(mode)
        return _graph(jobs.index(_need(train_id, "train_id")), tag, plugin)

    @router.get("/datavisual/train-jobs", summary="A page of train jobs (newest first), or one")
    def train_jobs(offset: Text = None, limit: Text = None, train_id: Text = None) -> Response:
        first, size = _page(offset, limit, MAX_JOBS_PER_PAGE, 10)
        listing = jobs.listing()
        loaded_first = {info.train_id for info in listing[:POOL_SIZE]}

        def item(info: JobInfo) -> dict[str, Any]:
            loaded = info.train_id in loaded_first or jobs.pool.cached(info.train_id)
            return _job_item(info, jobs.pool.index(info.train_id) if loaded else None)

        if train_id is not None:
            chosen = [info for info in listing if info.train_id == train_id]
        else:
            chosen = listing[first * size : (first + 1) * size]
        status = surface.status()
        return json_answer(
            {
                "name": os.path.basename(os.path.realpath(status["base_dir"])),
                "total": len(chosen) if train_id is not None else len(listing),
                "train_jobs": [item(info) for info in chosen],
                "load_status": "loading" if status["loading"] else "loaded",
            }
        )

    @router.get("/datavisual/plugins", summary="The tags of a train job, per plugin")
    def plugins(train_id: Text = None, manual_update: str = "false") -> Response:
        train_id = _need(train_id, "train_id")
        if "\0" in train_id:
            raise MindInsightError(NULL_BYTE, "train_id holds a null byte")
        if jobs.info(train_id) is None:
            raise MindInsightError(TRAIN_JOB_MISSING, f"no train job {train_id!r}")
        load = _flag(manual_update, "manual_update") or jobs.pool.cached(train_id)
        return json_answer({"plugins": _plugins(jobs.pool.index(train_id) if load else None)})

    @router.get("/datavisual/single-job", summary="A train job's tags of one plugin")
    def single_job(train_id: Text = None, plugin_name: Text = None) -> Response:
        plugin_name = _need(plugin_name, "plugin_name")
        train_id = _need(train_id, "train_id")
        if plugin_name not in PLUGINS:
            raise MindInsightError(PLUGIN_UNKNOWN, f"plugin_name must be one of {list(PLUGINS)}")
        job = jobs.index(train_id)
        tags = job.tags(plugin_name)
        return json_answer({"train_jobs": [{"id": train_id, "name": train_id, "tags": tags}]})

    @router.get("/datavisual/scalar/metadata", summary="The kept scalars of a tag")
    def scalar_metadata(train_id: Text = None, tag: Text = None) -> Response:
        train_id, tag = _need(train_id, "train_id"), _need(tag, "tag")
        found = _samples(jobs.index(train_id), tag, "scalar", SCALAR_MISSING)
        return json_answer({"metadatas": [_scalar(sample) for sample in found]})

    @router.get("/datavisual/scalars", summary="The kept scalars of several jobs and tags")
    def scalars(train_id: Texts = [], tag: Texts = []) -> Response:  # noqa: B006
        answer = []
        for job_id in train_id:
            try:
                job = jobs.index(job_id)
            except MindInsightError:
                continue
            for name in tag:
                try:
                    found = _samples(job, name, "scalar", SCALAR_MISSING)
                except MindInsightError as err:
                    if err.code == SCALAR_MISSING:
                        continue
                    raise
                values = [_scalar(sample) for sample in found]
                answer.append({"train_id": job_id, "tag": name, "values": values})
        return json_answer({"scalars": answer})

    @router.get("/datavisual/histograms", summary="The kept histograms of a tag, re-binned")
    def histograms(train_id: Text = None, tag: Text = None) -> Response:
        train_id, tag = _need(train_id, "train_id"), _need(tag, "tag")
        found = _samples(jobs.index(train_id), tag, "histogram", HISTOGRAM_MISSING)
        shown = display_range([sample.value for sample in found])
        listed = [
            {"wall_time": s.wall_time, "step": s.step, "buckets": rebin(s.value, *shown)}
            for s in found
        ]
        return json_answer({"train_id": train_id, "tag": tag, "histograms": listed})

    @router.get("/datavisual/image/metadata", summary="The kept images of a tag: steps, sizes")
    def image_metadata(train_id: Text = None, tag: Text = None) -> Response:
        train_id, tag = _need(train_id, "train_id"), _need(tag, "tag")
        found = _samples(jobs.index(train_id), tag, "image", IMAGE_MISSING)
        listed = []
        for sample in found:
            image: ImageValue = sample.value
            listed.append(
                {
                    "wall_time": sample.wall_time,
                    "step": sample.step,
                    "width": image.width,
                    "height": image.height,
                }
            )
        return json_answer({"metadatas": listed})

    @router.get("/datavisual/image/single-image", summary="One image's bytes (step -1: newest)")
    def single_image(train_id: Text = None, tag: Text = None, step: Text = None) -> Response:
        train_id, tag = _need(train_id, "train_id"), _need(tag, "tag")
        wanted = _int(_need(step, "step"), "step")
        job = jobs.index(train_id)
        found = _samples(job, tag, "image", IMAGE_MISSING)
        chosen = found[-1:] if wanted == -1 else [s for s in found if s.step == wanted][:1]
        if not chosen:
            raise MindInsightError(IMAGE_MISSING, f"{tag!r} has no kept image at step {wanted}")
        event = _record(job, chosen[0].value.where, IMAGE_MISSING)
        encoded = _value_of(event, tag).image.encoded_image
        media = image_media_type(encoded)
        return Response(encoded, media_type=media or "application/octet-stream")

    @router.get("/datavisual/tensors", summary="Tensors: statistics, histograms or a slice")
    def tensors(
        train_id: Texts = [],  # noqa: B006
        tag: Texts = [],  # noqa: B006
        step: Text = None,
        dims: Text = None,
        detail: Text = None,
    ) -> Response:
        if not train_id or not tag:
            raise MindInsightError(PARAM_MISSING, "train_id and tag are required")
        answer = []
        for job_id in train_id:
            job = jobs.index(job_id)
            for name in tag:
                found = _samples(job, name, "tensor", TENSOR_MISSING)
                if detail in (None, "stats"):
                    values = [_tensor_stats(sample, detail == "stats") for sample in found]
                elif detail == "data":
                    at, shape = _need(step, "step"), _need(dims, "dims")
                    values = [_tensor_data(job, name, found, at, shape)]
                elif detail == "histogram":
                    values = _tensor_histograms(found)
                else:
                    raise MindInsightError(PARAM_VALUE, f"detail={detail!r} is not supported")
                answer.append({"train_id": job_id, "tag": name, "values": values})
        return json_answer({"tensors": answer})

    @router.get("/datavisual/graphs/nodes", summary="The nodes directly inside a scope")
    def graph_nodes(
        train_id: Text = None, tag: Text = None, mode: str = "normal", name: Text = None
    ) -> Response:
        graph = job_graph(train_id, tag, mode)
        return json_answer({"nodes": graph.list_scope(_node(graph, name) if name else "")})

    @router.get("/datavisual/graphs/nodes/names", summary="Nodes whose name ends in a pattern")
    def graph_names(
        train_id: Text = None,
        tag: Text = None,
        mode: str = "normal",
        search: Text = None,
        offset: Text = None,
        limit: Text = None,
    ) -> Response:
        graph = job_graph(train_id, tag, mode)
        first, size = _page(offset, limit, MAX_NAMES_PER_PAGE, 100)
        found = graph.search(search)[first * size : first * size + size]
        return json_answer({"nodes": graph.tree(found)})

    @router.get("/datavisual/graphs/single-node", summary="The scopes down to one node")
    def graph_single_node(
        train_id: Text = None, tag: Text = None, mode: str = "normal", name: Text = None
    ) -> Response:
        graph = job_graph(train_id, tag, mode)
        return json_answer(graph.path_to(_node(graph, _need(name, "name"))))

    @router.get("/datavisual/landscape/intervals", summary="The intervals of train landscapes")
    def landscape_intervals(train_id: Text = None) -> Response:
        job = jobs.index(_need(train_id, "train_id"))
        intervals: list[dict[str, Any]] = []
        for tag in job.tags("loss_landscape"):
            for sample in _samples(job, tag, "loss_landscape", LANDSCAPE_MISSING):
                value: LandscapeValue = sample.value
                if value.intervals:
                    ends = [value.intervals[0], value.intervals[-1]]
                    intervals.append({"id": _interval_id(value), "value": ends})
        intervals.sort(key=lambda interval: interval["value"][0])
        return json_answer({"intervals": intervals})

    @router.get("/datavisual/landscape/landscapes", summary="A train or final landscape per job")
    def landscapes(
        train_id: Texts = [],  # noqa: B006
        kind: Annotated[str, Query(alias="type")] = "interval",
        interval_id: Text = None,
    ) -> Response:
        answer = []
        for job_id in train_id:
            if not job_id.startswith("./"):
                answer.append({"error_code": PARAM_VALUE, "train_id": job_id})
                continue
            try:
                job = jobs.index(job_id)
            except MindInsightError:
                answer.append({"error_code": TRAIN_JOB_MISSING, "train_id": job_id})
                continue
            found = _landscape_json(jobs, job, kind, interval_id)
            answer.append(found or {"error_code": LANDSCAPE_MISSING, "train_id": job_id})
        return json_answer({"landscapes": answer})

    @router.post("/lineagemgr/lineages", summary="The lineage of every job, searched and sorted")
    async def lineages(request: Request) -> Response:
        body = await request.body()
        try:
            condition = json.loads(body) if body else {}
        except (ValueError, RecursionError):  # RecursionError: nested past Python's stack
            raise MindInsightError(PARAM_VALUE, "the body is not JSON that can be read") from None
        try:
            check_condition(condition)
        except ConditionError as err:
            raise MindInsightError(LINEAGE_CONDITION, str(err)) from None
        return json_answer(query(jobs.lineages(), condition))

    @router.get("/datasets/dataset_graph", summary="The dataset graph of a job's lineage")
    def dataset_graph(train_id: str = "") -> Response:
        if not train_id.startswith("./") or len(train_id.split("/")) > 2:
            raise MindInsightError(PARAM_VALUE, "train_id must be ./<directory>")
        rows = query(jobs.lineages(), {"summary_dir": {"in": [train_id]}})["object"]
        graph = rows[0]["dataset_graph"] if rows else None
        return json_answer({"dataset_graph": graph, "summary_dir": train_id} if graph else {})

    return router


def _scalar(sample: Sample) -> dict[str, Any]:
    value = float(sample.value)
    shown = value if np.isfinite(value) else None
    return {"wall_time": sample.wall_time, "step": sample.step, "value": shown}


def _tensor_stats(sample: Sample, with_statistics: bool) -> dict[str, Any]:
    summary = sample.value.summary
    value: dict[str, Any] = {
        "dims": list(summary.dims),
        "data_type": data_type_name(summary.data_type),
    }
    if with_statistics:
        value["statistics"] = None if summary.too_large else summary.stats.as_json(summary.stats)
    return {"wall_time": sample.wall_time, "step": sample.step, "value": value}


def _tensor_data(job: JobIndex, tag: str, found: list[Sample], at: str, dims: str) -> Any:
    _check_dims(dims)
    step = _int(at, "step")
    chosen = next((sample for sample in found if sample.step == step), None)
    if chosen is None:
        raise MindInsightError(STEP_NOT_KEPT, f"step {step} of {tag!r} is not kept")
    tensor: TensorValue = chosen.value
    summary = tensor.summary
    if summary.too_large:
        raise MindInsightError(TENSOR_TOO_LARGE, f"step {step} of {tag!r} is too large to show")
    proto = _value_of(_record(job, tensor.where, TENSOR_MISSING), tag).tensor
    part = _slice(tensor_values(proto.dims, proto.float_data), dims)
    if part.ndim == 0 and not np.isfinite(part):  # MindInsight fails to mark a lone NaN
        raise MindInsightError(UNKNOWN, f"the value at {dims} is not finite", 500)
    if part.size > MAX_RESPONSE_VALUES:
        raise MindInsightError(
            TOO_MANY_VALUES, f"the slice holds {part.size} values (at most {MAX_RESPONSE_VALUES})"
        )
    value = {
        "dims": list(summary.dims),
        "data_type": data_type_name(summary.data_type),
        "data": tensor_json(part),
        "statistics": statistics(part).as_json(summary.stats),
    }
    return {"wall_time": chosen.wall_time, "step": chosen.step, "value": value}


def _tensor_histograms(found: list[Sample]) -> list[dict[str, Any]]:
    histograms: list[Buckets] = []
    for sample in found:
        if sample.value.summary.too_large:
            raise MindInsightError(TENSOR_TOO_LARGE, f"step {sample.step} is too large to show")
        histograms.append(sample.value.summary.histogram)
    shown = display_range(histograms)
    listed = []
    for sample, histogram in zip(found, histograms, strict=True):
        summary = sample.value.summary
        value = {
            "dims": list(summary.dims),
            "data_type": data_type_name(summary.data_type),
            "histogram_buckets": rebin(histogram, *shown),
            "statistics": summary.stats.as_json(summary.stats),
        }
        listed.append({"wall_time": sample.wall_time, "step": sample.step, "value": value})
    return listed
