"""An ONNX model file's graph as TensorFlow's ``GraphDef``: what
``SummaryWriter.add_onnx_graph`` writes (needs the ``onnx`` package, imported on use).

The conventions are :mod:`sumlens.writer.graph_def`'s: ``/``-scoped names, ``IO Node``s for
the graph's inputs and outputs, ``_output_shapes`` and element types as attributes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from sumlens._proto import tensorboard_graph_pb2, tensorboard_pb2
from sumlens.writer.graph_def import IO_OP, PRODUCER, TB, TORCH_DTYPES, set_outputs


def onnx_graph_def(prototxt: str | os.PathLike[str]) -> bytes:
    """``GraphDef`` bytes of the ONNX model in ``prototxt`` (needs ``onnx``).

    Each ONNX node becomes a node named by its ``/``-scoped name (or ``<op>_<k>`` when it
    has none), op its ONNX operator; the graph's inputs and outputs are ``IO Node``s under
    ``input/`` and ``output/``, initializers ``Const`` nodes; edges follow the tensors (the
    second output of a node is ``name:1``, as TensorFlow writes it); shapes and types come
    from ONNX shape inference.
    """
    try:
        import onnx
    except ImportError as err:
        raise ImportError(
            "add_onnx_graph needs the onnx package: pip install onnx (or sumlens[onnx])"
        ) from err
    if not isinstance(prototxt, str | os.PathLike):
        raise TypeError(f"prototxt must be a path (str or os.PathLike), got {prototxt!r}")
    if not os.path.isfile(prototxt):
        raise FileNotFoundError(f"prototxt {os.fspath(prototxt)!r} is not a file")
    # the graph, not the weights: external data files (models over 2 GB) stay unread
    model = onnx.load(os.fspath(prototxt), load_external_data=False)
    model = onnx.shape_inference.infer_shapes(model)
    return _from_onnx(model.graph, onnx).SerializeToString()


def _from_onnx(graph: Any, onnx: Any) -> tensorboard_graph_pb2.GraphDef:
    out = tensorboard_graph_pb2.GraphDef()
    out.versions.producer = PRODUCER
    types = {info.name: info.type for info in [*graph.input, *graph.value_info, *graph.output]}
    for tensor in graph.initializer:
        types[tensor.name] = onnx.helper.make_tensor_type_proto(tensor.data_type, tensor.dims)
    producer: dict[str, str] = {}
    """Tensor name -> the node that makes it (``name``, or ``name:k`` for output k)."""
    taken: set[str] = set()

    def add(
        name: str, op: str, tensors: Iterable[str], makes: bool = True
    ) -> tensorboard_graph_pb2.NodeDef:
        base = name.strip("/").replace(":", "_") or op  # TensorFlow's ':' marks an output
        name, count = base, 0
        while name in taken:
            count += 1
            name = f"{base}_{count}"
        taken.add(name)
        node = out.node.add(name=name, op=op)
        tensors = list(tensors)
        set_outputs(node, [_onnx_shape(types.get(t), onnx) for t in tensors], _type_attr(op))
        if makes:
            for index, tensor in enumerate(tensors):
                producer[tensor] = name if index == 0 else f"{name}:{index}"
        return node

    initializers = {tensor.name for tensor in graph.initializer}
    for tensor in graph.initializer:
        add(tensor.name, "Const", [tensor.name])
    for value in graph.input:
        if value.name not in initializers:
            add(f"input/{value.name}", IO_OP, [value.name])
    for index, node in enumerate(graph.node):
        proto = add(node.name or f"{node.op_type}_{index}", node.op_type, node.output)
        proto.input.extend(producer[name] for name in node.input if name in producer)
        for attribute in node.attribute:
            proto.attr[attribute.name].CopyFrom(_onnx_attr(attribute, onnx))
    for value in graph.output:
        io = add(f"output/{value.name}", IO_OP, [value.name], makes=False)
        if value.name in producer:
            io.input.append(producer[value.name])
    return out


def _type_attr(op: str) -> str:
    """Where a node's output type goes: ``dtype`` on constants and IO nodes, else ``T``."""
    return "dtype" if op in ("Const", IO_OP) else "T"


def _onnx_shape(
    type_proto: Any, onnx: Any
) -> tuple[tensorboard_pb2.TensorShapeProto, tensorboard_pb2.DataType]:
    """(shape, TensorBoard dtype) of an ONNX ``TypeProto`` (unknown: no dims, DT_INVALID)."""
    shape = tensorboard_pb2.TensorShapeProto()
    if type_proto is None or not type_proto.HasField("tensor_type"):
        shape.unknown_rank = True
        return shape, TB.DT_INVALID
    tensor = type_proto.tensor_type
    for dim in tensor.shape.dim:
        known = dim.HasField("dim_value")
        shape.dim.add(size=dim.dim_value if known else -1, name=dim.dim_param)
    name = onnx.TensorProto.DataType.Name(tensor.elem_type).lower()
    return shape, TORCH_DTYPES.get(_ONNX_NAMES.get(name, name), (TB.DT_INVALID, 0))[0]


_ONNX_NAMES = {"float": "float32", "double": "float64"}
"""ONNX element type names that torch spells otherwise."""


def _onnx_attr(attribute: Any, onnx: Any) -> tensorboard_graph_pb2.AttrValue:
    value = onnx.helper.get_attribute_value(attribute)
    attr = tensorboard_graph_pb2.AttrValue()
    kind = onnx.AttributeProto.AttributeType.Name(attribute.type)
    if kind == "INT":
        attr.i = value
    elif kind == "FLOAT":
        attr.f = value
    elif kind == "STRING":
        attr.s = value
    elif kind == "INTS":
        attr.list.i.extend(value)
    elif kind == "FLOATS":
        attr.list.f.extend(value)
    elif kind == "STRINGS":
        attr.list.s.extend(value)
    else:  # tensors, graphs, types: their text, shortened
        attr.s = str(value)[:1000].encode()
    return attr
