"""TensorBoard graphs read for the graph view (``sumlens.io.tb_graph``): torch's real
``add_graph`` of ResNet-18, ``add_onnx_graph`` and Lightning's ``log_graph`` read from their
files and compared with what the real TensorBoard reader finds there; crafted GraphDefs
(control inputs, ports, unknown inputs, a cycle, duplicate names, every attribute kind,
deep names, too many nodes or inputs, bytes that are no GraphDef); RunMetadata statistics."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from helpers.graph_data import Net
from helpers.graph_zoo import ResNet18
from helpers.tensorboard import accumulator
from tensorboard.compat.proto import config_pb2, step_stats_pb2

from sumlens._proto import tensorboard_graph_pb2, tensorboard_pb2
from sumlens.board.query.graph_model import network_view
from sumlens.io import Event, iter_events
from sumlens.io.tb_graph import (
    MAX_INPUTS,
    MAX_NODES,
    MAX_SCOPE_DEPTH,
    graph_from_graph_def,
    node_stats,
)

TB = tensorboard_pb2.DataType


def _events(run: Path, plugin: str) -> list[Event]:
    return [event for event in iter_events(run) if event.plugin == plugin]


def _view(graph_def: tensorboard_graph_pb2.GraphDef) -> dict:
    return network_view(graph_from_graph_def(graph_def.SerializeToString()))


def _by_name(view: dict) -> dict[str, dict]:
    return {node["name"]: node for node in view["nodes"]}


def _sources(view: dict, name: str) -> list[tuple[str, int]]:
    nodes = view["nodes"]
    return [(nodes[index]["name"], kind) for index, kind in _by_name(view)[name]["inputs"]]


@pytest.fixture(scope="module")
def resnet_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ResNet-18's graph as torch's own ``SummaryWriter.add_graph`` writes it."""
    from torch.utils.tensorboard import SummaryWriter

    run = tmp_path_factory.mktemp("resnet")
    with SummaryWriter(str(run)) as writer:
        writer.add_graph(ResNet18(num_classes=10).eval(), torch.rand(1, 3, 32, 32))
    return run


def test_torch_add_graph_of_resnet18_keeps_every_node_scope_and_input(resnet_run: Path) -> None:
    graph_def = accumulator(resnet_run).Graph()  # what TensorBoard reads from the file
    (event,) = _events(resnet_run, "graph")
    assert event.tag == next(resnet_run.glob("events.out.tfevents.*")).name
    view = network_view(event.value)
    nodes = _by_name(view)
    scopes = [scope["name"] for scope in view["scopes"]]
    for node in graph_def.node:
        shown = nodes[node.name]  # under its own name
        assert scopes[shown["scope"]] == node.name.rpartition("/")[0]
        # every input is an edge from the node it names (a module read by prim::GetAttr,
        # which is no node, is a parameter of that name)
        assert [name for name, _ in _sources(view, node.name)] == list(node.input)
    assert view["problems"] == []
    assert len(graph_def.node) == 307
    assert len(view["nodes"]) == 307 + 41  # and one parameter per module read
    conv = nodes["ResNet18/Conv2d[conv1]/input.1"]
    assert (conv["type"], conv["kind"], conv["shape"]) == (
        "aten::_convolution",
        "operator",
        [[1, 64, 16, 16]],
    )
    assert conv["attrs"] == {"attr": "'{}'"}
    assert (nodes["input/x"]["kind"], nodes["input/x"]["shape"]) == ("parameter", [[1, 3, 32, 32]])
    assert nodes["output/output.1"]["type"] == "IO Node"
    assert _sources(view, "output/output.1") == [("ResNet18/Linear[fc]/1581", 0)]
    constant = nodes["ResNet18/BatchNorm2d[bn1]/1237"]
    assert (constant["kind"], constant["attrs"]) == ("const", {"value": "'{ value : 1e-05}'"})
    module = nodes["ResNet18/Conv2d[conv1]/weight/conv1.1"]
    assert module["kind"] == "parameter"
    block = "ResNet18/Sequential[layer4]/BasicBlock[1]"
    assert f"{block}/BatchNorm2d[bn2]" in scopes
    types = [node["type"] for node in view["nodes"]]
    assert types.count("aten::_convolution") == 20 and types.count("aten::add") == 8
    # the RunMetadata beside it: one device, no node statistics
    (metadata,) = _events(resnet_run, "run_metadata")
    assert metadata.tag == "step1" and node_stats(metadata.value) == {}
    assert [device.device for device in metadata.value.step_stats.dev_stats] == ["/device:CPU:0"]


def test_onnx_graph_opens(tmp_path: Path) -> None:
    from torch.utils.tensorboard import SummaryWriter

    model = tmp_path / "net.onnx"
    torch.onnx.export(Net().eval(), (torch.zeros(2, 3, 8, 8),), str(model), dynamo=False)
    run = tmp_path / "run"
    with SummaryWriter(str(run)) as writer:
        writer.add_onnx_graph(str(model))
    graph_def = accumulator(run).Graph()
    (event,) = _events(run, "graph")
    view = network_view(event.value)
    nodes = _by_name(view)
    conv = next(node.name for node in graph_def.node if node.op == "Conv")
    assert conv.endswith("/conv/Conv_output_0") and nodes[conv]["kind"] == "operator"
    assert "dilations = [1, 1]" in nodes[conv]["attrs"]["parameters"]
    # the model's input (a Variable) and the initializers (named by inputs only) are
    # parameters placed in the layer using them, as MindSpore's are
    sources = _sources(view, conv)
    assert [nodes[name]["kind"] for name, _ in sources] == ["parameter"] * 3
    assert nodes[sources[0][0]]["shape"] == [[2, 3, 8, 8]]
    assert all(name.startswith(conv.rpartition("/")[0]) for name, _ in sources)
    assert {node["type"] for node in view["nodes"]} >= {"Conv", "Relu", "MaxPool", "Gemm"}
    assert view["problems"] == []


def test_lightning_log_graph_opens(tmp_path: Path) -> None:
    from helpers.lightning_run import TinyImageModule
    from lightning.pytorch.loggers import TensorBoardLogger

    logger = TensorBoardLogger(str(tmp_path), name="tb", log_graph=True)
    logger.log_graph(TinyImageModule())
    logger.finalize("success")
    run = Path(logger.log_dir)
    graph_def = accumulator(run).Graph()
    (event,) = _events(run, "graph")
    view = network_view(event.value)
    assert {node.name for node in graph_def.node} <= set(_by_name(view))
    scopes = {scope["name"] for scope in view["scopes"]}
    assert {"TinyImageModule/Sequential[features]/Conv2d[0]", "TinyImageModule/Linear[head]"} <= (
        scopes
    )
    assert view["problems"] == []


def _node(
    graph: tensorboard_graph_pb2.GraphDef, name: str, op: str, *inputs: str
) -> tensorboard_graph_pb2.NodeDef:
    return graph.node.add(name=name, op=op, input=list(inputs))


def test_inputs_controls_ports_unknowns_cycles_and_duplicates() -> None:
    graph = tensorboard_graph_pb2.GraphDef()
    _node(graph, "x", "Placeholder")
    _node(graph, "a/add", "Add", "x", "b/mul:1", "^b/mul", "gone:0", "^gone", "w")
    _node(graph, "b/mul", "Mul", "a/add")  # a cycle with a/add
    _node(graph, "d", "Relu", "x")
    _node(graph, "d", "Tanh", "x")  # a second "d": inputs name the last one
    _node(graph, "e", "Sigmoid", "d")
    _node(graph, "w", "VariableV2")
    _node(graph, "c", "Const")
    view = _view(graph)
    nodes = _by_name(view)
    assert _sources(view, "a/add") == [
        ("x", 0),  # a parameter without a path: in the innermost scope of all its users
        ("b/mul", 0),
        ("b/mul", 1),
        ("a/gone", 0),  # an unknown input: a parameter of that name, without its port
        ("a/gone", 1),
        ("a/w", 0),  # used in a/ alone
    ]
    assert _sources(view, "b/mul") == [("a/add", 0)]
    assert (nodes["d (1)"]["type"], nodes["d"]["type"]) == ("Relu", "Tanh")
    assert _sources(view, "e") == [("d", 0)]
    assert nodes["a/gone"]["kind"] == "parameter" and nodes["c"]["kind"] == "const"
    assert view["problems"] == []


def test_attributes_shapes_and_types_are_shown() -> None:
    graph = tensorboard_graph_pb2.GraphDef()
    node = _node(graph, "net/conv", "Conv2D", "net/x")
    node.device = "/device:CPU:0"
    attr = node.attr
    attr["T"].type = TB.DT_FLOAT
    attr["_output_shapes"].list.shape.add().dim.add(size=2)
    attr["_output_shapes"].list.shape[0].dim.add(size=-1)
    attr["padding"].s = b"SAME"
    attr["strides"].list.i.extend([1, 2])
    attr["alpha"].f = 0.1
    attr["fused"].b = True
    attr["groups"].i = 3
    attr["kernel"].shape.dim.add(size=3)
    attr["names"].list.s.extend([b"a", b"\xff"])
    attr["types"].list.type.extend([TB.DT_INT64, 99])
    attr["weights"].tensor.dtype = TB.DT_FLOAT
    attr["weights"].tensor.tensor_shape.dim.add(size=4)
    attr["weights"].tensor.float_val.extend([1.0] * 4)
    attr["empty"].list.SetInParent()
    two = _node(graph, "net/split", "Split", "net/conv")
    for size in (1, 2):
        two.attr["_output_shapes"].list.shape.add().dim.add(size=size)
    x = _node(graph, "net/x", "Placeholder")
    x.attr["dtype"].type = TB.DT_INT32
    x.attr["shape"].shape.dim.add(size=5)
    nodes = _by_name(_view(graph))
    conv = nodes["net/conv"]
    assert (conv["dtype"], conv["shape"]) == ("DT_TENSOR[DT_FLOAT32]", [[2, -1]])
    assert conv["attrs"] == {
        "device": "'/device:CPU:0'",
        "T": "'DT_FLOAT'",
        "alpha": "0.1",
        "empty": "[]",
        "fused": "true",
        "groups": "3",
        "kernel": "[3]",
        "names": "['a', '\ufffd']",
        "padding": "'SAME'",
        "strides": "[1, 2]",
        "types": "['DT_INT64', 'DataType 99']",
        "weights": "'DT_FLOAT tensor [4]'",
    }
    assert (nodes["net/split"]["dtype"], nodes["net/split"]["shape"]) == ("", [[1], [2]])
    x_node = nodes["net/x"]
    assert (x_node["kind"], x_node["dtype"], x_node["shape"]) == (
        "parameter",
        "DT_TENSOR[DT_INT32]",
        [[5]],
    )


def test_deep_names_keep_a_bounded_scope_tree() -> None:
    graph = tensorboard_graph_pb2.GraphDef()
    deep = "/".join(["s"] * 5000)
    _node(graph, deep, "Relu", deep + "/in")
    view = _view(graph)
    assert len(view["scopes"]) == 1 + MAX_SCOPE_DEPTH
    names = [node["name"] for node in view["nodes"]]
    assert all(name.count("/") == MAX_SCOPE_DEPTH for name in names) and len(names) == 2


def test_an_empty_graph_def_is_an_empty_graph() -> None:
    view = network_view(graph_from_graph_def(b""))
    assert (view["nodes"], len(view["scopes"])) == ([], 1)


@pytest.mark.parametrize(
    ("data", "named"),
    [
        (b"\x0a\x00" * (MAX_NODES + 1), f"{MAX_NODES + 1:,} nodes"),
        (
            tensorboard_graph_pb2.GraphDef(
                node=[tensorboard_graph_pb2.NodeDef(input=[""] * (MAX_INPUTS + 1))]
            ).SerializeToString(),
            f"{MAX_INPUTS + 1:,} inputs",
        ),
        (b"\x0a\x05abc", "not a GraphDef"),
        (b"\x0a\x04\x0a\x02\xff\xfe", "not a GraphDef"),  # a name that is not UTF-8
    ],
)
def test_crafted_bytes_are_refused_by_name(data: bytes, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        graph_from_graph_def(data)


def test_run_metadata_gives_time_and_memory_per_node() -> None:
    stats = step_stats_pb2.StepStats()
    cpu = stats.dev_stats.add(device="/device:CPU:0")
    cpu.node_stats.add(node_name="net/conv", all_start_micros=10, all_end_rel_micros=250)
    cpu.node_stats[0].memory.add(allocator_name="cpu", total_bytes=4096)
    cpu.node_stats[0].memory.add(allocator_name="pinned", total_bytes=100)
    cpu.node_stats.add(node_name="net/relu", all_end_rel_nanos=1500)
    gpu = stats.dev_stats.add(device="/device:GPU:0")
    gpu.node_stats.add(node_name="net/conv", all_end_rel_micros=50)
    gpu.node_stats.add(node_name="net/idle")
    data = config_pb2.RunMetadata(step_stats=stats).SerializeToString()  # TensorBoard's own
    found = node_stats(tensorboard_graph_pb2.RunMetadata.FromString(data))
    assert {name: entry.to_json() for name, entry in found.items()} == {
        "net/conv": {
            "devices": ["/device:CPU:0", "/device:GPU:0"],
            "compute_us": 300.0,
            "memory_bytes": 4196,
        },
        "net/relu": {"devices": ["/device:CPU:0"], "compute_us": 1.5, "memory_bytes": None},
        "net/idle": {"devices": ["/device:GPU:0"], "compute_us": None, "memory_bytes": None},
    }
