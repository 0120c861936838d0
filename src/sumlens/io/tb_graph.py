"""TensorBoard's graphs as the graph view reads them: a ``GraphDef`` as MindSpore's
``GraphProto``, and a ``RunMetadata``'s per-node statistics.

torch's ``add_graph`` (and Lightning's ``log_graph``, which calls it), ``add_onnx_graph``
and our own :mod:`sumlens.writer.graph_def` write a ``GraphDef``: nodes named by
``/``-scoped paths (``ResNet18/Conv2d[conv1]/input.1``), each with its op
(``aten::_convolution``), its inputs by name and attributes (``_output_shapes``, torch's
``attr`` text, TensorFlow's ``T``/``dtype``). :func:`graph_from_graph_def` keeps every node
under its own name, so the view's scopes are TensorBoard's:

* a node without inputs whose op makes a value from outside (``IO Node``, ``Parameter``,
  ``Variable``, ``Placeholder`` ...) becomes a parameter, one whose op is a constant
  (``prim::Constant``, ``Const``) a constant; every other node is an operator;
* an input naming no node (torch's ``prim::GetAttr`` reads its module, which is no node;
  an ONNX graph's weights) becomes a parameter of that name (without its port);
* ``^name`` is a control input, ``name:1`` output 1 of ``name``; a name defined twice keeps
  its last definition (as TensorBoard does), the earlier ones are shown as ``name (1)`` ...;
* ``_output_shapes`` (or ``shape``) and the element type (``T`` or ``dtype``) become the
  output type; the other attributes are shown as short text.

Nothing here trusts the message: a graph over :data:`MAX_NODES` nodes or
:data:`MAX_INPUTS` inputs is refused with a ``ValueError`` saying so, names nested deeper
than :data:`MAX_SCOPE_DEPTH` scopes keep their deeper part as one level (its ``/`` shown as
U+2215), tensors are shown by their type and shape only, and the output grows with the
message, never beyond it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import DecodeError

from sumlens._proto import anf_ir_pb2, tensorboard_graph_pb2, tensorboard_pb2

MAX_NODES = 200_000
MAX_INPUTS = 1_000_000
MAX_SCOPE_DEPTH = 64
"""Scope levels of a name kept as scopes; deeper ``/`` are shown as U+2215 (one level)."""
PARAMETER_OPS = frozenset(
    {"IO Node", "Parameter", "Buffer", "Variable", "VariableV2", "VarHandleOp", "Placeholder"}
)
CONSTANT_OPS = frozenset({"prim::Constant", "Const"})
SHAPE_ATTRS = ("_output_shapes", "shape")
TYPE_ATTRS = ("T", "dtype")
_TB = tensorboard_pb2.DataType
_MS = anf_ir_pb2.DataType
_ELEMENT_TYPES = {
    _TB.DT_FLOAT: _MS.DT_FLOAT32,
    _TB.DT_DOUBLE: _MS.DT_FLOAT64,
    _TB.DT_HALF: _MS.DT_FLOAT16,
    _TB.DT_BFLOAT16: _MS.DT_BFLOAT16,
    _TB.DT_INT8: _MS.DT_INT8,
    _TB.DT_INT16: _MS.DT_INT16,
    _TB.DT_INT32: _MS.DT_INT32,
    _TB.DT_INT64: _MS.DT_INT64,
    _TB.DT_UINT8: _MS.DT_UINT8,
    _TB.DT_UINT16: _MS.DT_UINT16,
    _TB.DT_UINT32: _MS.DT_UINT32,
    _TB.DT_UINT64: _MS.DT_UINT64,
    _TB.DT_BOOL: _MS.DT_BOOL,
    _TB.DT_STRING: _MS.DT_STRING,
    _TB.DT_COMPLEX64: _MS.DT_COMPLEX64,
    _TB.DT_COMPLEX128: _MS.DT_COMPLEX128,
}
"""TensorBoard element type -> MindSpore's (others leave the element type unset)."""
_HASHES = re.compile("#+")
_DEEP_SLASH = "\N{DIVISION SLASH}"


def graph_from_graph_def(data: bytes) -> anf_ir_pb2.GraphProto:
    """The serialized ``GraphDef`` ``data`` as a ``GraphProto`` the graph view draws (see
    the module docstring); ``ValueError`` naming what is wrong when it cannot be read."""
    try:
        graph_def = tensorboard_graph_pb2.GraphDef.FromString(data)
    except DecodeError as err:
        raise ValueError(f"not a GraphDef ({len(data)} bytes): {err}") from None
    nodes = graph_def.node
    if len(nodes) > MAX_NODES:
        raise ValueError(
            f"the GraphDef holds {len(nodes):,} nodes; at most {MAX_NODES:,} are shown"
        )
    inputs = sum(len(node.input) for node in nodes)
    if inputs > MAX_INPUTS:
        raise ValueError(f"the GraphDef holds {inputs:,} inputs; at most {MAX_INPUTS:,} are shown")
    names = _shown_names([node.name for node in nodes])
    kinds = [_kind(node) for node in nodes]
    last = {node.name: index for index, node in enumerate(nodes)}
    outside: dict[str, None] = {}  # inputs naming no node, in order, once each
    for node in nodes:
        for text in node.input:
            source = _source(text)
            if source not in last and _plain(source) not in last:
                outside[_folded(_plain(source))] = None
    prefix = _id_prefix([names[i] for i, kind in enumerate(kinds) if kind] + list(outside))
    keys = [names[i] if kinds[i] else f"{prefix}{i}" for i in range(len(nodes))]
    graph = anf_ir_pb2.GraphProto()
    for index, node in enumerate(nodes):
        if kinds[index] == "parameter":
            graph.parameters.add(name=keys[index], type=_output_type(node))
        elif kinds[index] == "const":
            graph.const_vals.add(key=keys[index], value=_constant_value(node))
        else:
            _add_operator(graph, node, keys[index], names[index], last, keys)
    for name in outside:
        graph.parameters.add(name=name)
    return graph


def _kind(node: tensorboard_graph_pb2.NodeDef) -> str:
    """The node's kind: ``parameter``, ``const``, or empty for an operator."""
    if node.input:
        return ""
    if node.op in PARAMETER_OPS:
        return "parameter"
    return "const" if node.op in CONSTANT_OPS else ""


def _shown_names(names: list[str]) -> list[str]:
    """Each name folded to :data:`MAX_SCOPE_DEPTH` levels; all but the last definition of a
    name shown as ``name (1)``, ``name (2)`` ... (never another node's name)."""
    shown = [_folded(name) or "(no name)" for name in names]
    taken = set(shown)
    last = {name: index for index, name in enumerate(shown)}
    counts: dict[str, int] = {}
    for index, name in enumerate(shown):
        if last[name] == index:
            continue
        count = counts.get(name, 0)
        while True:  # ends: each try takes a number no name holds yet, or an unused one
            count += 1
            candidate = f"{name} ({count})"
            if candidate not in taken:
                break
        counts[name] = count
        taken.add(candidate)
        shown[index] = candidate
    return shown


def _folded(name: str) -> str:
    """``name`` with the ``/`` beyond :data:`MAX_SCOPE_DEPTH` levels shown as U+2215."""
    if name.count("/") <= MAX_SCOPE_DEPTH:
        return name
    parts = name.split("/", MAX_SCOPE_DEPTH)
    return "/".join(parts[:-1]) + "/" + parts[-1].replace("/", _DEEP_SLASH)


def _id_prefix(names: list[str]) -> str:
    """A prefix for the operators' ids that no parameter or constant name holds: ``#``
    repeated once more than the longest run of ``#`` in them."""
    longest = max((len(run) for name in names for run in _HASHES.findall(name)), default=0)
    return "#" * (longest + 1)


def _source(text: str) -> str:
    """The node an input names: without a leading ``^`` (a control input)."""
    return text[1:] if text.startswith("^") else text


def _plain(name: str) -> str:
    """``name`` without an output port (``x:1`` -> ``x``)."""
    head, colon, port = name.rpartition(":")
    return head if colon and head and port.isdigit() else name


def _add_operator(
    graph: anf_ir_pb2.GraphProto,
    node: tensorboard_graph_pb2.NodeDef,
    key: str,
    name: str,
    last: dict[str, int],
    keys: list[str],
) -> None:
    scope = name.rsplit("/", 1)[0] if "/" in name else ""
    operator = graph.node.add(name=key, op_type=node.op, scope=scope, full_name=name)
    for text in node.input:
        source = _source(text)
        found = last.get(source)
        if found is None:
            found = last.get(_plain(source))
        edge = operator.input.add(name=_folded(_plain(source)) if found is None else keys[found])
        if text.startswith("^"):
            edge.type = anf_ir_pb2.InputProto.CONTROL_EDGE
    operator.output_type.CopyFrom(_output_type(node))
    if node.device:
        operator.attribute.add(name="device", value=_text_value(node.device))
    for attr_name in sorted(node.attr):
        if attr_name not in SHAPE_ATTRS:
            operator.attribute.add(name=attr_name, value=_attr_value(node.attr[attr_name]))


def _output_type(node: tensorboard_graph_pb2.NodeDef) -> anf_ir_pb2.TypeProto:
    """The node's output shapes and element type (either may be missing)."""
    found = anf_ir_pb2.TypeProto()
    element = _MS.DT_UNDEFINED
    for attr_name in TYPE_ATTRS:
        if attr_name in node.attr and node.attr[attr_name].WhichOneof("value") == "type":
            element = _ELEMENT_TYPES.get(node.attr[attr_name].type, _MS.DT_UNDEFINED)
            break
    shapes: list[tensorboard_pb2.TensorShapeProto] = []
    if "_output_shapes" in node.attr:
        shapes = list(node.attr["_output_shapes"].list.shape)
    elif "shape" in node.attr and node.attr["shape"].WhichOneof("value") == "shape":
        shapes = [node.attr["shape"].shape]
    if len(shapes) == 1:
        _fill_tensor(found, shapes[0], element)
    elif shapes:
        if element != _MS.DT_UNDEFINED:
            found.data_type = _MS.DT_TUPLE
        found.sequence_type.SetInParent()
        for shape in shapes:
            _fill_tensor(found.sequence_type.elem_types.add(), shape, element)
    elif element != _MS.DT_UNDEFINED:
        found.data_type = element
    return found


def _fill_tensor(
    proto: anf_ir_pb2.TypeProto,
    shape: tensorboard_pb2.TensorShapeProto,
    element: anf_ir_pb2.DataType,
) -> None:
    if element != _MS.DT_UNDEFINED:
        proto.data_type = _MS.DT_TENSOR
        proto.tensor_type.elem_type = element
    proto.tensor_type.shape.SetInParent()
    for dim in shape.dim:
        proto.tensor_type.shape.dim.add(size=dim.size)


def _constant_value(node: tensorboard_graph_pb2.NodeDef) -> anf_ir_pb2.ValueProto:
    """What a constant node holds: its ``value`` attribute (TensorFlow), its ``attr`` text
    (torch: ``{ value : 1}``), else its one attribute; nothing when none of those."""
    for attr_name in ("value", "attr"):
        if attr_name in node.attr:
            return _attr_value(node.attr[attr_name])
    shown = [name for name in node.attr if name not in SHAPE_ATTRS + TYPE_ATTRS]
    if len(shown) == 1:
        return _attr_value(node.attr[shown[0]])
    return anf_ir_pb2.ValueProto(dtype=_MS.DT_NONE)


def _text_value(text: str | bytes) -> anf_ir_pb2.ValueProto:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return anf_ir_pb2.ValueProto(dtype=_MS.DT_STRING, str_val=text)


def _type_text(value: int) -> str:
    known = _TB.DESCRIPTOR.values_by_number.get(value)
    return known.name if known is not None else f"DataType {value}"


def _shape_text(shape: tensorboard_pb2.TensorShapeProto) -> str:
    if shape.unknown_rank:
        return "unknown rank"
    return "[" + ", ".join(str(dim.size) for dim in shape.dim) + "]"


def _tensor_text(tensor: tensorboard_pb2.TensorProto) -> str:
    return f"{_type_text(tensor.dtype)} tensor {_shape_text(tensor.tensor_shape)}"


def _attr_value(attr: tensorboard_graph_pb2.AttrValue) -> anf_ir_pb2.ValueProto:
    """An attribute as a ValueProto the view shows as short text (a tensor by its type and
    shape, not its values)."""
    kind = attr.WhichOneof("value")
    if kind == "s":
        return _text_value(attr.s)
    if kind == "i":
        return anf_ir_pb2.ValueProto(dtype=_MS.DT_INT64, int_val=attr.i)
    if kind == "f":
        return anf_ir_pb2.ValueProto(dtype=_MS.DT_FLOAT32, float_val=attr.f)
    if kind == "b":
        return anf_ir_pb2.ValueProto(dtype=_MS.DT_BOOL, bool_val=attr.b)
    if kind == "type":
        return anf_ir_pb2.ValueProto(dtype=_MS.DT_TYPE, str_val=_type_text(attr.type))
    if kind == "shape":
        if attr.shape.unknown_rank:
            return _text_value("unknown rank")
        return anf_ir_pb2.ValueProto(dtype=_MS.DT_INTS64, int_vals=[d.size for d in attr.shape.dim])
    if kind == "tensor":
        return _text_value(_tensor_text(attr.tensor))
    if kind == "list":
        return _list_value(attr.list)
    return anf_ir_pb2.ValueProto(dtype=_MS.DT_NONE)


def _list_value(values: tensorboard_graph_pb2.AttrValue.ListValue) -> anf_ir_pb2.ValueProto:
    found = anf_ir_pb2.ValueProto(dtype=_MS.DT_LIST)
    if values.s:
        found.str_vals.extend(item.decode("utf-8", "replace") for item in values.s)
    elif values.i:
        found.int_vals.extend(values.i)
    elif values.f:
        found.float_vals.extend(values.f)
    elif values.b:
        found.bool_vals.extend(values.b)
    elif values.type:
        found.str_vals.extend(_type_text(item) for item in values.type)
    elif values.shape:
        found.str_vals.extend(_shape_text(item) for item in values.shape)
    elif values.tensor:
        found.str_vals.extend(_tensor_text(item) for item in values.tensor)
    return found


@dataclass
class NodeStats:
    """What a ``RunMetadata`` says of one node: the devices it ran on, its compute time
    (``all_end_rel_micros``, summed; None when not recorded) and the bytes its allocators
    report (summed; None when not recorded)."""

    devices: list[str]
    compute_us: float | None = None
    memory_bytes: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "devices": self.devices,
            "compute_us": self.compute_us,
            "memory_bytes": self.memory_bytes,
        }


def node_stats(metadata: tensorboard_graph_pb2.RunMetadata) -> dict[str, NodeStats]:
    """The statistics of each node ``metadata``'s ``step_stats`` names (by ``node_name``)."""
    found: dict[str, NodeStats] = {}
    for device in metadata.step_stats.dev_stats:
        for stats in device.node_stats:
            entry = found.setdefault(stats.node_name, NodeStats([]))
            if device.device not in entry.devices:
                entry.devices.append(device.device)
            micros = _compute_micros(stats)
            if micros is not None:
                entry.compute_us = (entry.compute_us or 0) + micros
            if stats.memory:
                total = sum(memory.total_bytes for memory in stats.memory)
                entry.memory_bytes = (entry.memory_bytes or 0) + total
    return found


def _compute_micros(stats: tensorboard_graph_pb2.NodeExecStats) -> float | None:
    """``all_end_rel_micros`` (or ``all_end_rel_nanos`` / 1000); None when neither is there."""
    if stats.HasField("all_end_rel_micros"):
        return float(stats.all_end_rel_micros)
    if stats.HasField("all_end_rel_nanos"):
        return stats.all_end_rel_nanos / 1000
    return None
