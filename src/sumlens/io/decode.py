"""Turning one record's payload into :class:`~sumlens.io.events.Event` values.

There is one decoder per file kind (MindSpore summary, MindSpore lineage, TensorBoard);
each parses the payload with our generated protobuf modules and maps what it finds onto
the common plugins. Kinds of values we do not map (TensorBoard text, audio, PR curves,
MindSpore's explain records ...) are counted in :class:`~sumlens.io.framing.ReadStats`,
never silently dropped.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from google.protobuf.message import DecodeError

from sumlens._proto import lineage_pb2, summary_pb2, tensorboard_pb2
from sumlens.io.events import Event, Histogram, Image
from sumlens.io.framing import ReadStats

Decoder = Callable[[bytes, str, ReadStats], list[Event]]

# MindSpore DataType enum -> numpy dtype (the tensor types MindSpore writes).
_MS_DTYPES: dict[int, np.dtype] = {
    1: np.dtype(np.bool_),
    2: np.dtype(np.int8),
    3: np.dtype(np.int16),
    4: np.dtype(np.int32),
    5: np.dtype(np.int64),
    6: np.dtype(np.uint8),
    7: np.dtype(np.uint16),
    8: np.dtype(np.uint32),
    9: np.dtype(np.uint64),
    10: np.dtype(np.float16),
    11: np.dtype(np.float32),
    12: np.dtype(np.float64),
}

# TensorBoard DataType enum -> numpy dtype (numeric types only).
_TB_DTYPES: dict[int, np.dtype] = {
    1: np.dtype(np.float32),
    2: np.dtype(np.float64),
    3: np.dtype(np.int32),
    4: np.dtype(np.uint8),
    5: np.dtype(np.int16),
    6: np.dtype(np.int8),
    9: np.dtype(np.int64),
    10: np.dtype(np.bool_),
    17: np.dtype(np.uint16),
    19: np.dtype(np.float16),
    22: np.dtype(np.uint32),
    23: np.dtype(np.uint64),
}
_TB_STRING = 7

_LINEAGE_PLUGINS = {
    "train_lineage": "train_lineage",
    "evaluation_lineage": "eval_lineage",
    "dataset_graph": "dataset_graph",
    "user_defined_info": "custom_lineage_data",
}


class PayloadError(ValueError):
    """A record whose CRC matched but whose payload is not the expected message."""


def ms_tensor_to_array(tensor: summary_pb2.TensorProto) -> np.ndarray:
    """A MindSpore TensorProto as a numpy array of its declared dtype and shape.

    MindSpore stores every dtype's values in ``float_data``; the typed fields and
    ``raw_data`` are honoured too when a writer used them.
    """
    dtype = _MS_DTYPES.get(tensor.data_type, np.dtype(np.float32))
    shape = tuple(tensor.dims)
    if tensor.float_data:
        flat = np.asarray(tensor.float_data, dtype=np.float32)
    elif tensor.double_data:
        flat = np.asarray(tensor.double_data, dtype=np.float64)
    elif tensor.int64_data:
        flat = np.asarray(tensor.int64_data, dtype=np.int64)
    elif tensor.int32_data:
        flat = np.asarray(tensor.int32_data, dtype=np.int32)
    elif tensor.uint64_data:
        flat = np.asarray(tensor.uint64_data, dtype=np.uint64)
    elif tensor.raw_data:
        flat = np.frombuffer(tensor.raw_data, dtype=dtype.newbyteorder("<"))
    else:
        flat = np.zeros(0, dtype=dtype)
    if int(np.prod(shape, dtype=np.int64)) != flat.size:
        raise PayloadError(f"tensor of shape {shape} holds {flat.size} values")
    return flat.astype(dtype, copy=False).reshape(shape)


def _ms_histogram(hist: summary_pb2.Summary.Histogram) -> Histogram:
    buckets = hist.buckets
    return Histogram(
        left=np.array([b.left for b in buckets], dtype=np.float64),
        width=np.array([b.width for b in buckets], dtype=np.float64),
        counts=np.array([b.count for b in buckets], dtype=np.int64),
        min=hist.min,
        max=hist.max,
        sum=hist.sum,
        count=hist.count,
        nan_count=hist.nan_count,
        pos_inf_count=hist.pos_inf_count,
        neg_inf_count=hist.neg_inf_count,
    )


def decode_summary(payload: bytes, file_name: str, stats: ReadStats) -> list[Event]:
    """Events of one record of a MindSpore summary file."""
    event = summary_pb2.Event()
    try:
        event.ParseFromString(payload)
    except DecodeError as err:
        raise PayloadError(str(err)) from err
    what = event.WhichOneof("what")
    step, wall_time = event.step, event.wall_time
    if what == "summary":
        out = []
        for value in event.summary.value:
            kind = value.WhichOneof("value")
            if kind == "scalar_value":
                out.append(Event(step, wall_time, "scalar", value.tag, value.scalar_value))
            elif kind == "tensor":
                tensor = ms_tensor_to_array(value.tensor)
                out.append(Event(step, wall_time, "tensor", value.tag, tensor))
            elif kind == "histogram":
                hist = _ms_histogram(value.histogram)
                out.append(Event(step, wall_time, "histogram", value.tag, hist))
            elif kind == "image":
                img = value.image
                image = Image(img.encoded_image, img.height, img.width, img.colorspace)
                out.append(Event(step, wall_time, "image", value.tag, image))
            elif kind == "loss_landscape":
                out.append(Event(step, wall_time, "landscape", value.tag, value.loss_landscape))
            else:
                stats.skip_plugin("empty_value")
        return out
    if what == "graph_def":
        return [Event(step, wall_time, "graph", file_name, event.graph_def)]
    if what == "explain":
        stats.skip_plugin("explain")
    return []


def decode_lineage(payload: bytes, file_name: str, stats: ReadStats) -> list[Event]:
    """Events of one record of a MindSpore lineage file."""
    event = lineage_pb2.LineageEvent()
    try:
        event.ParseFromString(payload)
    except DecodeError as err:
        raise PayloadError(str(err)) from err
    what = event.WhichOneof("what")
    plugin = _LINEAGE_PLUGINS.get(what or "")
    if plugin is None:
        return []
    return [Event(event.step, event.wall_time, plugin, plugin, getattr(event, what))]


def tb_tensor_to_array(tensor: tensorboard_pb2.TensorProto) -> np.ndarray | list[bytes]:
    """A TensorBoard TensorProto as a numpy array (string tensors as a list of bytes)."""
    shape = tuple(dim.size for dim in tensor.tensor_shape.dim)
    if tensor.dtype == _TB_STRING:
        return list(tensor.string_val)
    dtype = _TB_DTYPES.get(tensor.dtype)
    if dtype is None:
        raise PayloadError(f"unsupported TensorBoard tensor dtype {tensor.dtype}")
    if tensor.tensor_content:
        flat = np.frombuffer(tensor.tensor_content, dtype=dtype.newbyteorder("<"))
    else:
        if tensor.float_val:
            typed = tensor.float_val
        elif tensor.double_val:
            typed = tensor.double_val
        elif tensor.int64_val:
            typed = tensor.int64_val
        elif tensor.bool_val:
            typed = tensor.bool_val
        elif tensor.uint32_val:
            typed = tensor.uint32_val
        elif tensor.uint64_val:
            typed = tensor.uint64_val
        elif tensor.half_val:
            typed = np.asarray(tensor.half_val, dtype=np.uint16).view(np.float16)
        else:
            typed = tensor.int_val
        flat = np.asarray(typed).astype(dtype, copy=False)
        size = int(np.prod(shape, dtype=np.int64))
        if flat.size == 1 and size > 1:  # a single value stands for a filled tensor
            flat = np.full(size, flat[0], dtype=dtype)
    if int(np.prod(shape, dtype=np.int64)) != flat.size:
        raise PayloadError(f"tensor of shape {shape} holds {flat.size} values")
    return flat.astype(dtype, copy=False).reshape(shape)


def _tb_histo(histo: tensorboard_pb2.HistogramProto) -> Histogram:
    limits = np.asarray(histo.bucket_limit, dtype=np.float64)
    left = np.empty_like(limits)
    if limits.size:
        left[0] = min(histo.min, limits[0])
        left[1:] = limits[:-1]
    return Histogram(
        left=left,
        width=limits - left,
        counts=np.asarray(histo.bucket, dtype=np.float64).astype(np.int64),
        min=histo.min,
        max=histo.max,
        sum=histo.sum,
        count=int(histo.num),
    )


def _tb_tensor_histogram(array: np.ndarray) -> Histogram:
    """A TF2 histogram tensor (k x 3: left, right, count) as a :class:`Histogram`."""
    if array.ndim != 2 or (array.size and array.shape[1] != 3):
        raise PayloadError(f"histogram tensor of shape {array.shape}, expected (k, 3)")
    table = array.astype(np.float64).reshape(-1, 3)
    counts = table[:, 2]
    return Histogram(
        left=table[:, 0].copy(),
        width=table[:, 1] - table[:, 0],
        counts=counts.astype(np.int64),
        min=float(table[0, 0]) if len(table) else float("nan"),
        max=float(table[-1, 1]) if len(table) else float("nan"),
        sum=float("nan"),
        count=int(counts.sum()),
    )


def _tb_value(
    value: tensorboard_pb2.Summary.Value, step: int, wall_time: float, stats: ReadStats
) -> list[Event]:
    kind = value.WhichOneof("value")
    tag = value.tag or value.node_name
    if kind == "simple_value":
        return [Event(step, wall_time, "scalar", tag, value.simple_value)]
    if kind == "histo":
        return [Event(step, wall_time, "histogram", tag, _tb_histo(value.histo))]
    if kind == "image":
        img = value.image
        image = Image(img.encoded_image_string, img.height, img.width, img.colorspace)
        return [Event(step, wall_time, "image", tag, image)]
    if kind == "tensor":
        plugin = value.metadata.plugin_data.plugin_name
        if plugin == "scalars":
            array = tb_tensor_to_array(value.tensor)
            if isinstance(array, list) or array.size != 1:
                raise PayloadError(f"scalar tensor {tag!r} does not hold one number")
            return [Event(step, wall_time, "scalar", tag, float(array.reshape(-1)[0]))]
        if plugin == "histograms":
            array = tb_tensor_to_array(value.tensor)
            if isinstance(array, list):
                raise PayloadError(f"histogram tensor {tag!r} holds strings")
            return [Event(step, wall_time, "histogram", tag, _tb_tensor_histogram(array))]
        if plugin == "images":
            return _tb_image_tensor(value, step, wall_time)
        if plugin in ("", "tensor"):
            array = tb_tensor_to_array(value.tensor)
            if isinstance(array, list):
                stats.skip_plugin("string_tensor")
                return []
            return [Event(step, wall_time, "tensor", tag, array)]
        stats.skip_plugin(plugin)
        return []
    stats.skip_plugin(kind or "empty_value")
    return []


def _tb_image_tensor(
    value: tensorboard_pb2.Summary.Value, step: int, wall_time: float
) -> list[Event]:
    """A TF2 image tensor: strings ``[width, height, png, png, ...]``; one event per picture."""
    strings = list(value.tensor.string_val)
    if len(strings) < 2:
        raise PayloadError(f"image tensor {value.tag!r} lacks width and height")
    try:
        width, height = int(strings[0]), int(strings[1])
    except ValueError as err:
        raise PayloadError(f"image tensor {value.tag!r}: bad size") from err
    pictures = strings[2:]
    return [
        Event(
            step,
            wall_time,
            "image",
            value.tag if len(pictures) == 1 else f"{value.tag}/{index}",
            Image(encoded, height, width),
        )
        for index, encoded in enumerate(pictures)
    ]


def decode_tensorboard(payload: bytes, file_name: str, stats: ReadStats) -> list[Event]:
    """Events of one record of a TensorBoard event file."""
    event = tensorboard_pb2.Event()
    try:
        event.ParseFromString(payload)
    except DecodeError as err:
        raise PayloadError(str(err)) from err
    what = event.WhichOneof("what")
    if what == "summary":
        out: list[Event] = []
        for value in event.summary.value:
            out.extend(_tb_value(value, event.step, event.wall_time, stats))
        return out
    if what == "graph_def":
        stats.skip_plugin("graph_def")
    elif what is None:
        event.DiscardUnknownFields()
        if event.ByteSize() != len(payload):
            stats.skip_plugin("other_event")  # log messages, session logs, run metadata
    return []


DECODERS: dict[str, Decoder] = {
    "summary": decode_summary,
    "lineage": decode_lineage,
    "tensorboard": decode_tensorboard,
}
