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

from typing import Any, Protocol

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


class MessageValue(Protocol):
    """A value that knows its message: ``plugin`` says where it goes, ``to_proto()`` makes it."""

    plugin: str

    def to_proto(self) -> Message: ...


def message_of(plugin: str, value: Any) -> Message:
    """The message of ``value`` for ``plugin`` (one of :data:`MESSAGE_PLUGINS`), checked."""
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
