"""Tensors as MindSpore writes them: dtype enum, shape, and every value as float32.

MindSpore stores the values of all dtypes in ``TensorProto.float_data`` (so int64 values
beyond 2**24 lose precision, as they do there); MindInsight reads only that field.
TensorBoard tensors keep their own dtype in ``tensor_content``.

What the writer accepts, the readers must read back (a value they refuse takes its whole
step with it in MindSpore's format). So a tensor has at most
:data:`~sumlens.io.decode.MAX_DIMS` dimensions (refused where it is added, see
:func:`check_tensor_shape`), and an integer near the top of a 32- or 64-bit type is
written as the largest float32 within the type: float32 rounding would make
``2**31 - 1`` into ``2**31``, which no int32 holds, and readers refuse such a value.
A float64 beyond float32's range becomes an infinity, as in MindSpore (said once per
tag); TensorBoard's format keeps every value exactly.
"""

from __future__ import annotations

import numpy as np

from sumlens._log import warn_once
from sumlens._proto import anf_ir_pb2, tensorboard_pb2
from sumlens.io.decode import MAX_DIMS
from sumlens.summary.wire import packed_field

_FLOAT_DATA_FIELD = 3

MS_DTYPES: dict[np.dtype, anf_ir_pb2.DataType] = {
    np.dtype(np.bool_): anf_ir_pb2.DT_BOOL,
    np.dtype(np.int8): anf_ir_pb2.DT_INT8,
    np.dtype(np.int16): anf_ir_pb2.DT_INT16,
    np.dtype(np.int32): anf_ir_pb2.DT_INT32,
    np.dtype(np.int64): anf_ir_pb2.DT_INT64,
    np.dtype(np.uint8): anf_ir_pb2.DT_UINT8,
    np.dtype(np.uint16): anf_ir_pb2.DT_UINT16,
    np.dtype(np.uint32): anf_ir_pb2.DT_UINT32,
    np.dtype(np.uint64): anf_ir_pb2.DT_UINT64,
    np.dtype(np.float16): anf_ir_pb2.DT_FLOAT16,
    np.dtype(np.float32): anf_ir_pb2.DT_FLOAT32,
    np.dtype(np.float64): anf_ir_pb2.DT_FLOAT64,
}
"""numpy dtype -> MindSpore DataType; other dtypes cannot be written as tensors."""

TB_DTYPES: dict[np.dtype, tensorboard_pb2.DataType] = {
    np.dtype(np.float32): tensorboard_pb2.DT_FLOAT,
    np.dtype(np.float64): tensorboard_pb2.DT_DOUBLE,
    np.dtype(np.int32): tensorboard_pb2.DT_INT32,
    np.dtype(np.uint8): tensorboard_pb2.DT_UINT8,
    np.dtype(np.int16): tensorboard_pb2.DT_INT16,
    np.dtype(np.int8): tensorboard_pb2.DT_INT8,
    np.dtype(np.int64): tensorboard_pb2.DT_INT64,
    np.dtype(np.bool_): tensorboard_pb2.DT_BOOL,
    np.dtype(np.uint16): tensorboard_pb2.DT_UINT16,
    np.dtype(np.float16): tensorboard_pb2.DT_HALF,
    np.dtype(np.uint32): tensorboard_pb2.DT_UINT32,
    np.dtype(np.uint64): tensorboard_pb2.DT_UINT64,
}


def check_tensor_dtype(dtype: np.dtype, name: str) -> None:
    """Raise ``TypeError`` for a dtype no tensor record can hold (complex, strings ...)."""
    if dtype not in MS_DTYPES:
        allowed = ", ".join(sorted(known.name for known in MS_DTYPES))
        raise TypeError(f"{name} has dtype {dtype}, which cannot be recorded; use {allowed}")


def check_tensor_shape(shape: tuple[int, ...], name: str) -> None:
    """Raise ``ValueError`` for a shape that readers refuse (more than ``MAX_DIMS`` dims)."""
    if len(shape) > MAX_DIMS:
        raise ValueError(
            f"tensor {name!r} has {len(shape)} dimensions {shape}; at most {MAX_DIMS} can be "
            "recorded (readers refuse more, and in MindSpore's format its whole step with "
            "it): reshape it"
        )


def _float32_tops() -> dict[np.dtype, np.float32]:
    """For each integer dtype float32 cannot hold exactly at its top: the largest float32
    not above the type's largest value."""
    tops = {}
    for dtype in MS_DTYPES:
        if dtype.kind in "iu":
            top = int(np.iinfo(dtype).max)
            rounded = np.float32(top)
            if int(rounded) > top:
                tops[dtype] = np.nextafter(rounded, np.float32(0))
    return tops


_FLOAT32_TOPS = _float32_tops()


def float32_values(array: np.ndarray, name: str = "tensor") -> np.ndarray:
    """The values of ``array``, flat, as MindSpore's ``float_data`` holds them (see the
    module doc: integers kept within their type, float64 overflow to infinity said once)."""
    flat = array.reshape(-1)
    top = _FLOAT32_TOPS.get(array.dtype)
    if top is not None:
        values = flat.astype(np.float32)
        return np.minimum(values, top, out=values)
    if array.dtype == np.float64:
        with np.errstate(over="ignore"):
            values = flat.astype(np.float32)
        if np.isinf(values).any() and not np.isinf(flat[np.isinf(values)]).all():
            warn_once(
                f"tensor-float32-overflow:{name}",
                "tensor %r holds float64 values beyond float32's range: MindSpore's format "
                "stores them as infinities (file_format='tensorboard' keeps them)",
                name,
            )
        return values
    return flat


def ms_tensor(array: np.ndarray, name: str = "tensor") -> anf_ir_pb2.TensorProto:
    """A MindSpore TensorProto of ``array`` (dtype checked by :func:`check_tensor_dtype`)."""
    proto = anf_ir_pb2.TensorProto(dims=array.shape, data_type=MS_DTYPES[array.dtype])
    proto.MergeFromString(packed_field(_FLOAT_DATA_FIELD, float32_values(array, name), "f4"))
    return proto


def tb_tensor(array: np.ndarray) -> tensorboard_pb2.TensorProto:
    """A TensorBoard TensorProto of ``array`` with its values as raw little-endian bytes."""
    proto = tensorboard_pb2.TensorProto(dtype=TB_DTYPES[array.dtype])
    proto.tensor_shape.dim.extend(tensorboard_pb2.TensorShapeProto.Dim(size=s) for s in array.shape)
    proto.tensor_content = np.ascontiguousarray(array, array.dtype.newbyteorder("<")).tobytes()
    return proto
