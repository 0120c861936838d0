"""An ``ExportedProgram`` (from ``torch.export``) as a MindSpore ``GraphProto``.

Layout as in the graphs MindSpore writes (and MindInsight's graph view reads):

* every operator is a ``NodeProto`` whose ``name`` is a numeric id ("1", "2", ...),
  ``op_type`` the ATen operator in CamelCase (``aten.max_pool2d`` -> ``MaxPool2d``,
  ``operator.getitem`` -> ``TupleGetItem`` as MindSpore calls it), ``scope`` the module
  it ran in (``Default/conv1-Conv2d``), ``full_name`` ``<scope>/<op_type>-op<k>``, and
  ``output_type`` the traced dtype and shape;
* inputs name other nodes by id, parameters and buffers by their dotted name
  (``conv1.weight``), the model's inputs by their argument name, and constants by key
  (``cst1``): tensor constants and scalars given where the operator takes a tensor
  (``x + 1``). Other literal arguments (strides, dims ...) become node attributes, named
  as in the operator's schema;
* ``parameters`` lists the model inputs, parameters and buffers with dtype and shape.
"""

from __future__ import annotations

import operator
from typing import Any

import torch
from torch import fx

from sumlens._proto import anf_ir_pb2
from sumlens.graph.common import (
    ROOT_SCOPE,
    add_attribute,
    const_key,
    module_classes,
    safe,
    scope_of,
    tensor_type,
    type_of,
    value_of,
)

EXPORT_PATH = "torch.export"

_TENSOR_LIKE = frozenset({"Tensor", "Scalar", "number"})
_OP_TYPES = {operator.getitem: "TupleGetItem"}


def camel(name: str) -> str:
    """``max_pool2d_with_indices`` -> ``MaxPool2dWithIndices`` (a trailing ``_`` is dropped)."""
    parts = [part for part in name.split("_") if part]
    return "".join(part[:1].upper() + part[1:] for part in parts) or name


def op_type_of(target: Any) -> str:
    """The ``op_type`` of an fx ``call_function`` target."""
    if target in _OP_TYPES:
        return _OP_TYPES[target]
    if isinstance(target, torch._ops.OpOverload):
        return safe(camel(target._opname))
    name = getattr(target, "__name__", None) or type(target).__name__
    return safe(camel(str(name)))


class _Builder:
    def __init__(self, program: torch.export.ExportedProgram, module: torch.nn.Module) -> None:
        self.program = program
        self.classes = module_classes(module)
        self.graph = anf_ir_pb2.GraphProto(name=f"{type(module).__name__} ({EXPORT_PATH})")
        self.names: dict[fx.Node, str] = {}
        """fx node -> the name inputs use for it (node id, parameter name or const key)."""
        self.consts: dict[tuple[str, str], str] = {}
        self.counters: dict[tuple[str, str], int] = {}
        self.parameters: dict[str, fx.Node] = {}

    # ---- inputs of the graph -----------------------------------------------------------

    def placeholders(self) -> None:
        kinds = torch.export.graph_signature.InputKind
        specs = {
            spec.arg.name: spec
            for spec in self.program.graph_signature.input_specs
            if hasattr(spec.arg, "name")
        }
        for node in self.program.graph.nodes:
            if node.op != "placeholder":
                continue
            spec = specs.get(node.name)
            value = node.meta.get("val")
            if spec is not None and spec.kind in (kinds.PARAMETER, kinds.BUFFER) and spec.target:
                self._parameter(node, spec.target, value)
            elif spec is not None and spec.kind == kinds.CONSTANT_TENSOR:
                self.names[node] = self._tensor_const(value)
            elif isinstance(value, torch.Tensor):
                self._parameter(node, safe(node.name), value)
            # other user inputs (numbers, flags) were specialized into the graph: no node

    def _parameter(self, node: fx.Node, name: str, value: Any) -> None:
        self.names[node] = name
        if name not in self.parameters:
            self.parameters[name] = node
            param = self.graph.parameters.add(name=name)
            param.type.CopyFrom(type_of(value))

    def _tensor_const(self, value: Any) -> str:
        key = f"cst{len(self.consts) + 1}"
        self.consts[("tensor", key)] = key
        entry = self.graph.const_vals.add(key=key)
        entry.value.dtype = anf_ir_pb2.DataType.DT_TENSOR
        if isinstance(value, torch.Tensor):
            entry.value.tensor_val.dims.extend(int(s) for s in value.shape)
            entry.value.tensor_val.data_type = tensor_type(value.dtype, ()).tensor_type.elem_type
        return key

    def _scalar_const(self, value: Any) -> str:
        ident = const_key(value)
        key = self.consts.get(ident)
        if key is None:
            key = f"cst{len(self.consts) + 1}"
            self.consts[ident] = key
            self.graph.const_vals.add(key=key).value.CopyFrom(value_of(value))
        return key

    # ---- operators ---------------------------------------------------------------------

    def operators(self) -> None:
        for node in self.program.graph.nodes:
            if node.op == "get_attr":
                self.names[node] = self._tensor_const(_get_attr(self.program, node.target))
            elif node.op == "call_function":
                self._operator(node)
            elif node.op == "output":
                self._outputs(node)

    def _operator(self, node: fx.Node) -> None:
        op_type = op_type_of(node.target)
        path = _module_path(node)
        scope = scope_of(path, self.classes) if path is not None else ROOT_SCOPE
        index = self.counters.get((scope, op_type), 0)
        self.counters[(scope, op_type)] = index + 1
        proto = self.graph.node.add()
        proto.name = str(len(self.graph.node))
        proto.op_type = op_type
        proto.scope = scope
        proto.full_name = f"{scope}/{op_type}-op{index}"
        proto.instance_name = node.name
        self._arguments(node, proto)
        value = node.meta.get("val")
        proto.output_type.CopyFrom(type_of(value))
        if isinstance(node.target, torch._ops.OpOverload):
            add_attribute(proto, "aten", str(node.target))
        unmapped = _unmapped_dtypes(value)
        if unmapped:
            add_attribute(proto, "dtype", ", ".join(unmapped))
        self.names[node] = proto.name

    def _arguments(self, node: fx.Node, proto: anf_ir_pb2.NodeProto) -> None:
        schema = getattr(node.target, "_schema", None)
        if schema is None:  # operator.getitem, higher-order ops, Python functions
            for value in node.args:
                self._input(proto, value, as_const=True)
            for name, value in node.kwargs.items():
                if not self._input(proto, value, as_const=False):
                    add_attribute(proto, name, value)
            return
        given = dict(zip((arg.name for arg in schema.arguments), node.args, strict=False))
        given.update(node.kwargs)
        for arg in schema.arguments:
            if arg.name not in given:
                continue
            value = given[arg.name]
            kind = str(arg.type).removeprefix("Optional[").removesuffix("]")
            if self._input(proto, value, as_const=kind in _TENSOR_LIKE):
                continue
            if value is not None:
                add_attribute(proto, arg.name, value)

    def _input(self, proto: anf_ir_pb2.NodeProto, value: Any, as_const: bool) -> bool:
        """Add ``value`` as input(s) of ``proto`` if it is (or holds) graph values or, with
        ``as_const``, a plain number; False if it is something else (an attribute)."""
        nodes = [item for item in _flatten(value) if isinstance(item, fx.Node)]
        if nodes:
            for item in nodes:
                name = self.names.get(item)
                if name is not None:
                    proto.input.add(name=name, type=anf_ir_pb2.InputProto.DATA_EDGE)
            return True
        if as_const and isinstance(value, bool | int | float):
            proto.input.add(name=self._scalar_const(value), type=anf_ir_pb2.InputProto.DATA_EDGE)
            return True
        return False

    def _outputs(self, node: fx.Node) -> None:
        kinds = torch.export.graph_signature.OutputKind
        user = {
            spec.arg.name
            for spec in self.program.graph_signature.output_specs
            if spec.kind == kinds.USER_OUTPUT and hasattr(spec.arg, "name")
        }
        for item in _flatten(node.args):
            if isinstance(item, fx.Node) and item.name in user and item in self.names:
                out = self.graph.outputs.add(name=self.names[item])
                out.type.CopyFrom(type_of(item.meta.get("val")))


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return [leaf for item in value for leaf in _flatten(item)]
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _flatten(item)]
    return [value]


def _module_path(node: fx.Node) -> str | None:
    """Dotted path of the innermost module the operator ran in ('' for the root)."""
    stack = node.meta.get("nn_module_stack")
    if not stack:
        return None
    path, _ = list(stack.values())[-1]
    return str(path)


def _get_attr(program: torch.export.ExportedProgram, target: str) -> Any:
    value: Any = program.graph_module
    for part in str(target).split("."):
        value = getattr(value, part, None)
    return value


def _unmapped_dtypes(value: Any) -> list[str]:
    """Torch dtypes in ``value`` that MindInsight's DataType cannot name (bfloat16 ...)."""
    found = []
    for item in _flatten(value):
        if isinstance(item, torch.Tensor):
            code = tensor_type(item.dtype, ()).tensor_type.elem_type
            if code in (anf_ir_pb2.DataType.DT_BASE_FLOAT, anf_ir_pb2.DataType.DT_UNDEFINED):
                found.append(str(item.dtype).removeprefix("torch."))
    return found


def graph_from_program(
    program: torch.export.ExportedProgram, module: torch.nn.Module
) -> anf_ir_pb2.GraphProto:
    """The ``GraphProto`` of ``program``, exported from ``module`` (for its class names)."""
    builder = _Builder(program, module)
    builder.placeholders()
    builder.operators()
    return builder.graph
