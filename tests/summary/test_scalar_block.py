"""The scalar fast lane: its compiled encoder writes exactly what protobuf would."""

from __future__ import annotations

import math

import numpy as np

from sumlens._proto import summary_pb2, tensorboard_pb2
from sumlens.io.framing import ReadStats, encode_record, scan_all
from sumlens.summary.scalar_block import BLOCK_STEPS, ScalarCollector, encode_scalar_block

TAGS = ["loss", "lr", "ünïcode/ταγ", "x" * 200, "a"]
STEPS = [0, 1, 127, 128, 2**31, -1, -(2**40), 2**62]
VALUES = [0.5, -1.25, math.nan, math.inf, -math.inf, 1e-45, 3.4e38, 0.0]


def expected_records(file_format: str) -> bytes:
    out = []
    for index, step in enumerate(STEPS):
        wall = 1.7e9 + index / 1000
        names = TAGS[: 1 + index % len(TAGS)]
        values = [VALUES[(index + k) % len(VALUES)] for k in range(len(names))]
        if file_format == "mindspore":
            event = summary_pb2.Event(wall_time=wall, step=step)
            for name, value in zip(names, values, strict=True):
                event.summary.value.add(tag=name, scalar_value=value)
            out.append(encode_record(event.SerializeToString()))
        else:
            for name, value in zip(names, values, strict=True):
                event = tensorboard_pb2.Event(wall_time=wall, step=step)
                event.summary.value.add(tag=name, simple_value=value)
                out.append(encode_record(event.SerializeToString()))
    return b"".join(out)


def collected_block():
    collector = ScalarCollector()
    for index, step in enumerate(STEPS):
        names = TAGS[: 1 + index % len(TAGS)]
        scalars = {name: VALUES[(index + k) % len(VALUES)] for k, name in enumerate(names)}
        assert collector.add_step(step, 1.7e9 + index / 1000, scalars) is False
    block = collector.take()
    assert block is not None and collector.take() is None
    return block, collector.tags


def test_mindspore_block_bytes_equal_protobuf() -> None:
    block, tags = collected_block()
    data, ends = encode_scalar_block(block, tags, "mindspore")
    assert bytes(data[: ends[-1]]) == expected_records("mindspore")
    assert np.all(np.diff(ends) > 0)


def test_tensorboard_block_decodes_like_protobuf() -> None:
    """Same events; proto3 leaves a zero step out where the kernel writes it, so compare parsed."""
    block, tags = collected_block()
    data, ends = encode_scalar_block(block, tags, "tensorboard")
    ours, _ = scan_all(bytes(data[: ends[-1]]), 0, int(ends[-1]), ReadStats())
    expected = expected_records("tensorboard")
    theirs, _ = scan_all(expected, 0, len(expected), ReadStats())
    assert len(ours) == len(theirs) == len(ends)
    for (_, start, length), (_, start2, length2) in zip(ours, theirs, strict=True):
        mine = tensorboard_pb2.Event.FromString(bytes(data[start : start + length]))
        reference = tensorboard_pb2.Event.FromString(expected[start2 : start2 + length2])
        assert str(mine) == str(reference)


def test_rows_are_due_when_the_block_is_full() -> None:
    collector = ScalarCollector()
    for step in range(1, BLOCK_STEPS):
        assert collector.add_step(step, 100.0, {"a": float(step)}) is False
    assert collector.add_step(BLOCK_STEPS, 100.0, {"a": 0.0}) is True
    block = collector.take()
    assert block is not None and [row[0] for row in block.rows] == list(range(1, BLOCK_STEPS + 1))
    assert collector.take() is None


def test_values_beyond_float32_become_infinite() -> None:
    collector = ScalarCollector()
    collector.add_step(1, 100.0, {"big": 1e39, "small": -1e39})
    data, ends = encode_scalar_block(collector.take(), collector.tags, "mindspore")
    event = summary_pb2.Event.FromString(bytes(data[12 : ends[0] - 4]))
    assert [value.scalar_value for value in event.summary.value] == [math.inf, -math.inf]
