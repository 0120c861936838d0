"""Turning a :class:`~sumlens.summary.items.StepBatch` into serialized events, per format.

Pure functions of their input (no files, no threads): the writer pipeline calls them and
frames the results. MindSpore's format puts all values of a step into one ``Event``,
graphs into events of their own and lineage into ``LineageEvent``s for the lineage file;
TensorBoard's puts each value into its own event. The expensive parts (PNG, histogram
buckets, tensor packing) are in :func:`encode_value`, which the pipeline may run on
worker threads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sumlens._log import logger, warn_once
from sumlens._proto import lineage_pb2, summary_pb2, tensorboard_pb2
from sumlens.io.events import Histogram, Image
from sumlens.summary._histogram_wire import mindspore_histogram_bytes, protobuf_histogram_bytes
from sumlens.summary.convert import resolve
from sumlens.summary.device_histogram import DeviceHistogram
from sumlens.summary.histogram import compute_histogram
from sumlens.summary.image import encode_image, to_nchw
from sumlens.summary.items import TENSORBOARD_EVENT, Item, StepBatch
from sumlens.summary.kernels import ready as kernels_ready
from sumlens.summary.tensor import ms_tensor, tb_tensor

MS_VERSION = "MindSpore.Event:1"
TB_VERSION = "brain.Event:2"

LINEAGE_FIELDS = {
    "train_lineage": "train_lineage",
    "eval_lineage": "evaluation_lineage",
    "dataset_graph": "dataset_graph",
    "custom_lineage_data": "user_defined_info",
}
HEAVY_PLUGINS = frozenset({"image", "histogram", "tensor"})


def is_heavy(item: Item) -> bool:
    """Whether encoding ``item`` is real work (worth a pool thread): not yet binned or packed,
    or a TensorBoard event still to be made."""
    if item.plugin == TENSORBOARD_EVENT:
        return callable(item.value)
    return item.plugin in HEAVY_PLUGINS and not isinstance(item.value, Histogram)


def version_payload(file_format: str, wall_time: float) -> bytes:
    """The first event of every summary file: the format's version string."""
    if file_format == "tensorboard":
        return tensorboard_pb2.Event(
            wall_time=wall_time, file_version=TB_VERSION
        ).SerializeToString()
    return summary_pb2.Event(wall_time=wall_time, version=MS_VERSION).SerializeToString()


def encode_value(item: Item) -> Any:
    """The format-independent encoding of one heavy value (PNG, buckets, array); None to drop.

    Errors that only the data can reveal (an empty scalar, an image that cannot be
    tiled) drop that value with one error log instead of losing the rest of the step.
    """
    plugin = item.plugin
    if plugin == "scalar":
        if isinstance(item.value, float):
            return item.value
        array = resolve(item.value).reshape(-1)
        if array.size == 0:
            logger.error("scalar %r is empty; not written", item.tag)
            return None
        return float(array[0])
    if plugin == "image":
        array, layout = item.value
        return encode_image(to_nchw(resolve(array), layout, item.tag))
    if plugin == "histogram":
        value = item.value
        if isinstance(value, Histogram):  # binned on the caller
            return value
        if isinstance(value, DeviceHistogram):
            return value.result()
        return compute_histogram(resolve(value))
    if plugin == "tensor":
        return resolve(item.value)
    if plugin == TENSORBOARD_EVENT and callable(item.value):  # deferred to this thread
        return item.value()
    return item.value


@dataclass
class EncodedStep:
    """Serialized events of one step: for the summary file, the lineage file and (in
    MindSpore's format) the TensorBoard-format file of what MindSpore's cannot hold."""

    summary: list[bytes] = field(default_factory=list)
    lineage: list[bytes] = field(default_factory=list)
    tensorboard: list[bytes] = field(default_factory=list)


def _tensorboard_event(batch: StepBatch, event: tensorboard_pb2.Event) -> bytes:
    """A prepared TensorBoard event (plugin ``tensorboard_event``) at the batch's step and time."""
    stamped = tensorboard_pb2.Event()
    stamped.CopyFrom(event)
    stamped.wall_time, stamped.step = batch.wall_time, batch.step
    return stamped.SerializeToString()


def _ms_value(value: summary_pb2.Summary.Value, plugin: str, encoded: Any) -> None:
    if plugin == "scalar":
        value.scalar_value = encoded
    elif plugin == "image":
        image: Image = encoded
        value.image.height, value.image.width = image.height, image.width
        value.image.colorspace, value.image.encoded_image = image.colorspace, image.encoded
    elif plugin == "histogram":
        wire = mindspore_histogram_bytes if kernels_ready() else protobuf_histogram_bytes
        value.histogram.MergeFromString(wire(encoded))
    elif plugin == "tensor":
        value.tensor.CopyFrom(ms_tensor(encoded, value.tag))
    elif plugin == "landscape":
        value.loss_landscape.CopyFrom(encoded)


def encode_mindspore(batch: StepBatch, encoded: list[Any]) -> EncodedStep:
    """MindSpore events of one step; ``encoded[i]`` is :func:`encode_value` of item ``i``."""
    out = EncodedStep()
    event = summary_pb2.Event(wall_time=batch.wall_time, step=batch.step)
    values = event.summary.value
    for item, value in zip(batch.items, encoded, strict=True):
        if value is None:
            continue
        plugin = item.plugin
        if plugin in LINEAGE_FIELDS:
            lineage = lineage_pb2.LineageEvent(wall_time=batch.wall_time)
            getattr(lineage, LINEAGE_FIELDS[plugin]).CopyFrom(value)
            out.lineage.append(lineage.SerializeToString())
        elif plugin == TENSORBOARD_EVENT:
            out.tensorboard.append(_tensorboard_event(batch, value))
        elif plugin == "graph":
            graph = summary_pb2.Event(wall_time=batch.wall_time, step=batch.step)
            graph.graph_def.CopyFrom(value)
            out.summary.append(graph.SerializeToString())
        else:
            _ms_value(values.add(tag=item.tag), plugin, value)
    if values:
        out.summary.append(event.SerializeToString())
    return out


def _tb_histogram(proto: tensorboard_pb2.HistogramProto, hist: Histogram) -> None:
    proto.min, proto.max, proto.num, proto.sum = hist.min, hist.max, hist.count, hist.sum
    proto.bucket_limit.extend((hist.left + hist.width).tolist())
    proto.bucket.extend(hist.counts.astype(np.float64).tolist())


def encode_tensorboard(batch: StepBatch, encoded: list[Any]) -> EncodedStep:
    """TensorBoard events of one step (one per value); lineage still as MindSpore lineage."""
    out = EncodedStep()
    for item, value in zip(batch.items, encoded, strict=True):
        if value is None:
            continue
        plugin = item.plugin
        if plugin in LINEAGE_FIELDS:
            out.lineage.extend(
                encode_mindspore(StepBatch(batch.step, batch.wall_time, [item]), [value]).lineage
            )
            continue
        if plugin == TENSORBOARD_EVENT:
            out.summary.append(_tensorboard_event(batch, value))
            continue
        event = tensorboard_pb2.Event(wall_time=batch.wall_time, step=batch.step)
        summary_value = event.summary.value.add(tag=item.tag)
        if plugin == "scalar":
            summary_value.simple_value = value
        elif plugin == "image":
            image: Image = value
            summary_value.image.height, summary_value.image.width = image.height, image.width
            summary_value.image.colorspace = image.colorspace
            summary_value.image.encoded_image_string = image.encoded
        elif plugin == "histogram":
            _tb_histogram(summary_value.histo, value)
        elif plugin == "tensor":
            summary_value.metadata.plugin_data.plugin_name = "tensor"  # as torch's writer
            summary_value.tensor.CopyFrom(tb_tensor(value))
        else:
            warn_once(
                f"tb-{plugin}",
                "plugin %r cannot be written in TensorBoard format; its values are skipped",
                plugin,
            )
            continue
        out.summary.append(event.SerializeToString())
    return out


ENCODERS = {"mindspore": encode_mindspore, "tensorboard": encode_tensorboard}
