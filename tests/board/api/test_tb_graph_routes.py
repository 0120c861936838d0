"""TensorBoard graphs through ``board/api/graph.py`` over an in-memory read surface: a
``GraphDef`` converted by ``sumlens.io.tb_graph`` served by ``GET /api/v1/graph`` with
TensorBoard's scopes, and ``GET /api/v1/graph/stats``: what a ``RunMetadata`` says of each
node (TensorBoard's own protobuf writes the crafted one), values that are gone or no
RunMetadata, and bad parameters."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.board import route_client
from helpers.memory_surface import GONE, MemorySurface
from starlette.testclient import TestClient
from tensorboard.compat.proto import config_pb2, step_stats_pb2

from sumlens._proto import tensorboard_graph_pb2
from sumlens.io.tb_graph import graph_from_graph_def

TAG = "events.out.tfevents.1700000000.host.1.0"
MARKUP = "<img src=x onerror=alert(1)>"


def graph_def() -> bytes:
    """input/x -> Net/Conv2d[conv]/input.1 (with its module's weight, read by GetAttr) ->
    output/output.1, as torch's add_graph names them; one node named with markup."""
    graph = tensorboard_graph_pb2.GraphDef()
    x = graph.node.add(name="input/x", op="IO Node")
    x.attr["_output_shapes"].list.shape.add().dim.add(size=2)
    graph.node.add(
        name="Net/Conv2d[conv]/weight/weight.1",
        op="prim::GetAttr",
        input=["Net/Conv2d[conv]/weight/conv"],
    ).attr["attr"].s = b"{ name :  weight }"
    conv = graph.node.add(
        name="Net/Conv2d[conv]/input.1",
        op="aten::_convolution",
        input=["input/x", "Net/Conv2d[conv]/weight/weight.1"],
    )
    conv.attr["_output_shapes"].list.shape.add().dim.add(size=4)
    graph.node.add(name=f"Net/{MARKUP}", op=MARKUP, input=["Net/Conv2d[conv]/input.1"])
    graph.node.add(name="output/output.1", op="IO Node", input=[f"Net/{MARKUP}"])
    return graph.SerializeToString()


def run_metadata(device: str) -> tensorboard_graph_pb2.RunMetadata:
    """Compute time and memory of the convolution on ``device``."""
    stats = step_stats_pb2.StepStats()
    dev = stats.dev_stats.add(device=device)
    node = dev.node_stats.add(node_name="Net/Conv2d[conv]/input.1", all_end_rel_micros=1234)
    node.memory.add(allocator_name="cpu", total_bytes=2048)
    dev.node_stats.add(node_name="input/x")
    data = config_pb2.RunMetadata(step_stats=stats).SerializeToString()
    return tensorboard_graph_pb2.RunMetadata.FromString(data)


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    surface = MemorySurface()
    surface.add_value("./tb", "graph", TAG, 0, graph_from_graph_def(graph_def()))
    surface.add_value("./tb", "run_metadata", "step1", 0, run_metadata("/device:CPU:0"))
    surface.add_value("./tb", "run_metadata", "step1", 5, run_metadata("/device:GPU:0"))
    surface.add_value("./tb", "run_metadata", "gone", 1, GONE)
    surface.add_value("./tb", "run_metadata", "text", 1, "not a RunMetadata")
    with route_client(surface) as found:
        yield found


def test_a_graph_def_is_served_with_tensorboards_scopes(client: TestClient) -> None:
    answer = client.get("/api/v1/graph", params={"run": "./tb", "tag": TAG})
    assert answer.status_code == 200, answer.text
    graph = answer.json()["graph"]
    scopes = [scope["name"] for scope in graph["scopes"]]
    assert set(scopes) == {"", "input", "output", "Net", "Net/Conv2d[conv]",
                           "Net/Conv2d[conv]/weight"}  # fmt: skip
    nodes = {node["name"]: node for node in graph["nodes"]}
    conv = nodes["Net/Conv2d[conv]/input.1"]
    assert (conv["type"], conv["kind"], conv["shape"]) == ("aten::_convolution", "operator", [[4]])
    names = [node["name"] for node in graph["nodes"]]
    assert [names[index] for index, _ in conv["inputs"]] == [
        "input/x",
        "Net/Conv2d[conv]/weight/weight.1",
    ]
    assert nodes["input/x"]["kind"] == "parameter"
    assert nodes["Net/Conv2d[conv]/weight/conv"]["kind"] == "parameter"  # the module read
    assert nodes[f"Net/{MARKUP}"]["type"] == MARKUP
    getattr_node = nodes["Net/Conv2d[conv]/weight/weight.1"]
    assert getattr_node["attrs"] == {"attr": "'{ name :  weight }'"}
    assert graph["problems"] == []


def test_stats_of_the_newest_run_metadata(client: TestClient) -> None:
    answer = client.get("/api/v1/graph/stats", params={"run": "./tb", "tag": "step1"})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["run"], body["tag"], body["rank"], body["step"], body["steps"]) == (
        "./tb",
        "step1",
        None,
        5,
        [0, 5],
    )
    assert body["devices"] == ["/device:GPU:0"]
    assert body["nodes"] == {
        "Net/Conv2d[conv]/input.1": {
            "devices": ["/device:GPU:0"],
            "compute_us": 1234.0,
            "memory_bytes": 2048,
        },
        "input/x": {"devices": ["/device:GPU:0"], "compute_us": None, "memory_bytes": None},
    }
    older = client.get("/api/v1/graph/stats", params={"run": "./tb", "tag": "step1", "step": 0})
    assert older.json()["devices"] == ["/device:CPU:0"]


@pytest.mark.parametrize(
    ("params", "status", "named"),
    [
        ({"run": "./tb", "tag": "nope"}, 404, "run_metadata tag='nope'"),
        ({"run": "./none", "tag": "step1"}, 404, "run='./none'"),
        ({"run": "./tb", "tag": "step1", "step": 3}, 404, "step=3"),
        ({"run": "./tb", "tag": "step1", "step": "x"}, 422, "step='x'"),
        ({"run": "./tb", "tag": "step1", "rank": 2}, 404, "rank=2"),
        ({"run": "./tb"}, 422, "tag"),
        ({"run": "./tb", "tag": "gone"}, 404, "tag='gone' at step 1 is not readable"),
        ({"run": "./tb", "tag": "text"}, 404, "tag='text' at step 1 is not readable"),
    ],
)
def test_bad_stats_parameters_are_named(
    client: TestClient, params: dict, status: int, named: str
) -> None:
    answer = client.get("/api/v1/graph/stats", params=params)
    detail = answer.json()["detail"]
    assert answer.status_code == status and named in detail and "\n" not in detail
