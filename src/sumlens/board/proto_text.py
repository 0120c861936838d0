"""Protobuf values as MindInsight 2.3.1 turns them into text and JSON.

MindInsight shows some protobuf fields through protobuf's own printers: graph attributes in
the text format (``str(message)``) and lineage through ``json_format.MessageToDict``, both
with protobuf 3.20's pure-Python implementation. Our protobuf (upb, 5.29 to 7) prints
differently (``1`` for the float 1.0, UTF-8 unescaped), so the printers are written out
here to match what MindInsight's users see. MindInsight's ``DataType`` enum is also older
than ours (:data:`KNOWN_DATA_TYPES`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sumlens._proto import anf_ir_pb2, lineage_pb2

KNOWN_DATA_TYPES = 43
"""MindInsight 2.3.1's anf_ir ``DataType`` stops at 42 (DT_REF); its protobuf (proto2) reads
a later value as an unknown field, so the field looks unset: 0, DT_UNDEFINED."""
_DATA_TYPES = anf_ir_pb2.DataType.DESCRIPTOR
_DT_TENSOR = anf_ir_pb2.DataType.Value("DT_TENSOR")
_DT_TUPLE = anf_ir_pb2.DataType.Value("DT_TUPLE")
_ESCAPES = {9: r"\t", 10: r"\n", 13: r"\r", 34: r"\"", 39: r"\'", 92: r"\\"}
_BYTE_TEXT = [
    _ESCAPES.get(byte, chr(byte) if 32 <= byte < 127 else f"\\{byte:03o}") for byte in range(256)
]


def known_data_type(value: int) -> int:
    """A ``DataType`` value as MindInsight reads it (see :data:`KNOWN_DATA_TYPES`)."""
    return value if value < KNOWN_DATA_TYPES else 0


def data_type_name(value: int) -> str:
    """The name MindInsight gives a ``DataType`` value, e.g. ``DT_FLOAT32``."""
    return _DATA_TYPES.values_by_number[known_data_type(value)].name


def type_name(proto: anf_ir_pb2.TypeProto, listed: bool = False) -> str:
    """A graph value's type: ``DT_TENSOR[DT_FLOAT32]``, a tuple's element types in brackets
    (``DT_TUPLE[DT_INT32, DT_FLOAT32]``), or the plain data type's name.

    With ``listed``, a tuple's element types read as MindInsight shows them, Python's list of
    their names (``DT_TUPLE['DT_INT32', 'DT_FLOAT32']``); the own graph view shows the plain
    form.
    """
    data_type = known_data_type(proto.data_type)
    name = data_type_name(data_type)
    if data_type == _DT_TENSOR:
        return f"{name}[{data_type_name(proto.tensor_type.elem_type)}]"
    if data_type == _DT_TUPLE:
        elements = [type_name(element, listed) for element in proto.sequence_type.elem_types]
        return f"{name}{elements}" if listed else f"{name}[{', '.join(elements)}]"
    return name


def shortest_float32(value: float) -> float:
    """The float of fewest significant digits (6 or more) that rounds to the float32 ``value``.

    How protobuf prints a float field: ``0.1`` rather than ``0.10000000149011612``.
    """
    if math.isnan(value) or math.isinf(value):
        return value
    digits = 6
    shortest = float(f"{value:.{digits}g}")
    while float(np.float32(shortest)) != value:
        digits += 1
        shortest = float(f"{value:.{digits}g}")
    return shortest


def text_format(message: Any, indent: int = 0) -> str:
    """``message`` in protobuf's text format, as the pure-Python printer writes it.

    Set fields in field-number order; floats as :func:`shortest_float32`, doubles as Python
    prints them; strings and bytes C-escaped, non-ASCII bytes in octal; data types
    MindInsight does not know left out.
    """
    lines = []
    pad = " " * indent
    for descriptor, value in message.ListFields():
        for item in _items(value):
            if descriptor.type == descriptor.TYPE_ENUM and _unknown_data_type(descriptor, item):
                continue
            if descriptor.type == descriptor.TYPE_MESSAGE:
                inner = text_format(item, indent + 2)
                lines.append(f"{pad}{descriptor.name} {{\n{inner}{pad}}}\n")
            else:
                lines.append(f"{pad}{descriptor.name}: {_text(descriptor, item)}\n")
    return "".join(lines)


def message_dict(message: Any) -> dict[str, Any]:
    """``message`` as ``MessageToDict(message, preserving_proto_field_name=True)`` gives it.

    Set fields only; 64-bit integers as strings; floats as :func:`shortest_float32`; NaN and
    infinities as ``"NaN"``, ``"Infinity"``, ``"-Infinity"``; enums by name; maps as dicts.
    """
    found: dict[str, Any] = {}
    for descriptor, value in message.ListFields():
        if hasattr(value, "items") and not hasattr(value, "ListFields"):  # a map
            entry = descriptor.message_type.fields_by_name["value"]
            found[descriptor.name] = {key: _json(entry, item) for key, item in value.items()}
        elif isinstance(value, (str, bytes, int, float)) or hasattr(value, "ListFields"):
            found[descriptor.name] = _json(descriptor, value)
        else:
            found[descriptor.name] = [_json(descriptor, item) for item in value]
    return found


def _items(value: Any) -> Any:
    """The values of a field: a repeated field's container, or the one value in a list.

    (Told apart by the value: protobuf 5 marks repeated fields with ``label``, 7 with
    ``is_repeated``, and neither has the other.)
    """
    single = isinstance(value, (str, bytes, int, float)) or hasattr(value, "ListFields")
    return [value] if single else value


def _unknown_data_type(descriptor: Any, value: int) -> bool:
    return descriptor.enum_type.full_name == _DATA_TYPES.full_name and value >= KNOWN_DATA_TYPES


def _text(descriptor: Any, value: Any) -> str:
    if descriptor.type == descriptor.TYPE_ENUM:
        found = descriptor.enum_type.values_by_number.get(value)
        return found.name if found is not None else str(value)
    if descriptor.type in (descriptor.TYPE_STRING, descriptor.TYPE_BYTES):
        data = value.encode("utf-8") if isinstance(value, str) else value
        return '"' + "".join(_BYTE_TEXT[byte] for byte in data) + '"'
    if descriptor.type == descriptor.TYPE_BOOL:
        return "true" if value else "false"
    if descriptor.type == descriptor.TYPE_FLOAT:
        return str(shortest_float32(value))
    return str(value)


def _json(descriptor: Any, value: Any) -> Any:
    if hasattr(value, "ListFields"):
        return message_dict(value)
    if descriptor.type == descriptor.TYPE_ENUM:
        found = descriptor.enum_type.values_by_number.get(value)
        return found.name if found is not None else value
    wide = (descriptor.TYPE_INT64, descriptor.TYPE_UINT64, descriptor.TYPE_SINT64)
    if descriptor.type in (*wide, descriptor.TYPE_FIXED64, descriptor.TYPE_SFIXED64):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if descriptor.type == descriptor.TYPE_FLOAT:
            return shortest_float32(value)
    return value


def dataset_graph_json(graph: lineage_pb2.DatasetGraph) -> dict[str, Any]:
    """A dataset graph as MindInsight shows it: each node's parameters, operations and
    sampler merged into one object, with its ``children``."""
    node = _dataset_node(graph)
    node["children"] = [dataset_graph_json(child) for child in graph.children]
    return node


def _dataset_node(graph: lineage_pb2.DatasetGraph) -> dict[str, Any]:
    node = _parameters(graph.parameter)
    if graph.operations:
        node["operations"] = [_operation(item) for item in graph.operations]
    sampler = _operation(graph.sampler)
    if sampler:
        node["sampler"] = sampler
    return node


def _operation(operation: lineage_pb2.Operation) -> dict[str, Any]:
    found = _parameters(operation.operationParam)
    # MindInsight collects sizes and weights into one list, shown under both keys
    gathered: list[Any] = []
    for key in ("size", "weights"):
        gathered.extend(getattr(operation, key))
        if gathered:
            found[key] = gathered
    return found


def _parameters(parameter: lineage_pb2.OperationParameter) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key in ("mapStr", "mapBool", "mapInt", "mapDouble"):
        found.update(
            {
                name: None if value == "None" else value
                for name, value in getattr(parameter, key).items()
            }
        )
    for name, values in parameter.mapStrList.items():
        found[name] = [item or None for item in values.strValue]
    return found
