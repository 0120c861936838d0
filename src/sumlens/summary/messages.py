"""Graph, lineage and landscape values: the protobuf messages ``SummaryRecord`` writes.

A value of these plugins is its message, or any object that knows its message: the
value protocol, :class:`MessageValue`, is a ``plugin`` attribute naming the plugin the
value belongs to and a ``to_proto()`` method returning the message. The lineage builders
(:mod:`sumlens.lineage`) and ``sumlens.landscape.LossLandscape`` follow it, so the writer
imports neither: a landscape is computed by a package built on training, far above the
writer. Beside those, a graph may be given as its serialized bytes and custom lineage
data as a plain dict.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any, Protocol

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message

from sumlens._proto import anf_ir_pb2, lineage_pb2, summary_pb2
from sumlens.lineage.builders import UserDefinedInfo

MESSAGE_PLUGINS: dict[str, type[Message]] = {
    "graph": anf_ir_pb2.GraphProto,
    "train_lineage": lineage_pb2.TrainLineage,
    "eval_lineage": lineage_pb2.EvaluationLineage,
    "dataset_graph": lineage_pb2.DatasetGraph,
    "custom_lineage_data": lineage_pb2.UserDefinedInfo,
    "landscape": summary_pb2.LossLandscape,
}
"""Plugin -> the message it writes."""

EXPECTED = {
    "graph": "a GraphProto (sumlens.graph.from_module) or its serialized bytes",
    "train_lineage": "a sumlens.lineage.TrainLineage",
    "eval_lineage": "a sumlens.lineage.EvaluationLineage",
    "dataset_graph": "a sumlens.lineage.DatasetGraph",
    "custom_lineage_data": "a sumlens.lineage.UserDefinedInfo or a dict",
    "landscape": "a sumlens.landscape.LossLandscape",
}
"""What each plugin takes, as its error message says it."""
READ_DEPTH = 101
"""Levels of messages in one record that protobuf's parsers read: the record's own and
100 nested in it (upb's and the C++ library's default limit); a deeper record is refused."""
RECORD_LEVELS = {
    "graph": 1,  # Event.graph_def
    "train_lineage": 1,  # LineageEvent.train_lineage ...
    "eval_lineage": 1,
    "dataset_graph": 1,
    "custom_lineage_data": 1,
    "landscape": 3,  # Event.summary.value[].loss_landscape
}
"""Levels of the record around a plugin's message."""


class MessageValue(Protocol):
    """A value that knows its message: ``plugin`` says where it goes, ``to_proto()`` makes it."""

    plugin: str

    def to_proto(self) -> Message: ...


def message_of(plugin: str, value: Any) -> Message:
    """The message of ``value`` for ``plugin`` (one of :data:`MESSAGE_PLUGINS`), checked:
    of the plugin's type, and nested no deeper than readers parse (:func:`check_depth`)."""
    message = _message(plugin, value)
    check_depth(plugin, message)
    return message


def _message(plugin: str, value: Any) -> Message:
    kind = MESSAGE_PLUGINS[plugin]
    if isinstance(value, kind):
        return value
    if getattr(value, "plugin", None) == plugin and callable(getattr(value, "to_proto", None)):
        message = value.to_proto()
        if not isinstance(message, kind):
            raise TypeError(
                f"{type(value).__name__}.to_proto() must return a {kind.__name__} for plugin "
                f"{plugin!r}, got {type(message).__name__}"
            )
        return message
    if plugin == "custom_lineage_data" and isinstance(value, dict):
        return UserDefinedInfo(value).to_proto()
    if plugin == "graph" and isinstance(value, bytes | bytearray):
        graph = anf_ir_pb2.GraphProto()
        try:
            graph.ParseFromString(bytes(value))
        except DecodeError as err:
            raise ValueError(f"graph value is not a serialized GraphProto: {err}") from err
        return graph
    raise TypeError(f"plugin {plugin!r} expects {EXPECTED[plugin]}, got {type(value).__name__}")


def check_depth(plugin: str, message: Message) -> None:
    """Raise ``ValueError`` when ``message``, in its record, is nested deeper than
    protobuf's parsers read (:data:`READ_DEPTH`): a record no reader could read back."""
    allowed = READ_DEPTH - RECORD_LEVELS[plugin]
    depth = nesting_depth(message, allowed)
    if depth > allowed:
        raise ValueError(
            f"the {plugin} value ({type(message).__name__}) nests messages more than "
            f"{allowed} levels deep; with its record's {RECORD_LEVELS[plugin]} that is more "
            f"than the {READ_DEPTH} levels protobuf's parsers (ours, MindInsight's, "
            "TensorBoard's) read, so it could never be read back: make it shallower"
        )


def nesting_depth(message: Message, limit: int) -> int:
    """Levels of messages in ``message`` (itself one, a map entry one more), counted
    until they exceed ``limit``: the walk stops there, so it never recurses deeper."""
    static = _static_depth(message.DESCRIPTOR)
    if static is not None and static <= limit:  # the schema bounds it within the limit
        return static
    if limit <= 0:
        return 1  # already more than allowed: look no deeper
    deepest = 1
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        for below in _children(field, value, limit - 1):
            deepest = max(deepest, 1 + below)
            if deepest > limit:
                return deepest
    return deepest


def _children(field: FieldDescriptor, value: Any, limit: int) -> Iterator[int]:
    """The depth of each message held by ``field`` (``value``: its contents)."""
    message_type = field.message_type
    if message_type is not None and message_type.GetOptions().map_entry:
        holds_messages = message_type.fields_by_name["value"].message_type is not None
        for item in value.values():
            yield 1 + (nesting_depth(item, limit - 1) if holds_messages else 0)
    elif field.is_repeated:
        for item in value:
            yield nesting_depth(item, limit)
    else:
        yield nesting_depth(value, limit)


@functools.cache
def _static_depth(descriptor: Descriptor, within: frozenset[str] = frozenset()) -> int | None:
    """Most levels a message of ``descriptor`` can have (None if it can contain itself)."""
    if descriptor.full_name in within:
        return None
    inner = within | {descriptor.full_name}
    deepest = 1
    for field in descriptor.fields:
        if field.message_type is not None:
            below = _static_depth(field.message_type, inner)
            if below is None:
                return None
            deepest = max(deepest, 1 + below)
    return deepest
