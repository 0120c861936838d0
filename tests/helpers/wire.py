"""Building protobuf bytes by hand for the reader tests: varints and TensorBoard tensors."""

from __future__ import annotations

from sumlens._proto import tensorboard_pb2


def varint(value: int) -> bytes:
    """``value`` as a protobuf varint (negative numbers as their 64-bit two's complement)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def tb_tensor_value(
    tag: str, dims: list[int], dtype: int = 1, plugin: str = "", **fields: object
) -> tensorboard_pb2.Summary.Value:
    """A TensorBoard summary value holding one tensor with these dims, dtype and fields."""
    value = tensorboard_pb2.Summary.Value(tag=tag)
    if plugin:
        value.metadata.plugin_data.plugin_name = plugin
    value.tensor.dtype = dtype
    for size in dims:
        value.tensor.tensor_shape.dim.add(size=size)
    for name, values in fields.items():
        if name == "tensor_content":
            value.tensor.tensor_content = values
        else:
            getattr(value.tensor, name).extend(values)
    return value
