"""Protobuf messages as the dashboard's API serves them as JSON: every message can be.

protobuf's ``json_format.MessageToDict`` writes a NaN or an infinity of a float field as the
strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``, and refuses one held by a
``google.protobuf.Value`` (``SerializeToJsonError``: such a string would read back as a
string value), which is where TensorBoard's hparams keep each hyper-parameter: one
``add_hparams({"lr": float("nan")})`` made ``/api/v1/message`` answer 500. The API serves
non-finite numbers as JSON can carry them, ``null``, as the scalar routes do
(:func:`sumlens.board.responses.json_response`); :func:`message_json` is the one place a
message becomes JSON for it. (The MindInsight face keeps MindInsight's own printing:
:mod:`sumlens.board.proto_text`.)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message

_VALUE = "google.protobuf.Value"
_STRUCTURED = frozenset({_VALUE, "google.protobuf.Struct", "google.protobuf.ListValue"})
"""The well-known types JSON writes as plain JSON values, where a number has no string form."""
_FLOATS = (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE)
_NON_FINITE = frozenset({"NaN", "Infinity", "-Infinity"})


def message_json(message: Message) -> Any:
    """``message`` as ``MessageToDict(message, preserving_proto_field_name=True)`` gives it
    (a dict; for a ``Value``, ``Struct`` or ``ListValue`` the JSON value it stands for),
    except that every NaN and infinity, of a float field or of a ``Value``, is None."""
    if _reaches(message.DESCRIPTOR, _VALUE):
        copy = type(message)()
        copy.CopyFrom(message)
        _null_non_finite_values(copy)
        message = copy
    found = MessageToDict(message, preserving_proto_field_name=True)
    if message.DESCRIPTOR.full_name not in _STRUCTURED:
        # the stub types DESCRIPTOR as either class; descriptor.Descriptor's metaclass takes upb's
        _null_non_finite_floats(message.DESCRIPTOR, found)  # type: ignore[arg-type]
    return found


def _entries(value: Any) -> Any:
    """The messages a message-typed field holds: its one message, a repeated field's, or a
    map's values (told apart by the value: protobuf 5 and 7 mark repeated fields apart)."""
    if isinstance(value, Message):
        return (value,)
    if hasattr(value, "items"):
        return value.values()
    return value


def _null_non_finite_values(message: Message) -> None:
    """Make each ``Value`` in ``message`` holding a NaN or an infinity a null ``Value``."""
    if (
        message.DESCRIPTOR.full_name == _VALUE
        and message.WhichOneof("kind") == "number_value"
        and not math.isfinite(message.number_value)  # type: ignore[attr-defined]
    ):
        message.null_value = 0  # type: ignore[attr-defined]
        return
    for field, value in message.ListFields():
        target = _target(field)
        if target is None or not _reaches(target, _VALUE):
            continue
        for inner in _entries(value):
            _null_non_finite_values(inner)


def _target(field: FieldDescriptor) -> Descriptor | None:
    """The message type ``field`` holds (a map's value type for a map), or None."""
    message_type = field.message_type
    if message_type is None:
        return None
    if message_type.GetOptions().map_entry:
        return message_type.fields_by_name["value"].message_type
    return message_type


def _is_map(field: FieldDescriptor) -> bool:
    """Whether ``field`` is a map (its message type a map entry)."""
    message_type = field.message_type
    return message_type is not None and message_type.GetOptions().map_entry


def _float_field(field: FieldDescriptor) -> bool:
    """Whether ``field`` holds floats or doubles (a map's values, for a map)."""
    message_type = field.message_type
    if message_type is not None and message_type.GetOptions().map_entry:
        return message_type.fields_by_name["value"].type in _FLOATS
    return field.type in _FLOATS


def _null_non_finite_floats(descriptor: Descriptor, found: dict[str, Any]) -> None:
    """Replace, in ``found`` (``descriptor``'s message as a dict), the strings
    ``MessageToDict`` writes for non-finite float fields by None."""
    for name, value in found.items():
        field = descriptor.fields_by_name.get(name)
        if field is None:
            continue
        if _float_field(field):
            if isinstance(value, str):
                found[name] = None if value in _NON_FINITE else value
            elif isinstance(value, list):
                found[name] = [None if item in _NON_FINITE else item for item in value]
            elif isinstance(value, dict):
                found[name] = {k: None if v in _NON_FINITE else v for k, v in value.items()}
            continue
        target = _target(field)
        if target is None or target.full_name in _STRUCTURED or not _reaches_float(target):
            continue
        inner = value.values() if _is_map(field) else value
        for each in [inner] if isinstance(inner, dict) else inner:
            _null_non_finite_floats(target, each)


@functools.cache
def _reaches(descriptor: Descriptor, full_name: str) -> bool:
    """Whether a message of ``descriptor`` can hold a message named ``full_name``."""
    return _search(descriptor, lambda each: each.full_name == full_name)


@functools.cache
def _reaches_float(descriptor: Descriptor) -> bool:
    """Whether a message of ``descriptor`` can hold a float or double field (outside the
    well-known JSON types)."""

    def holds(each: Descriptor) -> bool:
        return each.full_name not in _STRUCTURED and any(map(_float_field, each.fields))

    return _search(descriptor, holds)


def _search(descriptor: Descriptor, wanted: Callable[[Descriptor], bool]) -> bool:
    """Whether ``wanted(d)`` holds for ``descriptor`` or a message type below it."""
    seen: set[str] = set()
    todo = [descriptor]
    while todo:
        each = todo.pop()
        if each.full_name in seen:
            continue
        seen.add(each.full_name)
        if wanted(each):
            return True
        todo.extend(inner for field in each.fields if (inner := _target(field)) is not None)
    return False
