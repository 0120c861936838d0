"""sumlens serves MindInsight's routes (``/v1/mindinsight``) as MindInsight 2.3.1 answers them.

One summary base dir holds a copy of the golden MindSpore runs (``tests/data/golden``, the
repo's copy of ``shared/golden/mindspore``) and the runs of ``mindinsight_runs.py``: every
plugin, a rotated run, two ranks in one directory, a resumed training, more values than
MindInsight keeps, and a TensorBoard run (which MindInsight does not list). Then:

* ``mindinsight_probe.py`` probes the real MindInsight over it and, with ``--url``, a
  ``python -m sumlens serve`` over the same directory: the two normalized outputs must be
  equal, histogram buckets included (we re-bin as MindInsight does), except the keys that
  say how the probe ran (:data:`VOLATILE`) and the dataset_graph route of a job where
  MindInsight answers an HTTP error (500 in 2.3.1 in some set-ups);
* requests the probe does not make (pages of jobs, tensor statistics and slices, every
  scope of every graph, searches, lineage queries, and wrong parameters) go to both
  servers and must be answered alike; an error must have the same HTTP status and
  MindInsight error code (our messages are our own).

MindInsight is found through ``$MINDINSIGHT_BIN``, which ``make test`` sets.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import mindinsight_probe as probe
from helpers.mindinsight import PROBE, assert_same
from helpers.mindinsight import free_ports as _free_ports
from helpers.mindinsight import mindinsight_bin as _mindinsight_bin
from helpers.mindinsight_runs import write_runs

from sumlens.io.naming import mindinsight_order

pytestmark = pytest.mark.mindinsight

VOLATILE = ("elapsed_seconds", "load_seconds", "http_calls", "mindinsight_log")
"""Probe output that says how the probe ran, not what was shown: timings, how many polls
waiting for the load took, and MindInsight's own log (checked apart: it must be clean)."""
GOLDEN_JOBS = ("./all_plugins", "./collector", "./landscape")
OUR_JOBS = (
    "./sumlens_all_plugins",
    "./sumlens_resumed",
    "./sumlens_rotated",
    "./sumlens_sampled",
    "./sumlens_two_ranks",
)
"""Our runs MindInsight lists (not ./sumlens_tensorboard: TensorBoard files only)."""
PROBE_TIMEOUT = 240
SERVER_TIMEOUT = 60.0


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory, golden_dir: Path) -> Path:
    """The summary base dir: the golden runs and ours."""
    root = tmp_path_factory.mktemp("mindinsight_routes") / "runs"
    for run in sorted(p for p in golden_dir.iterdir() if p.is_dir()):
        shutil.copytree(run, root / run.name)
    write_runs(root)
    return root.resolve()


def _answers(url: str) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def sumlens_url(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``python -m sumlens serve`` over ``base`` on a free port, with a workspace of its own."""
    (port,) = _free_ports(1)
    workspace = tmp_path_factory.mktemp("sumlens_workspace")
    log = workspace / "serve.log"
    command = [sys.executable, "-m", "sumlens", "serve", "--summary-base-dir", str(base)]
    command += ["--port", str(port), "--workspace", str(workspace)]
    with open(log, "wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_TIMEOUT
        while not _answers(f"{url}/api/v1/health"):
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"sumlens serve did not answer:\n{log.read_text()}", pytrace=False)
            time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _run_probe(base: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(PROBE), str(base), str(out), *extra]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=PROBE_TIMEOUT, check=False
    )


@pytest.fixture(scope="module")
def probed(
    base: Path, sumlens_url: str, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any]]:
    """The probe's output for MindInsight (``mindinsight``) and for us (``sumlens``)."""
    exe = _mindinsight_bin()
    tmp = tmp_path_factory.mktemp("probe")
    (port,) = _free_ports(1)
    workspace = tmp / "workspace"
    workspace.mkdir()
    outputs = {}
    for name, extra in (
        ("mindinsight", ["--mindinsight", exe, "--port", str(port), "--workspace", str(workspace)]),
        ("sumlens", ["--url", sumlens_url]),
    ):
        out = tmp / f"{name}.json"
        done = _run_probe(base, out, *extra, "--timeout", "90")
        if done.returncode != 0:
            logs = workspace / "log"
            pytest.fail(
                f"the probe of {name} exited {done.returncode}:\n{done.stdout}\n"
                f"{done.stderr}\n(MindInsight's logs: {logs})",
                pytrace=False,
            )
        outputs[name] = json.loads(out.read_text(encoding="utf-8"))
    return outputs


LOAD_STATE = ("cache_status", "is_integrity", "plugins")
"""What a train job's listing says of its loading: MindInsight loads in the background, so
the listing the probe keeps (made before its last poll) may show a job still loading."""


def _comparable(output: dict[str, Any], mindinsight: dict[str, Any]) -> dict[str, Any]:
    """``output`` without :data:`VOLATILE`, without the dataset_graph answers of the jobs
    where MindInsight answered an HTTP error, and without :data:`LOAD_STATE` of the jobs
    MindInsight's listing showed not yet loaded."""
    kept = {key: value for key, value in output.items() if key not in VOLATILE}
    loading = {
        train_id
        for train_id, item in mindinsight["train_jobs_listing"].items()
        if item.get("cache_status") != "CACHED"
    }
    kept["train_jobs_listing"] = {
        train_id: {k: v for k, v in item.items() if train_id not in loading or k not in LOAD_STATE}
        for train_id, item in output["train_jobs_listing"].items()
    }
    kept["jobs"] = {}
    for train_id, job in output["jobs"].items():
        shown = mindinsight["jobs"].get(train_id, {}).get("dataset_graph")
        failed = isinstance(shown, dict) and "http_error" in shown
        job = {k: v for k, v in job.items() if not (failed and k == "dataset_graph")}
        if train_id in loading:
            job["train_job"] = {k: v for k, v in job["train_job"].items() if k not in LOAD_STATE}
        kept["jobs"][train_id] = job
    return kept


def test_mindinsight_lists_the_runs_and_logs_no_error(probed: dict[str, dict[str, Any]]) -> None:
    shown = probed["mindinsight"]
    assert shown["mindinsight_log"] == {"errors": [], "warnings": []}
    assert sorted(shown["jobs"]) == sorted(GOLDEN_JOBS + OUR_JOBS)


def test_every_probed_route_answers_as_mindinsight(probed: dict[str, dict[str, Any]]) -> None:
    mindinsight = probed["mindinsight"]
    assert_same(
        _comparable(mindinsight, mindinsight),
        _comparable(probed["sumlens"], mindinsight),
        "MindInsight's and sumlens' answers to the probe",
    )


def test_the_runs_show_mindinsight_reading_rules(
    probed: dict[str, dict[str, Any]], base: Path
) -> None:
    """What the comparison covers, seen in MindInsight's own answers."""
    jobs = probed["mindinsight"]["jobs"]
    sampled = jobs["./sumlens_sampled"]
    images = sampled["images"]["img/image"]["metadata"]["metadatas"]
    assert len(images) == 10 and images[-1]["step"] == 15  # 15 written: reservoir of 10
    histograms = sampled["histograms"]["w/histogram"]["histograms"]
    assert len(histograms) == 50 and histograms[-1]["step"] == 60
    resumed = jobs["./sumlens_resumed"]["scalars"]["loss/scalar"]["metadatas"]
    # step 2 again replaces step 2 only (later steps of the same file stay); the later
    # file's steps 4 to 6 replace the earlier file's
    assert [(m["step"], m["value"]) for m in resumed] == [
        (1, 1.0), (2, 102.0), (3, 3.0), (4, 204.0), (5, 205.0), (6, 206.0), (7, 207.0),
        (8, 208.0),
    ]  # fmt: skip
    ranks = jobs["./sumlens_two_ranks"]
    assert ranks["train_job"]["summary_files"] == 2
    # the file read last (by second, then name descending: rank 1 before rank 0 within a
    # second) replaces the other's values step by step
    names = [p.name for p in (base / "sumlens_two_ranks").glob("*_MS")]
    last = mindinsight_order(names)[-1]
    rank = int(last.split("summary.")[1].split(".")[1])
    values = [m["value"] for m in ranks["scalars"]["loss/scalar"]["metadatas"]]
    assert values == [10.0 * rank + step for step in (1, 2, 3)]
    assert jobs["./sumlens_rotated"]["train_job"]["summary_files"] == 3
    graph = jobs["./sumlens_all_plugins"]["graphs"]
    (normal,) = (v for k, v in graph.items() if k.startswith("graph:"))
    kinds = normal["children"]["Default"]["type_counts"]
    assert kinds["aggregation_scope"] == 2 and kinds["name_scope"] == 4  # fc, norm, mix, head


# ---------------------------------------------------------------------- further requests


@pytest.fixture(scope="module")
def servers(
    probed: dict[str, dict[str, Any]],
    base: Path,
    sumlens_url: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, Any]]:
    """A client of MindInsight (started again, after the probe stopped its own) and of us."""
    (port,) = _free_ports(1)
    workspace = tmp_path_factory.mktemp("mindinsight_workspace")
    server = probe.MindInsight(_mindinsight_bin(), str(base), port, str(workspace), False)
    try:
        server.start(0)
        clients = {
            "mindinsight": probe.Client(port),
            "sumlens": probe.Client(None, base=sumlens_url),
        }
        for client in clients.values():
            probe.wait_loaded(client, 90)
        yield clients
    finally:
        server.stop()


def _answer(client: Any, request: tuple[str, str, Any]) -> Any:
    """One request's answer, normalized as the probe does; an error as (status, code)."""
    method, path, params = request
    if method == "POST":
        status, body = client.raw(path, data=json.dumps(params).encode(), method="POST")
    else:
        status, body = client.raw(path, params)
    if status != 200:
        try:
            code = json.loads(body).get("error_code")
        except ValueError:
            code = None
        return {"http_error": status, "error_code": code}
    if path.endswith("single-image"):
        return probe.image_info(body)
    return probe.normalize(json.loads(body))


def _graph_requests(client: Any, train_id: str, tag: str, mode: str) -> list[tuple[str, str, Any]]:
    """Every scope of a graph (found by asking ``client``), one single-node path per leaf
    kind, and searches with paging."""
    params = {"train_id": train_id, "tag": tag, "mode": mode}
    requests = []
    scopes = [""]
    leaves: dict[str, str] = {}
    while scopes:
        scope = scopes.pop(0)
        asked = dict(params, name=scope) if scope else params
        requests.append(("GET", "/datavisual/graphs/nodes", asked))
        for node in client.get("/datavisual/graphs/nodes", asked)["nodes"]:
            if node["subnode_count"]:
                scopes.append(node["name"])
            else:
                leaves.setdefault(node["type"], node["name"])
    for name in leaves.values():
        requests.append(("GET", "/datavisual/graphs/single-node", dict(params, name=name)))
    for search, offset, limit in (("relu", 0, 3), ("relu", 1, 3), ("a", 2, 5), ("/", 0, 10)):
        paged = dict(params, search=search, offset=offset, limit=limit)
        requests.append(("GET", "/datavisual/graphs/nodes/names", paged))
    return requests


def _requests(client: Any, shown: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """The requests both servers get (graph scopes found by asking MindInsight)."""
    ours = "./sumlens_all_plugins"
    job = {"train_id": ours}
    requests: list[tuple[str, str, Any]] = [
        ("GET", "/datavisual/train-jobs", {"offset": 1, "limit": 3}),
        ("GET", "/datavisual/train-jobs", {"offset": 0, "limit": 0}),
        ("GET", "/datavisual/train-jobs", {"offset": -1}),
        ("GET", "/datavisual/train-jobs", {"limit": "x"}),
        ("GET", "/datavisual/train-jobs", {"train_id": "./no_such_run"}),
        ("GET", "/datavisual/plugins", {}),
        ("GET", "/datavisual/plugins", {"train_id": "./no_such_run"}),
        ("GET", "/datavisual/plugins", dict(job, manual_update="maybe")),
        ("GET", "/datavisual/single-job", dict(job, plugin_name="bogus")),
        ("GET", "/datavisual/single-job", job),
        ("GET", "/datavisual/scalar/metadata", dict(job, tag="no_such/scalar")),
        ("GET", "/datavisual/scalar/metadata", dict(job, tag="img/image")),
        ("GET", "/datavisual/histograms", dict(job, tag="loss/scalar")),
        ("GET", "/datavisual/image/metadata", dict(job, tag="w/histogram")),
        ("GET", "/datavisual/tensors", dict(job, tag="img/image")),
        (
            "GET",
            "/datavisual/scalars",
            {
                "train_id": [ours, "./collector"],
                "tag": ["loss/scalar", "loss/auto/scalar", "no_such/scalar"],
            },
        ),
        ("GET", "/datavisual/histograms", dict(job, tag="no_such/histogram")),
        ("GET", "/datavisual/histograms", dict(job, tag="const/histogram")),
        ("GET", "/datavisual/image/single-image", dict(job, tag="img/image", step=-1)),
        ("GET", "/datavisual/image/single-image", dict(job, tag="img/image", step=99)),
        ("GET", "/datavisual/image/single-image", dict(job, tag="img/image", step="x")),
        ("GET", "/datavisual/tensors", dict(job, tag="no_such/tensor")),
        ("GET", "/datavisual/tensors", dict(job, tag="t/tensor", detail="bogus")),
        ("GET", "/datavisual/tensors", dict(job, tag="cube/tensor", detail="data", step=1)),
        (
            "GET",
            "/datavisual/tensors",
            dict(job, tag="cube/tensor", detail="data", step=99, dims="[0,:,:]"),
        ),
    ]
    for tag in ("t/tensor", "cube/tensor"):
        requests.append(("GET", "/datavisual/tensors", dict(job, tag=tag, detail="stats")))
    for dims in (
        "[1,:,1:3]",
        "[:,:,:]",
        "[0,0]",
        "[-1,2,:]",
        "[0,0,0]",
        "[1,1,1]",
        "[0,5,:]",
        "0,:,:",
    ):
        query = dict(job, tag="cube/tensor", detail="data", step=2, dims=dims)
        requests.append(("GET", "/datavisual/tensors", query))
    for tag in ("./sumlens_two_ranks", "./sumlens_sampled"):
        requests.append(
            ("GET", "/datavisual/tensors", {"train_id": tag, "tag": "t/tensor", "detail": "stats"})
        )
    graph = dict(job, mode="normal")
    requests += [
        ("GET", "/datavisual/graphs/nodes", dict(graph, mode="bogus")),
        ("GET", "/datavisual/graphs/nodes", dict(graph, name="no/such/node")),
        ("GET", "/datavisual/graphs/nodes", dict(graph, tag="no_such_tag")),
        ("GET", "/datavisual/graphs/nodes", graph),
        ("GET", "/datavisual/graphs/single-node", graph),
        ("GET", "/datavisual/graphs/single-node", dict(graph, name="no/such/node")),
        ("GET", "/datavisual/graphs/nodes/names", dict(graph, limit=1001)),
        (
            "GET",
            "/datavisual/landscape/landscapes",
            {"train_id": ["bad", "./all_plugins", ours], "type": "final"},
        ),
        ("GET", "/datavisual/landscape/landscapes", dict(job, type="interval", interval_id="x")),
        ("GET", "/datavisual/landscape/intervals", {"train_id": "./all_plugins"}),
    ]
    for condition in (
        {"limit": 2, "offset": 1},
        {"sorted_name": "loss", "sorted_type": "descending"},
        {"sorted_name": "user_defined/lr", "sorted_type": "ascending"},
        {"sorted_name": "metric/accuracy"},
        {"network": {"in": ["TinyNet", "RepeatNet"]}},
        {"metric/accuracy": {"gt": 0.4}},
        {"epoch": {"ge": 2}, "lineage_type": {"eq": "model"}},
        {"summary_dir": {"not_in": ["./collector"]}, "lineage_type": {"in": ["dataset"]}},
        {"limit": "x"},
        {"limit": 0},
        {"sorted_type": "ascending"},
    ):
        requests.append(("POST", "/lineagemgr/lineages", condition))
    for train_id in sorted(shown["jobs"]):
        plugins = shown["jobs"][train_id]["plugins"]["plugins"]
        for plugin, mode in (("graph", "normal"), ("optimized_graph", "optimize")):
            for tag in plugins[plugin]:
                requests += _graph_requests(client, train_id, tag, mode)
    return requests


def test_further_requests_are_answered_as_mindinsight(
    servers: dict[str, Any], probed: dict[str, dict[str, Any]]
) -> None:
    requests = _requests(servers["mindinsight"], probed["mindinsight"])
    assert len(requests) > 100
    expected = {
        f"{i} {r[0]} {r[1]} {r[2]}": _answer(servers["mindinsight"], r)
        for i, r in enumerate(requests)
    }
    actual = {
        f"{i} {r[0]} {r[1]} {r[2]}": _answer(servers["sumlens"], r) for i, r in enumerate(requests)
    }
    assert_same(expected, actual, "MindInsight's and sumlens' answers")
