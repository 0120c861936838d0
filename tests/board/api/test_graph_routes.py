"""``GET /api/v1/graph`` (``board/api/graph.py``) over an in-memory read surface: a graph
captured from a PyTorch module, MindSpore's graph and dataset graph (the golden runs),
crafted graphs, the answer's ETag, values that are gone, and bad parameters."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from helpers.board import route_client
from helpers.graph_data import Net
from helpers.memory_runs import add_directory
from helpers.memory_surface import GONE, MemorySurface
from starlette.testclient import TestClient

from sumlens._proto import anf_ir_pb2
from sumlens.board.api.graph import layout_library_problem
from sumlens.graph import from_module

MARKUP = "<img src=x onerror=alert(1)>"
MS_GRAPH_TAG = "events.out.events.summary.1795304162.0.vm_MS"
OURS_TAG = "events.out.events.summary.1700000000.0.ours_MS"


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


def _surface(golden_dir: Path) -> MemorySurface:
    surface = MemorySurface()
    for name in ("all_plugins", "collector"):
        add_directory(surface, f"./{name}", golden_dir / name)
    network = from_module(Net(), (torch.zeros(2, 3, 8, 8),))
    surface.add_value("./ours", "graph", OURS_TAG, 1, network, rank=0)
    surface.add_value("./ours", "graph", OURS_TAG, 2, crafted_graph(), rank=0)  # same tag
    surface.add_value("./ours", "graph", OURS_TAG, 1, crafted_graph(), rank=1)
    surface.add_value("./ours", "graph", "gone", 1, GONE)
    surface.add_value("./ours", "graph", "text", 1, "not a graph")
    surface.add_scalars("./ours", "loss", [1], [1.0])
    return surface


@pytest.fixture(scope="module")
def surface(golden_dir: Path) -> MemorySurface:
    return _surface(golden_dir)


@pytest.fixture(scope="module")
def client(surface: MemorySurface) -> Iterator[TestClient]:
    with route_client(surface) as found:
        yield found


def _get(client: TestClient, **params: object) -> tuple[int, dict]:
    response = client.get("/api/v1/graph", params=params)  # type: ignore[arg-type]
    return response.status_code, response.json()


def _scopes(graph: dict) -> dict[str, dict]:
    return {scope["name"]: scope for scope in graph["scopes"]}


def test_our_graph_has_the_module_scopes_and_shapes(client: TestClient) -> None:
    status, body = _get(client, run="./ours", tag=OURS_TAG, step=1)
    assert status == 200, body
    assert (body["plugin"], body["step"], body["steps"], body["layout_library"]) == (
        "graph",
        1,
        [1, 2],
        None,
    )
    assert (body["run"], body["tag"], body["rank"], body["ranks"]) == (
        "./ours",
        OURS_TAG,
        0,
        [0, 1],
    )
    assert body["wall"] == 1.0
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


def test_mindspore_graph(client: TestClient) -> None:
    status, body = _get(client, run="./all_plugins", tag=MS_GRAPH_TAG)
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


def test_dataset_graph(client: TestClient) -> None:
    status, body = _get(client, run="./collector", tag="dataset_graph", plugin="dataset_graph")
    assert status == 200, body
    assert body["plugin"] == "dataset_graph"
    nodes = body["graph"]["nodes"]
    assert [(n["name"], n["type"]) for n in nodes] == [
        ("Batch-0", "Batch"),
        ("GeneratorDataset-1", "GeneratorDataset"),
    ]
    assert nodes[0]["inputs"] == [[1, 0]] and nodes[0]["attrs"]["batch_size"] == "4"


def test_crafted_graph_is_shown_not_fatal(client: TestClient) -> None:
    status, body = _get(client, run="./ours", tag=OURS_TAG)  # the newest step: 2
    assert status == 200, body
    assert body["step"] == 2
    graph = body["graph"]
    assert graph["name"] == MARKUP
    names = [node["name"] for node in graph["nodes"]]
    assert f"Default/{MARKUP}/Add-op0" in names and f"Default/{MARKUP}" in _scopes(graph)
    assert graph["nodes"][names.index("Default/x-op1")]["type"] == MARKUP
    assert len(graph["scopes"]) == 1 + 2 + 2999  # root, Default + markup scope, s/s/...
    assert graph["problems"] and "'nothing'" in graph["problems"][0]
    status, other = _get(client, run="./ours", tag=OURS_TAG, rank=1)
    assert status == 200 and (other["rank"], other["steps"]) == (1, [1])


OURS = {"run": "./ours", "tag": OURS_TAG}


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
        ({"run": "./ours", "tag": "gone"}, 404, "tag='gone' at step 1 holds no graph"),
        ({"run": "./ours", "tag": "text"}, 404, "tag='text' at step 1 holds no graph"),
    ],
)
def test_bad_parameters_are_named(
    client: TestClient, params: dict, status: int, named: str
) -> None:
    got, body = _get(client, **params)
    assert got == status and named in body["detail"] and "\n" not in body["detail"]
    assert "secret" not in body["detail"] or "secret.txt'" in body["detail"]


def test_missing_layout_library_is_one_clear_line(tmp_path: Path) -> None:
    problem = layout_library_problem(tmp_path)
    assert problem is not None and "\n" not in problem and "make" in problem
    assert layout_library_problem() is None  # installed here (make's npm ci)


def test_an_unchanged_graph_is_not_sent_again(golden_dir: Path) -> None:
    surface = _surface(golden_dir)
    query = {"run": "./all_plugins", "tag": MS_GRAPH_TAG}
    with route_client(surface) as client:
        first = client.get("/api/v1/graph", params=query)
        etag = first.headers["etag"]
        assert etag and first.json()["graph"]["nodes"]
        assert first.headers["cache-control"] == "no-cache"
        again = client.get("/api/v1/graph", params=query, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b""
        cached = client.get("/api/v1/graph", params=query)  # kept: the same answer
        assert cached.content == first.content and cached.headers["etag"] == etag
        other = client.get("/api/v1/graph", params=OURS, headers={"If-None-Match": etag})
        assert other.status_code == 200 and other.headers["etag"] != etag  # another graph
        ours = other.headers["etag"]
        surface.add_value("./ours", "graph", OURS_TAG, 3, crafted_graph(), rank=0)
        grown = client.get("/api/v1/graph", params=OURS, headers={"If-None-Match": ours})
        assert grown.status_code == 200 and grown.json()["steps"] == [1, 2, 3]
        assert grown.headers["etag"] != ours
