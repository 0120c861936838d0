"""``GET /api/v1/graph`` on the real server: graphs sumlens and MindSpore wrote, the dataset
graph, crafted graphs, and bad parameters."""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
import torch
from helpers.board import free_port, get_json, running_server, wait_until
from helpers.graph_data import Net

from sumlens import SummaryRecord
from sumlens._proto import anf_ir_pb2
from sumlens.board.api.graph import layout_library_problem
from sumlens.board.settings import BoardSettings
from sumlens.graph import from_module

MARKUP = "<img src=x onerror=alert(1)>"
MS_GRAPH_TAG = "events.out.events.summary.1795304162.0.vm_MS"


def crafted_graph() -> anf_ir_pb2.GraphProto:
    """Two operators, one named with markup, and an input that names nothing."""
    graph = anf_ir_pb2.GraphProto(name=MARKUP)
    first = graph.node.add(name="1", op_type="Add", scope="Default/" + MARKUP)
    first.full_name = f"Default/{MARKUP}/Add-op0"
    first.input.add(name="w")
    second = graph.node.add(name="2", op_type=MARKUP, scope="Default", full_name="Default/x-op1")
    second.input.add(name="1")
    second.input.add(name="nothing", type=anf_ir_pb2.InputProto.CONTROL_EDGE)
    graph.parameters.add(name="w")
    deep = graph.node.add(name="3", op_type="Deep", full_name="/".join(["s"] * 3000))
    deep.input.add(name="2")
    return graph


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, golden_dir: Path) -> Iterator[str]:
    root = tmp_path_factory.mktemp("graphapi")
    base = root / "base"
    for name in ("all_plugins", "collector"):
        shutil.copytree(golden_dir / name, base / name)
    with SummaryRecord(base / "ours") as record:
        record.add_value("graph", "net", from_module(Net(), (torch.zeros(2, 3, 8, 8),)))
        record.add_value("scalar", "loss", 1.0)
        record.record(1)
        record.add_value("graph", "crafted", crafted_graph())  # same tag (the file), step 2
        record.record(2)
    (root / "secret.txt").write_text("secret")
    settings = BoardSettings.create(base, port=free_port(), workspace=root / "ws")
    with running_server(settings) as url:
        wait_until(lambda: len(get_json(f"{url}/api/v1/runs")["runs"]) == 3)
        yield url


def _get(url: str, **params) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(f"{url}/api/v1/graph?{urlencode(params)}", timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _graph_tag(url: str, run: str) -> str:
    """The graph tag of ``run`` (graphs are tagged by the file that holds them)."""
    runs = get_json(f"{url}/api/v1/runs")["runs"]
    [tag] = next(entry for entry in runs if entry["id"] == run)["tags"]["graph"]
    return tag


def _scopes(graph: dict) -> dict[str, dict]:
    return {scope["name"]: scope for scope in graph["scopes"]}


def test_our_graph_has_the_module_scopes_and_shapes(served: str) -> None:
    status, body = _get(served, run="./ours", tag=_graph_tag(served, "./ours"), step=1)
    assert status == 200, body
    assert (body["plugin"], body["step"], body["steps"], body["layout_library"]) == (
        "graph",
        1,
        [1, 2],
        None,
    )
    graph = body["graph"]
    scopes = _scopes(graph)
    block = "Default/features-Sequential/0-Block"
    for name in ("Default", "Default/features-Sequential", block, f"{block}/conv-Conv2d"):
        assert name in scopes
    assert graph["scopes"][0] == {"name": "", "parent": -1, "nodes": 0, "total": 18}
    assert scopes[block]["parent"] == graph["scopes"].index(scopes["Default/features-Sequential"])
    nodes = {node["name"]: node for node in graph["nodes"]}
    conv = nodes[f"{block}/conv-Conv2d/Conv2d-op0"]
    assert (conv["type"], conv["kind"], conv["shape"]) == ("Conv2d", "operator", [[2, 4, 8, 8]])
    assert conv["attrs"]["padding"] == "[1, 1]"
    assert graph["scopes"][conv["scope"]]["name"] == f"{block}/conv-Conv2d"
    # the layer's weight sits inside the layer, and feeds the convolution
    weight = nodes[f"{block}/conv-Conv2d/features.0.conv.weight"]
    assert (weight["kind"], weight["shape"]) == ("parameter", [[4, 3, 3, 3]])
    names = [node["name"] for node in graph["nodes"]]
    assert [names.index(weight["name"]), 0] in conv["inputs"]
    assert scopes[f"{block}/conv-Conv2d"]["nodes"] == 4  # conv, weight, bias, input x
    assert graph["problems"] == []


def test_mindspore_graph(served: str) -> None:
    status, body = _get(served, run="./all_plugins", tag=MS_GRAPH_TAG)
    assert status == 200, body
    graph = body["graph"]
    assert set(_scopes(graph)) == {"", "Default", "Default/fc1-Dense", "Default/relu-ReLU",
                                   "Default/fc2-Dense"}  # fmt: skip
    nodes = {node["name"]: node for node in graph["nodes"]}
    matmul = nodes["Default/fc1-Dense/MatMul-op0"]
    assert matmul["type"] == "MatMul" and matmul["shape"] == [[2, 3]]
    sources = [graph["nodes"][index]["name"] for index, _ in matmul["inputs"]]
    assert sources[:2] == ["Default/fc1-Dense/x", "Default/Load-op0"]
    assert nodes["Default/fc1-Dense/x"]["shape"] == [[2, 4]]


def test_dataset_graph(served: str) -> None:
    status, body = _get(served, run="./collector", tag="dataset_graph", plugin="dataset_graph")
    assert status == 200, body
    nodes = body["graph"]["nodes"]
    assert [(n["name"], n["type"]) for n in nodes] == [
        ("Batch-0", "Batch"),
        ("GeneratorDataset-1", "GeneratorDataset"),
    ]
    assert nodes[0]["inputs"] == [[1, 0]] and nodes[0]["attrs"]["batch_size"] == "4"


def test_crafted_graph_is_shown_not_fatal(served: str) -> None:
    status, body = _get(served, run="./ours", tag=_graph_tag(served, "./ours"))
    assert status == 200, body
    graph = body["graph"]
    assert graph["name"] == MARKUP
    names = [node["name"] for node in graph["nodes"]]
    assert f"Default/{MARKUP}/Add-op0" in names and f"Default/{MARKUP}" in _scopes(graph)
    assert graph["nodes"][names.index("Default/x-op1")]["type"] == MARKUP
    assert len(graph["scopes"]) == 1 + 2 + 2999  # root, Default + markup scope, s/s/...
    assert graph["problems"] and "'nothing'" in graph["problems"][0]


OURS = {"run": "./ours", "tag": "TAG"}


@pytest.mark.parametrize(
    ("params", "status", "named"),
    [
        ({**OURS, "plugin": "scalar"}, 422, "plugin='scalar'"),
        ({**OURS, "step": "x"}, 422, "step='x'"),
        ({**OURS, "step": 5}, 404, "step=5"),
        ({**OURS, "rank": 3}, 404, "rank=3"),
        ({"run": "./ours", "tag": "missing"}, 404, "tag='missing'"),
        ({"run": "./nope", "tag": "net"}, 404, "run='./nope'"),
        ({"run": "../secret.txt", "tag": "net"}, 404, "run='../secret.txt'"),
        ({"run": "./ours/../../secret.txt", "tag": "net"}, 404, "secret.txt"),
        ({"run": "./ours"}, 422, "tag"),
    ],
)
def test_bad_parameters_are_named(served: str, params: dict, status: int, named: str) -> None:
    if params.get("tag") == "TAG":
        params = {**params, "tag": _graph_tag(served, "./ours")}
    got, body = _get(served, **params)
    assert got == status and named in body["detail"] and "\n" not in body["detail"]
    assert "secret" not in body["detail"] or "secret.txt'" in body["detail"]


def test_missing_layout_library_is_one_clear_line(tmp_path: Path) -> None:
    problem = layout_library_problem(tmp_path)
    assert problem is not None and "\n" not in problem and "make" in problem
    assert layout_library_problem() is None  # installed here (make's npm ci)


def test_an_unchanged_graph_is_not_sent_again(served: str) -> None:
    tag = _graph_tag(served, "./all_plugins")
    query = urlencode({"run": "./all_plugins", "tag": tag})
    with urllib.request.urlopen(f"{served}/api/v1/graph?{query}", timeout=30) as first:
        etag = first.headers["ETag"]
        body = json.loads(first.read())
    assert etag and body["graph"]["nodes"]
    again = urllib.request.Request(
        f"{served}/api/v1/graph?{query}", headers={"If-None-Match": etag}
    )
    with pytest.raises(urllib.error.HTTPError) as answer:  # urllib raises on 304
        urllib.request.urlopen(again, timeout=30)
    assert answer.value.code == 304
    ours = urlencode({"run": "./ours", "tag": _graph_tag(served, "./ours")})
    other = urllib.request.Request(f"{served}/api/v1/graph?{ours}", headers={"If-None-Match": etag})
    with urllib.request.urlopen(other, timeout=30) as response:  # another graph: sent
        assert response.status == 200 and response.headers["ETag"] != etag
