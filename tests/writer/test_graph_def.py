"""A model's graph in TensorBoard's format (``sumlens.writer.graph_def``), read back by the
real TensorBoard ``EventAccumulator`` and held against torch's own ``add_graph`` and
``add_onnx_graph`` on the same model."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest
import torch
from helpers.graph_zoo import DataDependent
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.compat.proto.graph_pb2 import GraphDef
from torch import nn
from torch.utils.tensorboard import SummaryWriter as TorchWriter

import sumlens._log
from sumlens._proto import tensorboard_pb2
from sumlens.io.framing import encode_record
from sumlens.writer.graph_def import graph_def_of
from sumlens.writer.onnx_graph import onnx_graph_def

DataType = tensorboard_pb2.DataType


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x))) + x


class Net(nn.Module):
    """Conv, batch norm, relu, linear, in nested submodules (a Sequential of blocks)."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(1, 4, 3, padding=1)
        self.blocks = nn.Sequential(Block(), Block())
        self.head = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.blocks(torch.relu(self.stem(x)))
        return self.head(x.mean((2, 3)))


SCOPES = {
    "Net",
    "Net/Conv2d[stem]",
    "Net/Sequential[blocks]",
    "Net/Sequential[blocks]/Block[0]",
    "Net/Sequential[blocks]/Block[0]/Conv2d[conv]",
    "Net/Sequential[blocks]/Block[0]/BatchNorm2d[bn]",
    "Net/Sequential[blocks]/Block[1]",
    "Net/Sequential[blocks]/Block[1]/Conv2d[conv]",
    "Net/Sequential[blocks]/Block[1]/BatchNorm2d[bn]",
    "Net/Linear[head]",
}


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once-per-cause warnings are remembered for the process; each test starts afresh."""
    monkeypatch.setattr(sumlens._log, "_warned", set())


def _write_events(directory: Path, graph_def: bytes, run_metadata: bytes | None) -> None:
    """An event file as TensorBoard's writers lay it out: version, graph, run metadata."""
    events = [
        tensorboard_pb2.Event(wall_time=1.0, file_version="brain.Event:2"),
        tensorboard_pb2.Event(wall_time=1.0, graph_def=graph_def),
    ]
    if run_metadata is not None:
        tagged = tensorboard_pb2.TaggedRunMetadata(tag="step1", run_metadata=run_metadata)
        events.append(tensorboard_pb2.Event(wall_time=1.0, tagged_run_metadata=tagged))
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "events.out.tfevents.1.test"
    path.write_bytes(b"".join(encode_record(e.SerializeToString()) for e in events))


def _accumulator(directory: Path) -> EventAccumulator:
    accumulator = EventAccumulator(str(directory))
    accumulator.Reload()
    return accumulator


def _scopes(names: Iterable[str]) -> set[str]:
    """Every scope above the given node names."""
    found = set()
    for name in names:
        parts = name.split("/")[:-1]
        found.update("/".join(parts[:end]) for end in range(1, len(parts) + 1))
    return found


def _dangling(graph: GraphDef) -> list[str]:
    """Inputs naming no node (``name:k`` is output k of ``name``)."""
    names = {node.name for node in graph.node}
    return [
        f"{node.name} <- {item}"
        for node in graph.node
        for item in node.input
        if item.split(":")[0] not in names
    ]


def _ours(tmp_path: Path, model: nn.Module, inputs: object) -> EventAccumulator:
    graph_def, run_metadata = graph_def_of(model, inputs)
    _write_events(tmp_path / "ours", graph_def, run_metadata)
    return _accumulator(tmp_path / "ours")


def test_graph_reads_back_in_tensorboard(tmp_path: Path) -> None:
    accumulator = _ours(tmp_path, Net(), torch.randn(2, 1, 8, 8))
    assert accumulator.Tags()["graph"] and accumulator.Tags()["run_metadata"] == ["step1"]
    graph = accumulator.Graph()
    nodes = {node.name: node for node in graph.node}
    assert len(nodes) == len(graph.node)
    assert not _dangling(graph)
    operators = [node for node in graph.node if node.op.startswith("aten::")]
    assert _scopes(node.name for node in operators) == SCOPES
    ops = {node.name.rpartition("/")[0]: set() for node in operators}
    for node in operators:
        ops[node.name.rpartition("/")[0]].add(node.op)
    assert ops["Net/Conv2d[stem]"] == {"aten::conv2d"}
    assert "aten::batch_norm" in ops["Net/Sequential[blocks]/Block[1]/BatchNorm2d[bn]"]
    assert ops["Net/Sequential[blocks]/Block[0]"] == {"aten::relu", "aten::add"}
    assert ops["Net/Linear[head]"] == {"aten::linear"}

    conv = next(n for n in operators if n.name.startswith("Net/Conv2d[stem]/"))
    assert list(conv.input) == ["input/x", "Net/Conv2d[stem]/weight", "Net/Conv2d[stem]/bias"]
    assert [d.size for d in conv.attr["_output_shapes"].list.shape[0].dim] == [2, 4, 8, 8]
    assert conv.attr["T"].type == DataType.DT_FLOAT
    assert list(conv.attr["padding"].list.i) == [1, 1]
    weight = nodes["Net/Conv2d[stem]/weight"]
    assert weight.op == "Parameter"
    assert [d.size for d in weight.attr["_output_shapes"].list.shape[0].dim] == [4, 1, 3, 3]
    tracked = nodes["Net/Sequential[blocks]/Block[0]/BatchNorm2d[bn]/num_batches_tracked"]
    assert (tracked.op, tracked.attr["dtype"].type) == ("Buffer", DataType.DT_INT64)
    assert nodes["input/x"].op == nodes["output/output.0"].op == "IO Node"
    assert [n for n in nodes if n.startswith("output/")] == ["output/output.0"]
    assert nodes["output/output.0"].input[0].startswith("Net/Linear[head]/")

    stats = accumulator.RunMetadata("step1").step_stats.dev_stats
    assert [device.device for device in stats] == ["/device:CPU:0"]
    memory = {s.node_name: s.memory[0].total_bytes for s in stats[0].node_stats}
    assert set(memory) == {node.name for node in operators}
    assert memory[conv.name] == 2 * 4 * 8 * 8 * 4


def test_scopes_match_torch_writer(tmp_path: Path) -> None:
    """torch's add_graph (torch.jit.trace) as the reference: node names differ, the module
    scopes of the operators are the same."""
    model = Net().eval()
    inputs = torch.randn(2, 1, 8, 8)
    with TorchWriter(str(tmp_path / "torch")) as writer:
        writer.add_graph(model, inputs)
    theirs = _accumulator(tmp_path / "torch").Graph()
    ours = _ours(tmp_path, model, inputs).Graph()

    def operator_scopes(graph: GraphDef) -> set[str]:
        return _scopes(node.name for node in graph.node if node.op.startswith("aten::"))

    assert operator_scopes(ours) == operator_scopes(theirs) == SCOPES


def test_tuple_inputs_and_outputs(tmp_path: Path) -> None:
    class Pair(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.left = nn.Linear(3, 2)
            self.right = nn.Linear(5, 2)

        def forward(self, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return self.left(a), self.right(b).to(torch.bfloat16)

    graph = _ours(tmp_path, Pair(), (torch.randn(4, 3), torch.randn(4, 5))).Graph()
    assert not _dangling(graph)
    nodes = {node.name: node for node in graph.node}
    assert {"input/a", "input/b", "output/output.0", "output/output.1"} <= set(nodes)
    assert nodes["output/output.1"].attr["dtype"].type == DataType.DT_BFLOAT16
    assert {"Pair/Linear[left]", "Pair/Linear[right]"} <= _scopes(nodes)


def test_untraceable_model_writes_its_hierarchy_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="sumlens"):
        graph_def, _ = graph_def_of(DataDependent(), torch.randn(2, 4))
        graph_def_of(DataDependent(), torch.randn(2, 4))
    warnings = [r for r in caplog.records if r.name == "sumlens"]
    assert len(warnings) == 1 and "data-dependent" in warnings[0].getMessage()
    _write_events(tmp_path, graph_def, None)
    graph = _accumulator(tmp_path).Graph()
    assert not _dangling(graph)
    linears = {node.name: node for node in graph.node if node.op == "Linear"}
    assert set(linears) == {
        "DataDependent/Linear[positive]/Linear-op0",
        "DataDependent/Linear[negative]/Linear-op0",
    }
    assert b"data-dependent" in next(iter(linears.values())).attr["reason"].s


class Constant(nn.Module):
    """A model whose forward takes no argument."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.ones(3))

    def forward(self) -> torch.Tensor:
        return self.scale * 2


def test_no_inputs(caplog: pytest.LogCaptureFixture) -> None:
    """No input_to_model calls the model with no arguments: a forward that needs some is
    refused as torch's writer refuses it (RuntimeError, no hierarchy in its place); one that
    takes none is captured (torch's writer fails on it: ``example_kwarg_inputs should be a
    dict``)."""
    with caplog.at_level(logging.WARNING, logger="sumlens"):
        with pytest.raises(RuntimeError, match=r"input_to_model is None and Net cannot be"):
            graph_def_of(Net())
        graph_def, _ = graph_def_of(Constant())
    assert not [r for r in caplog.records if "could not capture" in r.getMessage()]
    graph = GraphDef.FromString(graph_def)
    assert "aten::mul" in {node.op for node in graph.node}


def test_verbose_prints_the_graph(capsys: pytest.CaptureFixture[str]) -> None:
    graph_def_of(Net(), torch.randn(1, 1, 4, 4), verbose=True)
    out = capsys.readouterr().out
    assert "Net/Conv2d[stem]/Conv2d-op0 = aten::conv2d(input/x, Net/Conv2d[stem]/weight" in out


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"model": "net"}, "model must be a torch.nn.Module, got str"),
        ({"verbose": 1}, "verbose must be True or False, got 1"),
        ({"use_strict_trace": None}, "use_strict_trace must be True or False, got None"),
    ],
)
def test_bad_arguments(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"model": Net(), "input_to_model": torch.randn(1, 1, 4, 4)}
    with pytest.raises(TypeError, match=message):
        graph_def_of(**{**arguments, **kwargs})  # type: ignore[arg-type]


# ---- ONNX -------------------------------------------------------------------------------------


def _onnx_file(path: Path) -> Path:
    """A small ONNX model made with onnx's own helpers: conv, relu, a two-output split, an
    unnamed add, flatten, gemm."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    def weight(name: str, *shape: int) -> object:
        return numpy_helper.from_array(torch.rand(*shape).numpy(), name)

    make = helper.make_node
    nodes = [
        make("Conv", ["x", "stem.weight", "stem.bias"], ["c"], name="/stem/Conv", pads=[1] * 4),
        make("Relu", ["c"], ["r"], name="/stem/Relu"),
        make("Split", ["r"], ["a", "b"], name="/split/Split", axis=1, num_outputs=2),
        make("Add", ["a", "b"], ["s"]),
        make("Flatten", ["s"], ["f"], name="/head/Flatten"),
        make("Gemm", ["f", "head.weight", "head.bias"], ["y"], name="/head/Gemm", transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "net",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 1, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])],
        [
            weight("stem.weight", 4, 1, 3, 3),
            weight("stem.bias", 4),
            weight("head.weight", 3, 128),
            weight("head.bias", 3),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def test_onnx_graph_reads_back_like_torch_writer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _onnx_file(tmp_path / "net.onnx")
    _write_events(tmp_path / "ours", onnx_graph_def(path), None)
    graph = _accumulator(tmp_path / "ours").Graph()
    with TorchWriter(str(tmp_path / "torch")) as writer:
        writer.add_onnx_graph(str(path))
    capsys.readouterr()  # torch's writer prints every node name
    theirs = _accumulator(tmp_path / "torch").Graph()

    assert not _dangling(graph)
    nodes = {node.name: node for node in graph.node}
    skip = {"IO Node", "Const", "Variable"}
    assert sorted(n.op for n in graph.node if n.op not in skip) == sorted(
        n.op for n in theirs.node if n.op not in skip
    )
    assert {"stem", "split", "head"} <= _scopes(nodes)
    assert list(nodes["Add_3"].input) == ["split/Split", "split/Split:1"]
    assert list(nodes["output/y"].input) == ["head/Gemm"]
    assert nodes["stem.weight"].op == "Const"
    conv = nodes["stem/Conv"]
    assert list(conv.attr["pads"].list.i) == [1, 1, 1, 1]
    dims = conv.attr["_output_shapes"].list.shape[0].dim
    assert [(d.size, d.name) for d in dims] == [(-1, "batch"), (4, ""), (8, ""), (8, "")]
    assert conv.attr["T"].type == DataType.DT_FLOAT
    assert list(nodes["split/Split"].attr["T"].list.type) == [DataType.DT_FLOAT] * 2


def test_onnx_bad_path(tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    with pytest.raises(FileNotFoundError, match=r"prototxt .*missing\.onnx"):
        onnx_graph_def(tmp_path / "missing.onnx")
    with pytest.raises(TypeError, match="prototxt must be a path"):
        onnx_graph_def(3)  # type: ignore[arg-type]


def test_onnx_missing_names_its_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)  # as if onnx were not installed
    with pytest.raises(ImportError, match="pip install onnx"):
        onnx_graph_def(os.fspath(tmp_path / "net.onnx"))
