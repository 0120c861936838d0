"""``sumlens.graph.from_module`` / ``capture`` on a zoo of real models."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from helpers.graph_zoo import ZOO, LeNet, ResNet18

import sumlens.ops
from sumlens._proto import anf_ir_pb2
from sumlens.graph import capture, from_module, unwrap, watch_inputs

DataType = anf_ir_pb2.DataType
HERE = Path(__file__).resolve().parent


def _warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "sumlens" and r.levelno >= logging.WARNING]


def _typed(proto: anf_ir_pb2.TypeProto) -> bool:
    """A tensor type with an element type and a shape, or a tuple of only such types."""
    if proto.data_type == DataType.DT_TENSOR:
        return proto.tensor_type.elem_type != DataType.DT_UNDEFINED and proto.tensor_type.HasField(
            "shape"
        )
    if proto.data_type == DataType.DT_TUPLE:
        elems = proto.sequence_type.elem_types
        return len(elems) > 0 and all(_typed(e) for e in elems)
    return False


def _shape(proto: anf_ir_pb2.TypeProto) -> list[int]:
    return [d.size for d in proto.tensor_type.shape.dim]


@pytest.mark.parametrize("name", list(ZOO))
def test_zoo(name: str, caplog: pytest.LogCaptureFixture) -> None:
    case = ZOO[name]
    model = case.make()
    args, kwargs = case.inputs()
    with caplog.at_level(logging.WARNING, logger="sumlens"):
        result = capture(model, args, example_kwargs=kwargs)
    graph = result.graph
    assert result.path == case.path, result.reason
    if case.path == "module_hierarchy":
        assert len(_warnings(caplog)) == 1
        assert "data-dependent control flow" in _warnings(caplog)[0].getMessage()
        assert graph.name.endswith("(module hierarchy)")
        assert {n.scope for n in graph.node} == {
            "Default/positive-Linear",
            "Default/negative-Linear",
        }
        for node in graph.node:
            attrs = {a.name: a.value.str_val for a in node.attribute}
            assert attrs["capture"] == "module_hierarchy"
            assert "data-dependent" in attrs["reason"]
        return
    assert result.reason is None and not _warnings(caplog)
    assert graph.name.endswith("(torch.export)")
    assert len(graph.node) >= case.operators
    names = [n.name for n in graph.node]
    assert names == [str(i) for i in range(1, len(names) + 1)]
    # shapes and dtypes on every operator node; names MindInsight can show
    for node in graph.node:
        assert _typed(node.output_type), node
        assert node.scope == "Default" or node.scope.startswith("Default/"), node.scope
        assert node.full_name.startswith(node.scope + "/" + node.op_type + "-op")
        assert not set(node.full_name) & set('<>"')
    # every parameter is listed with its shape and feeds an operator
    listed = {p.name: p for p in graph.parameters}
    consumed = {i.name for n in graph.node for i in n.input}
    for pname, param in model.named_parameters():
        assert pname in listed, pname
        assert _shape(listed[pname].type) == list(param.shape)
        assert pname in consumed, f"no edge from {pname}"
    # inputs name nodes, parameters or constants only
    known = set(names) | set(listed) | {c.key for c in graph.const_vals}
    assert consumed <= known
    assert len(graph.outputs) >= 1


def test_lenet_scopes_and_values() -> None:
    graph = from_module(LeNet(), (torch.randn(2, 1, 28, 28),))
    by_scope: dict[str, list[str]] = {}
    for node in graph.node:
        by_scope.setdefault(node.scope, []).append(node.op_type)
    assert by_scope == {
        "Default/conv1-Conv2d": ["Conv2d"],
        "Default/relu-ReLU": ["Relu"] * 4,
        "Default/pool-MaxPool2d": ["MaxPool2d"] * 2,
        "Default/conv2-Conv2d": ["Conv2d"],
        "Default/flatten-Flatten": ["Flatten"],
        "Default/fc1-Linear": ["Linear"],
        "Default/fc2-Linear": ["Linear"],
        "Default/fc3-Linear": ["Linear"],
    }
    first = graph.node[0]
    assert [i.name for i in first.input] == ["x", "conv1.weight", "conv1.bias"]
    assert first.full_name == "Default/conv1-Conv2d/Conv2d-op0"
    assert _shape(first.output_type) == [2, 6, 24, 24]
    assert first.output_type.tensor_type.elem_type == DataType.DT_FLOAT32
    relus = [n.full_name for n in graph.node if n.op_type == "Relu"]
    assert relus == [f"Default/relu-ReLU/Relu-op{i}" for i in range(4)]
    pool = next(n for n in graph.node if n.op_type == "MaxPool2d")
    attrs = {a.name: list(a.value.int_vals) for a in pool.attribute if a.value.int_vals}
    assert attrs["kernel_size"] == [2, 2]
    assert [p.name for p in graph.parameters][-1] == "x"  # the model input, after the weights


def test_resnet_nested_scopes_and_constants() -> None:
    graph = from_module(ResNet18(), (torch.randn(2, 3, 64, 64),))
    scopes = {n.scope for n in graph.node}
    assert "Default/layer1-Sequential/0-BasicBlock/conv1-Conv2d" in scopes
    assert "Default/layer2-Sequential/0-BasicBlock/downsample-Sequential/0-Conv2d" in scopes
    assert "Default/layer4-Sequential/1-BasicBlock" in scopes  # the residual add
    # batch norm buffers are parameters too; the num_batches_tracked += 1 uses a constant
    names = {p.name for p in graph.parameters}
    assert {"bn1.running_mean", "layer1.0.bn1.num_batches_tracked"} <= names
    consts = {c.key: c.value for c in graph.const_vals}
    assert any(v.dtype == DataType.DT_INT64 and v.int_val == 1 for v in consts.values())


def test_transformer_dict_and_keyword_inputs() -> None:
    case = ZOO["transformer"]
    args, kwargs = case.inputs()
    graph = from_module(case.make(), args, example_kwargs=kwargs)
    inputs = {p.name: _shape(p.type) for p in graph.parameters if "." not in p.name}
    assert inputs == {"batch_input_ids": [2, 6], "batch_attention_mask": [2, 6]}
    op_types = {n.op_type for n in graph.node}
    assert {"Embedding", "ScaledDotProductAttention", "LayerNorm", "Gelu"} <= op_types
    mul = next(n for n in graph.node if n.op_type == "Mul")
    const = {c.key: c.value for c in graph.const_vals}[mul.input[1].name]
    assert const.double_val == 2.0  # the keyword argument scale=2.0


def test_lstm_tuple_output_and_getitem() -> None:
    """The LSTM's tuple, the getitems that pick its parts, and the shapes that must result.

    Whether ``torch.export`` keeps ``aten.lstm`` as one operator or decomposes it (one
    ``mkldnn_rnn_layer`` per layer on CPU, or cell operators) depends on the torch
    version, so the test holds for both: some operator of the LSTM module returns a
    tuple, every TupleGetItem takes element k of a tuple and has that element's type,
    and what reaches the head is the (batch, seq, hidden) output sequence.
    """
    case = ZOO["lstm"]
    args, _ = case.inputs()
    graph = from_module(case.make(), args)
    nodes = {n.name: n for n in graph.node}
    consts = {c.key: c.value for c in graph.const_vals}
    in_lstm = [n for n in graph.node if n.scope == "Default/lstm-LSTM"]
    tuples = {n.name for n in in_lstm if n.output_type.data_type == DataType.DT_TUPLE}
    assert tuples, [n.op_type for n in in_lstm]
    getitems = [n for n in graph.node if n.op_type == "TupleGetItem"]
    for getitem in getitems:
        source, index = getitem.input[0].name, consts[getitem.input[1].name].int_val
        assert nodes[source].output_type.data_type == DataType.DT_TUPLE, getitem
        elems = nodes[source].output_type.sequence_type.elem_types
        assert 0 <= index < len(elems)
        assert getitem.output_type == elems[index]
    assert any(g.input[0].name in tuples for g in getitems), "no getitem picks the LSTM's parts"
    # aten.lstm, where export keeps it, returns (output, h_n, c_n) as nn.LSTM documents
    for lstm in (n for n in in_lstm if n.op_type == "Lstm"):
        assert [_shape(t) for t in lstm.output_type.sequence_type.elem_types] == [
            [2, 7, 16],  # (batch, seq, hidden): batch_first
            [2, 2, 16],  # (num_layers, batch, hidden)
            [2, 2, 16],
        ]
    # out[:, -1] selects the last step of the LSTM's output sequence; the head maps it
    [select] = [n for n in graph.node if n.op_type == "Select" and n.scope == "Default"]
    sequence = nodes[select.input[0].name]
    assert sequence.scope == "Default/lstm-LSTM"
    assert _shape(sequence.output_type) == [2, 7, 16]
    assert _shape(select.output_type) == [2, 16]
    head = [n for n in graph.node if n.scope == "Default/head-Linear"]
    assert any(i.name == select.name for n in head for i in n.input)
    assert _shape(head[-1].output_type) == [2, 3]
    assert [_shape(o.type) for o in graph.outputs] == [[2, 3]]


def test_fallback_warns_once_per_model(caplog: pytest.LogCaptureFixture) -> None:
    case = ZOO["data_dependent"]
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            result = capture(case.make(), case.inputs()[0])
            assert result.path == "module_hierarchy"
    assert len(_warnings(caplog)) == 1
    # torch's own warnings and logs are kept quiet
    assert [r for r in caplog.records if r.name.startswith("torch")] == []


def test_no_inputs_falls_back_then_first_call_is_used(caplog: pytest.LogCaptureFixture) -> None:
    model = LeNet()
    with caplog.at_level(logging.WARNING):
        assert capture(model).path == "module_hierarchy"
    assert "no example inputs" in _warnings(caplog)[0].getMessage()
    first = watch_inputs(model)
    model(torch.randn(3, 1, 28, 28))
    assert first.fired
    model(torch.randn(5, 1, 28, 28))  # the hook removed itself: the first call is kept
    result = capture(model)
    assert result.path == "torch.export"
    assert _shape(result.graph.node[0].output_type) == [3, 6, 24, 24]


def test_capture_leaves_the_model_alone() -> None:
    model = ResNet18()
    x = torch.randn(2, 3, 32, 32)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    capture(model, (x,))
    after = model.state_dict()
    assert all(torch.equal(state[k], after[k]) for k in state)  # BN statistics untouched
    lstm = ZOO["lstm"].make()
    seq = torch.randn(2, 7, 8)
    before = lstm(seq)
    capture(lstm, (seq,))
    out = lstm(seq)
    assert torch.equal(before, out)
    out.sum().backward()
    assert lstm.lstm.weight_ih_l0.grad is not None


def test_summary_operators_inside_forward_are_paused(tmp_path: Path) -> None:
    class Logged(LeNet):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out = super().forward(x)
            sumlens.ops.scalar("mean", out.mean())
            return out

    from sumlens import SummaryRecord

    with SummaryRecord(tmp_path) as record:
        result = capture(Logged(), (torch.randn(2, 1, 28, 28),))
        assert result.path == "torch.export", result.reason
        assert record._pending.operator_values == {}


def test_torch_compile_is_unwrapped() -> None:
    model = LeNet()
    compiled = torch.compile(model, backend="eager")
    assert unwrap(compiled) is model
    watch_inputs(compiled)
    compiled(torch.randn(2, 1, 28, 28))
    result = capture(compiled)
    assert result.path == "torch.export", result.reason
    names = {p.name for p in result.graph.parameters}
    assert "conv1.weight" in names and not any("_orig_mod" in n for n in names)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_ddp_is_unwrapped() -> None:
    import torch.distributed as dist

    if not dist.is_available():
        pytest.skip("torch.distributed is not available")
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{_free_port()}", rank=0, world_size=1
    )
    try:
        model = LeNet()
        ddp = torch.nn.parallel.DistributedDataParallel(model)
        assert unwrap(ddp) is model
        watch_inputs(ddp)
        ddp(torch.randn(2, 1, 28, 28))
        result = capture(ddp)
        assert result.path == "torch.export", result.reason
        names = {p.name for p in result.graph.parameters}
        assert "fc3.bias" in names and not any(n.startswith("module.") for n in names)
        assert result.graph.node[0].scope == "Default/conv1-Conv2d"
    finally:
        dist.destroy_process_group()


def test_resnet18_capture_in_a_fresh_process() -> None:
    """The first capture in a process (torch.export's own warm-up included) uses torch.export."""
    code = textwrap.dedent(
        """
        import json, sys, time
        import torch
        sys.path.insert(0, sys.argv[1])
        from helpers.graph_zoo import ResNet18
        from sumlens.graph import capture
        model, x = ResNet18(), torch.randn(2, 3, 224, 224)
        first = capture(model, (x,))
        second = capture(model, (x,))
        print(json.dumps({"path": first.path, "nodes": len(first.graph.node),
                          "first": first.seconds, "second": second.seconds}))
        """
    )
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run(
        [sys.executable, "-c", code, str(HERE.parent)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=True,
    )
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"ResNet-18 capture: first {result['first']:.2f} s, then {result['second']:.2f} s")
    assert result["path"] == "torch.export"
    assert result["nodes"] > 0
