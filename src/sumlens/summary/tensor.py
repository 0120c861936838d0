"""Tensors as MindSpore writes them: dtype enum, shape, and every value as float32.

MindSpore stores the values of all dtypes in ``TensorProto.float_data`` (so int64 values
beyond 2**24 lose precision, as they do there); MindInsight reads only that field.
TensorBoard tensors keep their own dtype in ``tensor_content``.
"""

from __future__ import annotations

import numpy as np

from sumlens._proto import anf_ir_pb2, tensorboard_pb2
from sumlens.summary.wire import packed_field

_FLOAT_DATA_FIELD = 3

MS_DTYPES: dict[np.dtype, int] = {
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

TB_DTYPES: dict[np.dtype, int] = {
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


def ms_tensor(array: np.ndarray) -> anf_ir_pb2.TensorProto:
    """A MindSpore TensorProto of ``array`` (dtype checked by :func:`check_tensor_dtype`)."""
    proto = anf_ir_pb2.TensorProto(dims=array.shape, data_type=MS_DTYPES[array.dtype])
    proto.MergeFromString(packed_field(_FLOAT_DATA_FIELD, array.reshape(-1), "f4"))
    return proto


def tb_tensor(array: np.ndarray) -> tensorboard_pb2.TensorProto:
    """A TensorBoard TensorProto of ``array`` with its values as raw little-endian bytes."""
    proto = tensorboard_pb2.TensorProto(dtype=TB_DTYPES[array.dtype])
    proto.tensor_shape.dim.extend(tensorboard_pb2.TensorShapeProto.Dim(size=s) for s in array.shape)
    proto.tensor_content = np.ascontiguousarray(array, array.dtype.newbyteorder("<")).tobytes()
    return proto
