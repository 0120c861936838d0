"""A network graph or a dataset graph as the graph view lays it out: nodes in a scope tree.

The page draws what is visible and asks Graphviz to lay out only that, so it needs every
node once, with its scope, and the scope tree with counts (a collapsed scope is one box
labelled with what it holds). :func:`network_view` reads an anf_ir ``GraphProto`` (ours or
MindSpore's):

* an operator is named by its ``full_name`` (``Default/fc1-Dense/MatMul-op0``), or
  ``<scope>/<op_type>-op<name>`` without one; its scope is the path before the last ``/``,
  and every prefix of a scope is a scope too (the scope tree of :mod:`.graph_scopes`, which
  MindInsight's face builds its name scopes with);
* a parameter (a weight, a model input) sits in the innermost scope that holds all the
  operators using it, so a layer's weights are inside the layer; a constant is copied into
  each scope that uses it (MindInsight does the same), so one shared constant does not pull
  edges across the whole drawing; both are named ``<scope>/<name>``. A parameter or
  constant named by a path (``input/x``: MindSpore's names hold no ``/``, the TensorBoard
  graphs :mod:`sumlens.io.tb_graph` converts do) sits at that path, once, under its name,
  as does a constant no operator uses;
* inputs are node indices, each with its edge kind (0 data, 1 control); an input naming
  nothing is counted in ``problems``, not fatal.

:func:`dataset_view` turns a lineage ``DatasetGraph`` (the dataset pipeline, its last
operation at the root) into the same form: one node per operation, fed by its children.

Nothing here trusts the file: names are plain strings for the page to show as text, large
attribute values are left out, and the output grows with the message, never beyond it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from sumlens._proto import anf_ir_pb2, lineage_pb2
from sumlens.board.proto_text import (
    data_type_name,
    shortest_float32,
    text_format,
    type_name,
)
from sumlens.board.query.graph_scopes import ScopeTree, join, operator_name, scope_of

OPERATOR = "operator"
PARAMETER = "parameter"
CONST = "const"
DATASET = "dataset"
MAX_ATTRIBUTE_BYTES = 1024
"""Attribute values larger than this (serialized) are shown by their size only."""
_DT_TENSOR = anf_ir_pb2.DataType.Value("DT_TENSOR")
_CONTROL = anf_ir_pb2.InputProto.CONTROL_EDGE
_SEQUENCES = (anf_ir_pb2.DataType.Value("DT_LIST"), anf_ir_pb2.DataType.Value("DT_TUPLE"))


@dataclass
class ViewNode:
    """One node as the page gets it (``inputs``: [source index, 0 data / 1 control])."""

    name: str
    type: str
    kind: str
    scope: int = 0
    attrs: dict[str, str] = field(default_factory=dict)
    dtype: str = ""
    shape: list[list[int]] = field(default_factory=list)
    inputs: list[list[int]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The node's JSON form."""
        return {
            "name": self.name,
            "type": self.type,
            "kind": self.kind,
            "scope": self.scope,
            "attrs": self.attrs,
            "dtype": self.dtype,
            "shape": self.shape,
            "inputs": self.inputs,
        }


def _view(name: str, tree: ScopeTree, nodes: list[ViewNode], problems: list[str]) -> dict:
    return {
        "name": name,
        "scopes": _scopes_json(tree, nodes),
        "nodes": [node.to_json() for node in nodes],
        "problems": problems,
    }


def _scopes_json(tree: ScopeTree, nodes: list[ViewNode]) -> list[dict[str, Any]]:
    """Each scope with its parent, direct node count and total node count below it."""
    direct, total = tree.counts(node.scope for node in nodes)
    return [
        {"name": name, "parent": parent, "nodes": count, "total": whole}
        for name, parent, count, whole in zip(tree.names, tree.parents, direct, total, strict=True)
    ]


def network_view(proto: anf_ir_pb2.GraphProto) -> dict[str, Any]:
    """``proto`` as ``{name, scopes, nodes, problems}`` (see the module docstring)."""
    tree = ScopeTree()
    nodes: list[ViewNode] = []
    by_id: dict[str, int] = {}
    for operator in proto.node:
        name = operator_name(operator.scope, operator.op_type, operator.name, operator.full_name)
        scope = tree.add(scope_of(name))
        node = ViewNode(name, operator.op_type or "(no type)", OPERATOR, scope)
        node.attrs = {item.name: _attribute_text(item.value) for item in operator.attribute}
        node.dtype, node.shape = _dtype(operator.output_type), shapes(operator.output_type)
        if operator.name:
            by_id.setdefault(operator.name, len(nodes))
        nodes.append(node)
    parameters = {item.name: item for item in proto.parameters if item.name}
    constants = {item.key: item for item in proto.const_vals if item.key}
    users: dict[str, list[int]] = defaultdict(list)  # parameter name -> scopes using it
    pending: list[tuple[int, int, str]] = []  # (consumer, input position, variable name)
    unresolved: list[str] = []
    for index, operator in enumerate(proto.node):
        for edge in operator.input:
            kind = 1 if edge.type == _CONTROL else 0
            source = by_id.get(edge.name)
            if source is None and "/" in edge.name:
                source = by_id.get(edge.name.split("op")[-1])
            if source is not None:
                nodes[index].inputs.append([source, kind])
            elif edge.name in parameters or edge.name in constants:
                pending.append((index, len(nodes[index].inputs), edge.name))
                nodes[index].inputs.append([-1, kind])  # filled in once the source is placed
                if edge.name in parameters:
                    users[edge.name].append(nodes[index].scope)
            else:
                unresolved.append(edge.name)
    placed: dict[tuple[str, int], int] = {}
    for name, item in parameters.items():
        if "/" in name:  # a path: it sits there
            scope, shown = tree.add(scope_of(name)), name
        else:
            scopes = users.get(name, [0])
            scope = scopes[0]
            for other in scopes[1:]:
                scope = tree.common(scope, other)
            shown = join(tree.names[scope], name)
        placed[(name, -1)] = len(nodes)
        node = ViewNode(shown, "Parameter", PARAMETER, scope)
        node.dtype, node.shape = _dtype(item.type), shapes(item.type)
        nodes.append(node)
    for consumer, position, name in pending:
        source = placed.get((name, -1))
        if source is None and "/" in name:  # a constant named by a path: once, there
            source = placed[(name, -1)] = len(nodes)
            scope = tree.add(scope_of(name))
            nodes.append(_constant(constants[name], name, scope))
        elif source is None:  # a constant: one copy per scope using it
            scope = nodes[consumer].scope
            source = placed.get((name, scope))
            if source is None:
                source = placed[(name, scope)] = len(nodes)
                nodes.append(_constant(constants[name], join(tree.names[scope], name), scope))
        nodes[consumer].inputs[position][0] = source
    used = {name for name, _ in placed}
    for name, constant in constants.items():  # none uses it: shown once, at its path or the top
        if name not in used:
            scope = tree.add(scope_of(name))
            nodes.append(_constant(constant, name, scope))
    problems = []
    if unresolved:
        problems.append(
            f"{len(unresolved)} input(s) name no node, parameter or constant "
            f"(first: {unresolved[0]!r}); those edges are not drawn"
        )
    return _view(proto.name, tree, nodes, problems)


def _dtype(proto: anf_ir_pb2.TypeProto) -> str:
    """The type's name; empty when it names no data type (a TensorBoard graph's shapes
    often come without one)."""
    return type_name(proto) if proto.data_type else ""


def _constant(proto: anf_ir_pb2.NamedValueProto, name: str, scope: int) -> ViewNode:
    node = ViewNode(name, "Const", CONST, scope)
    node.dtype = data_type_name(proto.value.dtype)
    node.attrs = {"value": _attribute_text(proto.value)}
    if proto.value.dtype == _DT_TENSOR:
        node.shape = [list(proto.value.tensor_val.dims)]
    return node


def _attribute_text(value: anf_ir_pb2.ValueProto) -> str:
    """A value as short text: ``[1, 1]`` for a list of ints, ``true``, ``"NCHW"``; values
    of several fields or nested messages in protobuf's text format."""
    size = value.ByteSize()
    if size > MAX_ATTRIBUTE_BYTES:
        return f"({data_type_name(value.dtype)}, {size} bytes: not shown)"
    fields = [(item, got) for item, got in value.ListFields() if item.name != "dtype"]
    if not fields and value.dtype in _SEQUENCES:
        return "[]"
    if len(fields) == 1 and fields[0][0].message_type is None:
        got = fields[0][1]
        if fields[0][0].type == fields[0][0].TYPE_FLOAT:  # float32: its shortest digits
            got = shortest_float32(got) if isinstance(got, float) else map(shortest_float32, got)
        if isinstance(got, str | bytes | int | float):
            return _scalar_text(got)
        return "[" + ", ".join(_scalar_text(item) for item in got) + "]"
    return text_format(value).strip()


def _scalar_text(value: str | bytes | int | float) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | bytes):
        return repr(value)
    return str(value)


def shapes(proto: anf_ir_pb2.TypeProto) -> list[list[int]]:
    """The shapes a TypeProto declares: one per tensor it holds, [] for a scalar."""
    if proto.HasField("tensor_type"):
        return [list(dim.size for dim in proto.tensor_type.shape.dim)]
    if proto.HasField("sequence_type"):
        found: list[list[int]] = []
        for element in proto.sequence_type.elem_types:
            found.extend(shapes(element))
        return found
    return [[]] if proto.HasField("data_type") else []


def dataset_view(proto: lineage_pb2.DatasetGraph) -> dict[str, Any]:
    """A dataset pipeline as ``{name, scopes, nodes, problems}``: each operation a node
    named ``<op_type>-<n>`` (n: depth-first order from the last operation), fed by the
    operations below it."""
    tree = ScopeTree()
    nodes: list[ViewNode] = []
    stack: list[tuple[lineage_pb2.DatasetGraph, int]] = [(proto, -1)]
    while stack:
        message, consumer = stack.pop()
        values = _parameters(message.parameter)
        op_type = str(values.pop("op_type", "") or "Dataset")
        node = ViewNode(f"{op_type}-{len(nodes)}", op_type, DATASET)
        node.attrs = {key: _plain(value) for key, value in values.items()}
        if message.HasField("sampler"):
            node.attrs["sampler"] = _plain(_operation(message.sampler))
        for number, operation in enumerate(message.operations):
            node.attrs[f"operation {number}"] = _plain(_operation(operation))
        if consumer >= 0:
            nodes[consumer].inputs.append([len(nodes), 0])
        index = len(nodes)
        nodes.append(node)
        stack.extend((child, index) for child in reversed(message.children))
    return _view("dataset graph", tree, nodes, [])


def _parameters(parameter: lineage_pb2.OperationParameter) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key in ("mapStr", "mapBool", "mapInt", "mapDouble"):
        found.update(getattr(parameter, key).items())
    for name, values in parameter.mapStrList.items():
        found[name] = list(values.strValue)
    return found


def _operation(operation: lineage_pb2.Operation) -> dict[str, Any]:
    found = _parameters(operation.operationParam)
    if operation.size:
        found["size"] = list(operation.size)
    if operation.weights:
        found["weights"] = list(operation.weights)
    return found


def _plain(value: Any) -> str:
    """A parameter value as one short line of text."""
    if isinstance(value, dict):
        return ", ".join(f"{key}={_plain(item)}" for key, item in value.items())
    if isinstance(value, list):
        return "[" + ", ".join(_plain(item) for item in value) + "]"
    return str(value)
