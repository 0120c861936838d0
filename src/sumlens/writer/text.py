"""``add_text``: a string for TensorBoard's text dashboard (plugin ``text``).

As torch's writer writes it: the tag gets ``/text_summary`` appended and the text is a
one-element ``DT_STRING`` tensor of its UTF-8 bytes.
"""

from __future__ import annotations

from sumlens._checks import check_text
from sumlens._proto import tensorboard_pb2 as tbpb
from sumlens._proto import tensorboard_plugins_pb2 as plugins

OWNER = "SummaryWriter.add_text"
PLUGIN_NAME = "text"


def text_value(tag: str, text_string: str) -> tbpb.Summary.Value:
    """The summary value of ``text_string`` (markdown) under ``<tag>/text_summary``."""
    check_text(tag, "tag", OWNER)
    check_text(text_string, "text_string", OWNER)
    value = tbpb.Summary.Value(tag=f"{tag}/text_summary")
    plugin = value.metadata.plugin_data
    plugin.plugin_name = PLUGIN_NAME
    plugin.content = plugins.TextPluginData(version=0).SerializeToString()
    tensor = value.tensor
    tensor.dtype = tbpb.DT_STRING
    tensor.tensor_shape.dim.add(size=1)
    tensor.string_val.append(text_string.encode("utf-8"))
    return value
