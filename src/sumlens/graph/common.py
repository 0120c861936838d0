"""Pieces shared by the operator graph and the module-hierarchy graph.

Scope names follow MindSpore: every node of a network lies under ``Default`` and each
module on the way adds ``<attribute>-<Class>``, so ``model.layer1[0].conv1`` becomes
``Default/layer1-Sequential/0-BasicBlock/conv1-Conv2d``. MindInsight splits names at
``/`` and refuses names holding ``<``, ``>`` or ``"``, so those characters are replaced.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import torch

from sumlens._proto import anf_ir_pb2

DataType = anf_ir_pb2.DataType
ROOT_SCOPE = "Default"
MAX_ATTRIBUTE_BYTES = 1000
"""MindInsight drops (with a logged warning) attribute values over 1024 bytes; we shorten them."""

_UNSAFE = re.compile(r'[/<>"]')

_DTYPES: dict[torch.dtype, DataType] = {
    torch.bool: DataType.DT_BOOL,
    torch.int8: DataType.DT_INT8,
    torch.int16: DataType.DT_INT16,
    torch.int32: DataType.DT_INT32,
    torch.int64: DataType.DT_INT64,
    torch.uint8: DataType.DT_UINT8,
    torch.float16: DataType.DT_FLOAT16,
    torch.float32: DataType.DT_FLOAT32,
    torch.float64: DataType.DT_FLOAT64,
}
for _name, _code in (
    ("uint16", DataType.DT_UINT16),
    ("uint32", DataType.DT_UINT32),
    ("uint64", DataType.DT_UINT64),
):
    if hasattr(torch, _name):
        _DTYPES[getattr(torch, _name)] = _code


def data_type(dtype: torch.dtype) -> DataType:
    """The ``DataType`` of a torch dtype.

    Only codes MindInsight 2.3.1 knows are used (its enum stops at 42): bfloat16 and the
    float8 types become ``DT_BASE_FLOAT``, complex types and anything else
    ``DT_UNDEFINED``; the exact torch dtype is kept in the node's ``dtype`` attribute.
    """
    code = _DTYPES.get(dtype)
    if code is not None:
        return code
    if dtype.is_floating_point:
        return DataType.DT_BASE_FLOAT
    return DataType.DT_UNDEFINED


def safe(text: str) -> str:
    """``text`` without the characters MindInsight cannot show in a node name (and ``/``)."""
    return _UNSAFE.sub("_", text) or "_"


def scope_of(path: str, classes: Mapping[str, str]) -> str:
    """The MindSpore-style scope of the module at dotted ``path`` ('' is the root).

    ``classes`` maps each module path to its class name.
    """
    if not path:
        return ROOT_SCOPE
    parts = [ROOT_SCOPE]
    prefix = ""
    for name in path.split("."):
        prefix = f"{prefix}.{name}" if prefix else name
        parts.append(safe(f"{name}-{classes.get(prefix, 'Module')}"))
    return "/".join(parts)


def module_classes(module: torch.nn.Module) -> dict[str, str]:
    """Path -> class name of every submodule (the root is '')."""
    return {path: type(sub).__name__ for path, sub in module.named_modules(remove_duplicate=False)}


def tensor_type(dtype: torch.dtype, shape: Any) -> anf_ir_pb2.TypeProto:
    """A tensor ``TypeProto``; symbolic sizes are written as -1 with the symbol as name."""
    proto = anf_ir_pb2.TypeProto(data_type=DataType.DT_TENSOR)
    proto.tensor_type.elem_type = data_type(dtype)
    proto.tensor_type.shape.SetInParent()  # a 0-d tensor has a shape too: no dims
    dims = proto.tensor_type.shape.dim
    for size in shape:
        dim = dims.add()
        if isinstance(size, int):
            dim.size = size
        else:  # a SymInt of a data-dependent or dynamic size
            dim.size = -1
            dim.name = str(size)
    return proto


def type_of(value: Any) -> anf_ir_pb2.TypeProto:
    """The ``TypeProto`` of a traced value (a (fake) tensor, a tuple of them, a number ...)."""
    if isinstance(value, torch.Tensor):
        return tensor_type(value.dtype, value.shape)
    if isinstance(value, list | tuple):
        proto = anf_ir_pb2.TypeProto(data_type=DataType.DT_TUPLE)
        proto.sequence_type.SetInParent()
        for item in value:
            proto.sequence_type.elem_types.add().CopyFrom(type_of(item))
        return proto
    if value is None:
        return anf_ir_pb2.TypeProto(data_type=DataType.DT_NONE)
    if isinstance(value, bool | torch.SymBool):
        return anf_ir_pb2.TypeProto(data_type=DataType.DT_BOOL)
    if isinstance(value, int | torch.SymInt):
        return anf_ir_pb2.TypeProto(data_type=DataType.DT_INT64)
    if isinstance(value, float | torch.SymFloat):
        return anf_ir_pb2.TypeProto(data_type=DataType.DT_FLOAT64)
    return anf_ir_pb2.TypeProto(data_type=DataType.DT_UNDEFINED)


def value_of(value: Any) -> anf_ir_pb2.ValueProto:
    """A ``ValueProto`` for a constant or attribute (numbers, strings, lists, dtypes ...)."""
    proto = anf_ir_pb2.ValueProto()
    if value is None:
        proto.dtype = DataType.DT_NONE
    elif isinstance(value, bool):
        proto.dtype, proto.bool_val = DataType.DT_BOOL, value
    elif isinstance(value, int) and -(2**63) <= value < 2**63:
        proto.dtype, proto.int_val = DataType.DT_INT64, value
    elif isinstance(value, float):
        proto.dtype, proto.double_val = DataType.DT_FLOAT64, value
    elif isinstance(value, str):
        proto.dtype, proto.str_val = DataType.DT_STRING, value
    elif isinstance(value, torch.dtype):
        proto.dtype, proto.str_val = DataType.DT_TYPE, str(value).removeprefix("torch.")
    elif isinstance(value, list | tuple) and value and all(_plain_int(v) for v in value):
        proto.dtype = DataType.DT_INTS64
        proto.int_vals.extend(value)
    elif isinstance(value, list | tuple) and value and all(isinstance(v, float) for v in value):
        proto.dtype = DataType.DT_FLOATS64
        proto.double_vals.extend(value)
    elif isinstance(value, list | tuple) and value and all(isinstance(v, bool) for v in value):
        proto.dtype = DataType.DT_BOOLS
        proto.bool_vals.extend(value)
    elif isinstance(value, list | tuple):
        proto.dtype = DataType.DT_TUPLE
        for item in value:
            proto.values.add().CopyFrom(value_of(item))
    else:
        proto.dtype, proto.str_val = DataType.DT_STRING, str(value)
    if proto.ByteSize() > MAX_ATTRIBUTE_BYTES:
        text = str(value)
        proto = anf_ir_pb2.ValueProto(
            dtype=DataType.DT_STRING, str_val=text[: MAX_ATTRIBUTE_BYTES // 2]
        )
    return proto


def _plain_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63


def const_key(value: Any) -> tuple[str, str]:
    """A hashable identity of a constant (type and text, so 1, 1.0 and True stay apart)."""
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, repr(value))


def add_attribute(node: anf_ir_pb2.NodeProto, name: str, value: Any) -> None:
    """Append attribute ``name`` = ``value`` to ``node``."""
    attr = node.attribute.add()
    attr.name = name
    attr.value.CopyFrom(value_of(value))
