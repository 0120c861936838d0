"""Turning one record's payload into :class:`~sumlens.io.events.Event` values.

There is one decoder per file kind (MindSpore summary, MindSpore lineage, TensorBoard);
each parses the payload with our generated protobuf modules and maps what it finds onto
the common plugins. Kinds of values we do not map (TensorBoard's mesh and custom scalars,
MindSpore's explain records ...) are counted in :class:`~sumlens.io.framing.ReadStats`
by name, never silently dropped.

A payload whose CRCs match can still be crafted, so the decoders trust nothing in it:

* every error its contents can cause (protobuf's ``DecodeError``, and any ``ValueError``,
  ``ArithmeticError`` or ``LookupError`` raised while converting what it holds) leaves
  the decoder as :class:`PayloadError`; readers then skip the record and count it as
  corrupt (:meth:`~sumlens.io.framing.ReadStats.reject_record`), and nothing else it
  held is counted;
* tags must be UTF-8 text (protobuf's C parser would hand a MindSpore one over as
  bytes; its pure-Python parser refuses it), so every tag a reader returns is a ``str``;
* shapes are checked with exact Python ints (numpy's int64 products wrap silently): no
  negative dims, at most :data:`MAX_DIMS` of them, and the values must fill the shape
  exactly; a byte buffer (``raw_data``, ``tensor_content``) must be a whole number of
  elements; values cast to the declared dtype must fit it (numpy would wrap them or make
  one up);
* counts and sizes must not be negative: a histogram's counts (its buckets' and its
  totals) and an image's width and height;
* memory follows the record's own size. Every array is a view of the payload's bytes or
  holds one element per value the payload spells out, so it costs a small multiple of
  the payload's bytes. The one exception is TensorBoard's "one value stands for a tensor
  filled with it" (TensorFlow writes ``make_tensor_proto(0.0, shape=[...])`` that way):
  a record may expand such tensors into at most ``max(payload bytes, FILL_FLOOR)`` bytes
  in all (:class:`FillBudget`), and is rejected beyond that. The floor lets small filled
  tensors from small records read (1 MiB is 256 Ki float32 values, more than summaries
  fill in practice), while what a crafted record can make a reader expand stays within
  1 MiB or its own size, not the 16 GiB a 58-byte record with shape ``[65536, 65536]``
  asks for.

An indexing read (:data:`INDEXERS`) does not convert histograms and tensors, but it checks
all that can be checked without touching their values, each in constant time: a tensor's
shape, dtype and number of values, a histogram's totals and (TensorBoard) its bucket
lists' lengths, an image's size. So a record whose value could never convert is refused
(and counted) when it is indexed; what only the values show (a value out of its dtype's
range, a negative bucket count) is found when the value is read back. The values of
TensorBoard's other plugins (text, audio, PR curves, hyper-parameters, graphs and run
metadata) are converted, and so checked whole, when indexed too: each grows with its record
only (a PR curve's filled values are taken from the record's :class:`FillBudget`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable
from functools import partial

import numpy as np
from google.protobuf.message import DecodeError

from sumlens._proto import (
    anf_ir_pb2,
    lineage_pb2,
    summary_pb2,
    tensorboard_graph_pb2,
    tensorboard_pb2,
    tensorboard_plugins_pb2,
)
from sumlens.io.events import Audio, Event, Histogram, Image, Text
from sumlens.io.framing import ReadStats
from sumlens.io.tb_graph import graph_from_graph_def
from sumlens.io.wav import wav_layout

Decoder = Callable[[bytes, str, ReadStats], list[Event]]

MAX_DIMS = 32
"""Most dims a tensor may declare: numpy 1's limit (numpy 2 allows 64); no writer needs more."""
FILL_FLOOR = 1 << 20
"""Bytes any record may expand filled TensorBoard tensors into (see the module docstring)."""
_INT32_LIMIT = 1 << 31
_INT64 = np.dtype(np.int64)

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

_CONTENT_ERRORS = (DecodeError, ValueError, ArithmeticError, LookupError)
"""What a crafted payload can make parsing and converting raise (see the module docstring)."""


class PayloadError(ValueError):
    """A record whose CRC matched but whose payload is not the expected message."""


class FillBudget:
    """Bytes one record may still expand filled TensorBoard tensors into.

    ``max(payload_size, FILL_FLOOR)`` to begin with; see the module docstring for why.
    """

    def __init__(self, payload_size: int) -> None:
        self.left = max(payload_size, FILL_FLOOR)

    def spend(self, nbytes: int) -> None:
        """Take ``nbytes`` from the budget, or reject the record if it has fewer left."""
        if nbytes > self.left:
            raise PayloadError(
                f"a filled tensor of {nbytes} bytes exceeds what its record may expand "
                f"into ({self.left} bytes left)"
            )
        self.left -= nbytes


def _shape(dims: Iterable[int], itemsize: int) -> tuple[tuple[int, ...], int]:
    """A declared shape and its element count, once numpy can surely make an array of it.

    Exact Python ints throughout. Numpy also refuses shapes whose non-zero dims multiply
    past its address space, even when another dim is 0.
    """
    shape = tuple(dims)
    if len(shape) > MAX_DIMS:
        raise PayloadError(f"tensor of {len(shape)} dims (at most {MAX_DIMS})")
    if any(dim < 0 for dim in shape):
        raise PayloadError(f"tensor shape {shape} has a negative dim")
    if math.prod(dim for dim in shape if dim) * itemsize > sys.maxsize:
        raise PayloadError(f"tensor shape {shape} is larger than any array")
    return shape, math.prod(shape)


def _from_bytes(data: bytes, dtype: np.dtype) -> np.ndarray:
    """Little-endian values of ``dtype`` packed in ``data`` (a view, no copy)."""
    if len(data) % dtype.itemsize:
        raise PayloadError(f"{len(data)} bytes are not a whole number of {dtype} values")
    return np.frombuffer(data, dtype=dtype.newbyteorder("<"))


def _cast(flat: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``flat`` as ``dtype``, refusing values ``dtype`` cannot hold.

    Numpy would wrap integers silently, and turn a NaN or out-of-range float into an
    arbitrary integer or an infinity: values the file never held.
    """
    if flat.dtype == dtype:
        return flat
    if dtype.kind in "iu" and flat.size:
        if flat.dtype.kind == "f" and not np.isfinite(flat).all():
            raise PayloadError(f"a NaN or infinity does not convert to {dtype}")
        info = np.iinfo(dtype)
        if int(flat.min()) < info.min or int(flat.max()) > info.max:
            raise PayloadError(f"values out of the range of {dtype}")
    try:
        with np.errstate(over="raise", invalid="raise"):
            return flat.astype(dtype)
    except FloatingPointError as err:
        raise PayloadError(f"values do not fit {dtype}: {err}") from err


_MS_VALUE_FIELDS = ("float_data", "double_data", "int64_data", "int32_data", "uint64_data")
"""A MindSpore TensorProto's value fields, in the order :func:`ms_tensor_to_array` picks them
(then ``raw_data``)."""


def ms_tensor_layout(tensor: anf_ir_pb2.TensorProto) -> tuple[np.dtype, tuple[int, ...]]:
    """The dtype and shape of a MindSpore TensorProto, once its values surely fill them.

    Counts the values without reading them (constant time); raises :class:`PayloadError`
    for a shape no array has or a number of values that does not fill it.
    """
    dtype = _MS_DTYPES.get(tensor.data_type, np.dtype(np.float32))
    shape, size = _shape(tensor.dims, dtype.itemsize)
    held = next(
        (len(getattr(tensor, name)) for name in _MS_VALUE_FIELDS if getattr(tensor, name)), None
    )
    if held is None:
        raw = len(tensor.raw_data)
        if raw % dtype.itemsize:
            raise PayloadError(f"{raw} bytes are not a whole number of {dtype} values")
        held = raw // dtype.itemsize
    if held != size:
        raise PayloadError(f"tensor of shape {shape} holds {held} values")
    return dtype, shape


def ms_tensor_to_array(tensor: anf_ir_pb2.TensorProto) -> np.ndarray:
    """A MindSpore TensorProto as a numpy array of its declared dtype and shape.

    MindSpore stores every dtype's values in ``float_data``; the typed fields and
    ``raw_data`` are honoured too when a writer used them. Raises :class:`PayloadError`
    when the values do not make such an array (see the module docstring).
    """
    dtype, shape = ms_tensor_layout(tensor)
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
        flat = _from_bytes(tensor.raw_data, dtype)
    else:
        flat = np.zeros(0, dtype=dtype)
    return _cast(flat, dtype).reshape(shape)


def _check_counts(what: str, **counts: float) -> None:
    """Refuse a negative (or NaN) count of a histogram or size of an image."""
    for name, count in counts.items():
        if not count >= 0:
            raise PayloadError(f"{what} with {name} {count}")


def _ms_histogram_totals(hist: summary_pb2.Summary.Histogram) -> None:
    """Check a MindSpore histogram's totals (constant time; its buckets are not read)."""
    _check_counts(
        "histogram",
        count=hist.count,
        nan_count=hist.nan_count,
        pos_inf_count=hist.pos_inf_count,
        neg_inf_count=hist.neg_inf_count,
    )


def check_ms_value(value: summary_pb2.Summary.Value) -> None:
    """Refuse (:class:`PayloadError`) a MindSpore summary value whose shape, sizes or totals
    no value has: what an indexing read checks, in constant time, without converting it."""
    kind = value.WhichOneof("value")
    if kind == "tensor":
        ms_tensor_layout(value.tensor)
    elif kind == "histogram":
        _ms_histogram_totals(value.histogram)
    elif kind == "image":
        _check_counts("image", height=value.image.height, width=value.image.width)


def _ms_histogram(hist: summary_pb2.Summary.Histogram) -> Histogram:
    """A histogram whose totals :func:`check_ms_value` passed; its bucket counts checked."""
    buckets = hist.buckets
    counts = np.array([b.count for b in buckets], dtype=np.int64)
    if counts.size and int(counts.min()) < 0:
        raise PayloadError(f"histogram with a bucket count of {int(counts.min())}")
    return Histogram(
        left=np.array([b.left for b in buckets], dtype=np.float64),
        width=np.array([b.width for b in buckets], dtype=np.float64),
        counts=counts,
        min=hist.min,
        max=hist.max,
        sum=hist.sum,
        count=hist.count,
        nan_count=hist.nan_count,
        pos_inf_count=hist.pos_inf_count,
        neg_inf_count=hist.neg_inf_count,
    )


def _checked(
    decode: Callable[[bytes, str, list[str]], list[Event]],
    payload: bytes,
    file_name: str,
    stats: ReadStats,
) -> list[Event]:
    """Run one record's decoder: any error its contents cause becomes :class:`PayloadError`.

    ``decode`` lists the kinds of values it skips; they are counted in ``stats`` only
    when the whole record decodes (a rejected record counts once, as corrupt).
    """
    skipped: list[str] = []
    try:
        events = decode(payload, file_name, skipped)
    except PayloadError:
        raise
    except _CONTENT_ERRORS as err:
        raise PayloadError(f"{type(err).__name__}: {err}") from err
    for name in skipped:
        stats.skip_plugin(name)
    return events


def decode_summary(payload: bytes, file_name: str, stats: ReadStats) -> list[Event]:
    """Events of one record of a MindSpore summary file."""
    return _checked(_summary_events, payload, file_name, stats)


def decode_tag(kind: str, payload: bytes, file_name: str, tag: str) -> list[Event]:
    """The events named ``tag`` in one record (a :class:`PayloadError` if it does not decode).

    A MindSpore record holds every value of a step; only those named ``tag`` are turned
    into arrays here, so reading one histogram back from a step of hundreds costs one.
    """
    if kind == "summary":
        return _checked(partial(_summary_events, tag=tag), payload, file_name, ReadStats())
    return [e for e in DECODERS[kind](payload, file_name, ReadStats()) if e.tag == tag]


def _summary_events(
    payload: bytes,
    file_name: str,
    skipped: list[str],
    tag: str | None = None,
    convert: bool = True,
) -> list[Event]:
    event = summary_pb2.Event.FromString(payload)
    what = event.WhichOneof("what")
    step, wall_time = event.step, event.wall_time
    if what == "summary":
        out = []
        for value in event.summary.value:
            if isinstance(value.tag, bytes):  # proto2 keeps a tag that is not UTF-8 as bytes
                raise PayloadError(f"tag {value.tag[:40]!r} is not UTF-8 text")
            if tag is not None and value.tag != tag:
                continue
            kind = value.WhichOneof("value")
            check_ms_value(value)  # constant time; converting checks the values besides
            if kind == "scalar_value":
                out.append(Event(step, wall_time, "scalar", value.tag, value.scalar_value))
            elif kind == "tensor":
                tensor = ms_tensor_to_array(value.tensor) if convert else None
                out.append(Event(step, wall_time, "tensor", value.tag, tensor))
            elif kind == "histogram":
                hist = _ms_histogram(value.histogram) if convert else None
                out.append(Event(step, wall_time, "histogram", value.tag, hist))
            elif kind == "image":
                img = value.image
                image = Image(img.encoded_image, img.height, img.width, img.colorspace)
                out.append(Event(step, wall_time, "image", value.tag, image))
            elif kind == "loss_landscape":
                out.append(Event(step, wall_time, "landscape", value.tag, value.loss_landscape))
            else:
                skipped.append("empty_value")
        return out
    if what == "graph_def" and tag in (None, file_name):
        return [Event(step, wall_time, "graph", file_name, event.graph_def)]
    if what == "explain":
        skipped.append("explain")
    return []


def decode_lineage(payload: bytes, file_name: str, stats: ReadStats) -> list[Event]:
    """Events of one record of a MindSpore lineage file."""
    return _checked(_lineage_events, payload, file_name, stats)


def _lineage_events(payload: bytes, file_name: str, skipped: list[str]) -> list[Event]:
    event = lineage_pb2.LineageEvent.FromString(payload)
    what = event.WhichOneof("what")
    plugin = _LINEAGE_PLUGINS.get(what or "")
    if plugin is None:
        return []
    return [Event(event.step, event.wall_time, plugin, plugin, getattr(event, what))]


_TB_TYPED_FIELDS = (
    ("float_val", np.float32),
    ("double_val", np.float64),
    ("int64_val", np.int64),
    ("bool_val", np.bool_),
    ("uint32_val", np.uint32),
    ("uint64_val", np.uint64),
)
"""A TensorProto's typed value fields other than ``half_val`` and ``int_val``, in the order
:func:`_tb_values` tries them, each with its dtype."""


def _tb_values(tensor: tensorboard_pb2.TensorProto) -> np.ndarray:
    """The values a TensorProto spells out in its typed fields, each in its field's type."""
    for field, dtype in _TB_TYPED_FIELDS:
        values = getattr(tensor, field)
        if values:
            return np.asarray(values, dtype=dtype)
    if tensor.half_val:  # the bits of each float16, in an int32
        bits = np.asarray(tensor.half_val, dtype=np.int32)
        return _cast(bits, np.dtype(np.uint16)).view(np.float16)
    return np.asarray(tensor.int_val, dtype=np.int32)


def _tb_held(tensor: tensorboard_pb2.TensorProto) -> int:
    """How many values :func:`_tb_values` would return, without reading them."""
    for field, _ in _TB_TYPED_FIELDS:
        if getattr(tensor, field):
            return len(getattr(tensor, field))
    return len(tensor.half_val) or len(tensor.int_val)


def tb_tensor_layout(
    tensor: tensorboard_pb2.TensorProto, budget: FillBudget
) -> tuple[int, ...] | None:
    """The shape of a numeric TensorBoard TensorProto (None for a string tensor), once its
    values surely fill it: what :func:`tb_tensor_to_array` checks before reading values,
    in constant time. A single value filling the tensor is taken from ``budget``."""
    if tensor.dtype == _TB_STRING:
        return None
    dtype = _TB_DTYPES.get(tensor.dtype)
    if dtype is None:
        raise PayloadError(f"unsupported TensorBoard tensor dtype {tensor.dtype}")
    shape, size = _shape((dim.size for dim in tensor.tensor_shape.dim), dtype.itemsize)
    if tensor.tensor_content:
        content = len(tensor.tensor_content)
        if content % dtype.itemsize:
            raise PayloadError(f"{content} bytes are not a whole number of {dtype} values")
        held = content // dtype.itemsize
    else:
        held = _tb_held(tensor)
        if held == 1 and size > 1:  # a single value stands for a filled tensor
            budget.spend(size * dtype.itemsize)
            held = size
    if held != size:
        raise PayloadError(f"tensor of shape {shape} holds {held} values")
    return shape


def tb_tensor_to_array(
    tensor: tensorboard_pb2.TensorProto, budget: FillBudget
) -> np.ndarray | list[bytes]:
    """A TensorBoard TensorProto as a numpy array (string tensors as a list of bytes).

    A single value stands for a tensor filled with it; ``budget`` bounds what that may
    expand into. Raises :class:`PayloadError` when the values do not make such an array.
    """
    if tensor.dtype == _TB_STRING:
        return list(tensor.string_val)
    dtype = _TB_DTYPES.get(tensor.dtype)
    if dtype is None:
        raise PayloadError(f"unsupported TensorBoard tensor dtype {tensor.dtype}")
    shape, size = _shape((dim.size for dim in tensor.tensor_shape.dim), dtype.itemsize)
    if tensor.tensor_content:
        flat = _from_bytes(tensor.tensor_content, dtype)
    else:
        flat = _cast(_tb_values(tensor), dtype)
        if flat.size == 1 and size > 1:  # a single value stands for a filled tensor
            budget.spend(size * dtype.itemsize)
            flat = np.full(size, flat[0], dtype=dtype)
    if flat.size != size:
        raise PayloadError(f"tensor of shape {shape} holds {flat.size} values")
    return flat.reshape(shape)


def _tb_histo_layout(histo: tensorboard_pb2.HistogramProto) -> None:
    """Check a histogram's lists and total in constant time (its values are not read)."""
    if len(histo.bucket) != len(histo.bucket_limit):
        raise PayloadError(
            f"histogram of {len(histo.bucket_limit)} bucket limits and {len(histo.bucket)} counts"
        )
    if not math.isfinite(histo.num) or histo.num < 0:
        raise PayloadError(f"histogram of {histo.num} values")


def _tb_histo(histo: tensorboard_pb2.HistogramProto) -> Histogram:
    _tb_histo_layout(histo)
    limits = np.asarray(histo.bucket_limit, dtype=np.float64)
    counts = _cast(np.asarray(histo.bucket, dtype=np.float64), _INT64)
    if counts.size and int(counts.min()) < 0:
        raise PayloadError(f"histogram with a bucket count of {int(counts.min())}")
    left = np.empty_like(limits)
    if limits.size:
        left[0] = min(histo.min, limits[0])
        left[1:] = limits[:-1]
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf is NaN, as in the file
        width = limits - left
    return Histogram(
        left=left,
        width=width,
        counts=counts,
        min=histo.min,
        max=histo.max,
        sum=histo.sum,
        count=int(histo.num),
    )


def _tb_tensor_histogram(array: np.ndarray) -> Histogram:
    """A TF2 histogram tensor (k x 3: left, right, count) as a :class:`Histogram`."""
    if array.ndim != 2 or array.shape[1] != 3:
        raise PayloadError(f"histogram tensor of shape {array.shape}, expected (k, 3)")
    table = array.astype(np.float64)
    counts = _cast(table[:, 2], _INT64)
    if counts.size and int(counts.min()) < 0:
        raise PayloadError(f"histogram with a bucket count of {int(counts.min())}")
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf is NaN, as in the file
        width = table[:, 1] - table[:, 0]
    return Histogram(
        left=table[:, 0].copy(),
        width=width,
        counts=counts,
        min=float(table[0, 0]) if len(table) else float("nan"),
        max=float(table[-1, 1]) if len(table) else float("nan"),
        sum=float("nan"),
        count=sum(counts.tolist()),  # exact: an int64 sum would wrap
    )


def _tb_value(
    value: tensorboard_pb2.Summary.Value,
    step: int,
    wall_time: float,
    skipped: list[str],
    budget: FillBudget,
    convert: bool = True,
) -> list[Event]:
    kind = value.WhichOneof("value")
    tag = value.tag or value.node_name
    plugin = value.metadata.plugin_data.plugin_name
    if plugin == "hparams":  # the message is the metadata; torch adds an empty tensor
        return [Event(step, wall_time, "hparams", tag, _tb_hparams(value.metadata, tag))]
    if kind == "simple_value":
        return [Event(step, wall_time, "scalar", tag, value.simple_value)]
    if kind == "histo":
        if not convert:
            _tb_histo_layout(value.histo)
        histogram = _tb_histo(value.histo) if convert else None
        return [Event(step, wall_time, "histogram", tag, histogram)]
    if kind == "image":
        img = value.image
        _check_counts("image", height=img.height, width=img.width)
        image = Image(img.encoded_image_string, img.height, img.width, img.colorspace)
        return [Event(step, wall_time, "image", tag, image)]
    if kind == "audio":
        return [Event(step, wall_time, "audio", tag, _tb_audio(value.audio, tag))]
    if kind == "tensor":
        if plugin == "scalars":
            array = tb_tensor_to_array(value.tensor, budget)
            if isinstance(array, list) or array.size != 1:
                raise PayloadError(f"scalar tensor {tag!r} does not hold one number")
            return [Event(step, wall_time, "scalar", tag, float(array.reshape(-1)[0]))]
        if plugin == "histograms":
            if not convert:
                shape = tb_tensor_layout(value.tensor, budget)
                if shape is None or len(shape) != 2 or shape[1] != 3:
                    raise PayloadError(f"histogram tensor {tag!r} of shape {shape}")
                return [Event(step, wall_time, "histogram", tag, None)]
            array = tb_tensor_to_array(value.tensor, budget)
            if isinstance(array, list):
                raise PayloadError(f"histogram tensor {tag!r} holds strings")
            return [Event(step, wall_time, "histogram", tag, _tb_tensor_histogram(array))]
        if plugin == "images":
            return _tb_image_tensor(value, step, wall_time)
        if plugin == "text":
            return [Event(step, wall_time, "text", tag, _tb_text(value.tensor, tag))]
        if plugin == "audio":
            return _tb_audio_tensor(value.tensor, tag, step, wall_time)
        if plugin == "pr_curves":
            curve = _tb_pr_curve(value.tensor, tag, budget)
            return [Event(step, wall_time, "pr_curve", tag, curve)]
        if plugin in ("", "tensor"):
            if value.tensor.dtype == _TB_STRING:
                skipped.append("string_tensor")
                return []
            if not convert:
                tb_tensor_layout(value.tensor, budget)
            values = tb_tensor_to_array(value.tensor, budget) if convert else None
            return [Event(step, wall_time, "tensor", tag, values)]
        skipped.append(plugin)
        return []
    skipped.append(kind or "empty_value")
    return []


def _image_size(text: bytes, tag: str) -> int:
    """A width or height of a TF2 image tensor: a decimal that fits an int32, as elsewhere."""
    try:
        size = int(text)
    except ValueError as err:
        raise PayloadError(f"image tensor {tag!r}: bad size {text[:20]!r}") from err
    if not 0 <= size < _INT32_LIMIT:
        raise PayloadError(f"image tensor {tag!r}: size {size} out of range")
    return size


def _tb_image_tensor(
    value: tensorboard_pb2.Summary.Value, step: int, wall_time: float
) -> list[Event]:
    """A TF2 image tensor: strings ``[width, height, png, png, ...]``; one event per picture."""
    strings = list(value.tensor.string_val)
    if len(strings) < 2:
        raise PayloadError(f"image tensor {value.tag!r} lacks width and height")
    width, height = _image_size(strings[0], value.tag), _image_size(strings[1], value.tag)
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


def _strings(tensor: tensorboard_pb2.TensorProto, what: str) -> tuple[tuple[int, ...], list[bytes]]:
    """The shape and strings of a string tensor whose strings fill its shape exactly."""
    if tensor.dtype != _TB_STRING:
        raise PayloadError(f"{what} of dtype {tensor.dtype}, not strings")
    shape, size = _shape((dim.size for dim in tensor.tensor_shape.dim), 1)
    strings = list(tensor.string_val)
    if len(strings) != size:
        raise PayloadError(f"{what} of shape {shape} holds {len(strings)} strings")
    return shape, strings


def _tb_text(tensor: tensorboard_pb2.TensorProto, tag: str) -> Text:
    """A text plugin tensor: its strings as UTF-8 text (bad bytes replaced), row-major."""
    shape, strings = _strings(tensor, f"text tensor {tag!r}")
    return Text(tuple(s.decode("utf-8", "replace") for s in strings), shape)


def _tb_audio(audio: tensorboard_pb2.Summary.Audio, tag: str) -> Audio:
    """A ``Summary.Audio`` value (what torch's ``add_audio`` writes), its sizes checked."""
    _check_counts(f"audio {tag!r}", channels=audio.num_channels, frames=audio.length_frames)
    if not (math.isfinite(audio.sample_rate) and audio.sample_rate >= 0):
        raise PayloadError(f"audio {tag!r} with sample rate {audio.sample_rate}")
    return Audio(
        audio.encoded_audio_string,
        audio.sample_rate,
        audio.num_channels,
        audio.length_frames,
        audio.content_type or "audio/wav",
    )


def _tb_audio_tensor(
    tensor: tensorboard_pb2.TensorProto, tag: str, step: int, wall_time: float
) -> list[Event]:
    """A TF2 audio tensor: ``[clips, 2]`` strings of (WAV, label); one event per clip,
    named as TF2 images are. Rate, channels and frames come from each WAV header (0 when
    a clip has none that reads)."""
    shape, strings = _strings(tensor, f"audio tensor {tag!r}")
    if len(shape) != 2 or shape[1] != 2:
        raise PayloadError(f"audio tensor {tag!r} of shape {shape}, expected (clips, 2)")
    events = []
    for index in range(shape[0]):
        clip, label = strings[2 * index], strings[2 * index + 1]
        rate, channels, frames = wav_layout(clip) or (0.0, 0, 0)
        audio = Audio(clip, rate, channels, frames, label=label.decode("utf-8", "replace"))
        name = tag if shape[0] == 1 else f"{tag}/{index}"
        events.append(Event(step, wall_time, "audio", name, audio))
    return events


def _tb_pr_curve(tensor: tensorboard_pb2.TensorProto, tag: str, budget: FillBudget) -> np.ndarray:
    """A PR-curve tensor as float64 of shape ``(6, thresholds)`` (see :class:`Event`)."""
    array = tb_tensor_to_array(tensor, budget)
    if isinstance(array, list) or array.ndim != 2 or array.shape[0] != 6:
        shape = "strings" if isinstance(array, list) else array.shape
        raise PayloadError(f"PR-curve tensor {tag!r} of shape {shape}, expected (6, thresholds)")
    return np.array(array, dtype=np.float64)


def _tb_hparams(
    metadata: tensorboard_pb2.SummaryMetadata, tag: str
) -> tensorboard_plugins_pb2.HParamsPluginData:
    """The hparams plugin's message, kept in the value's plugin content."""
    data = tensorboard_plugins_pb2.HParamsPluginData.FromString(metadata.plugin_data.content)
    if data.WhichOneof("data") is None:
        raise PayloadError(f"hparams value {tag!r} holds no experiment, session start or end")
    return data


def decode_tensorboard(payload: bytes, file_name: str, stats: ReadStats) -> list[Event]:
    """Events of one record of a TensorBoard event file."""
    return _checked(_tensorboard_events, payload, file_name, stats)


def _tensorboard_events(
    payload: bytes, file_name: str, skipped: list[str], convert: bool = True
) -> list[Event]:
    event = tensorboard_pb2.Event.FromString(payload)
    what = event.WhichOneof("what")
    if what == "summary":
        budget = FillBudget(len(payload))
        out: list[Event] = []
        for value in event.summary.value:
            out.extend(_tb_value(value, event.step, event.wall_time, skipped, budget, convert))
        return out
    if what == "graph_def":
        return [Event(event.step, event.wall_time, "graph", file_name, _tb_graph(event.graph_def))]
    if what == "tagged_run_metadata":
        tagged = event.tagged_run_metadata
        metadata = tensorboard_graph_pb2.RunMetadata.FromString(tagged.run_metadata)
        return [Event(event.step, event.wall_time, "run_metadata", tagged.tag, metadata)]
    if what == "session_log":
        skipped.append(what)
    elif what is None:
        event.DiscardUnknownFields()
        if event.ByteSize() != len(payload):
            skipped.append("other_event")  # log messages, meta graphs
    return []


def _tb_graph(graph_def: bytes) -> anf_ir_pb2.GraphProto:
    """A TensorBoard ``GraphDef`` as MindSpore's GraphProto (see :mod:`sumlens.io.tb_graph`)."""
    try:
        return graph_from_graph_def(graph_def)
    except ValueError as err:
        raise PayloadError(f"graph_def: {err}") from err


DECODERS: dict[str, Decoder] = {
    "summary": decode_summary,
    "lineage": decode_lineage,
    "tensorboard": decode_tensorboard,
}

INDEXERS: dict[str, Decoder] = {
    "summary": partial(_checked, partial(_summary_events, convert=False)),
    "lineage": decode_lineage,
    "tensorboard": partial(_checked, partial(_tensorboard_events, convert=False)),
}
"""Decoders for readers that only index the values they do not show at once: like
:data:`DECODERS`, except that histograms and tensors come with ``value`` None (never
converted to arrays; the record is read again when one is wanted, see
:func:`sumlens.io.reader.read_events_at`). What converting would find wrong in such a
value is found then, so such a record is not counted as corrupt while indexing."""
