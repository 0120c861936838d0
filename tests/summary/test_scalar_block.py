"""The scalar fast lane: its compiled encoder writes exactly what protobuf would."""

from __future__ import annotations

import math

import numpy as np

from sumlens._proto import summary_pb2, tensorboard_pb2
from sumlens.io.framing import ReadStats, encode_record, scan_all
from sumlens.summary.scalar_block import (
    BLOCK_STEPS,
    ScalarCollector,
    _before_seal,
    _sealed,
    encode_scalar_block,
)

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


def _rows(collector: ScalarCollector) -> list[tuple[int, dict[str, float]]]:
    block = collector.take()
    return [] if block is None else [(step, scalars) for step, _, scalars in block.rows]


def test_a_steps_scalars_given_one_by_one_share_a_row() -> None:
    """torch's style (one call per scalar) joins the newest row of the same step, so ten
    scalars of a step cost the writer one row, as record() gives it."""
    collector = ScalarCollector()
    for step in (1, 2):
        for k in range(10):
            assert collector.add_value(step, None, f"t{k}", float(step * k)) is False
    assert _rows(collector) == [
        (step, {f"t{k}": float(step * k) for k in range(10)}) for step in (1, 2)
    ]


def test_only_a_new_tag_of_the_newest_rows_step_and_time_joins_it() -> None:
    collector = ScalarCollector()
    collector.add_value(5, None, "a", 1.0)
    collector.add_value(5, None, "a", 2.0)  # the same tag again: both values are written
    collector.add_value(6, None, "b", 3.0)
    collector.add_value(5, None, "c", 4.0)  # an older step again: after step 6, in order
    collector.add_value(7, 100.0, "d", 5.0)
    collector.add_value(7, 100.0, "e", 6.0)  # the same wall time given: joins
    collector.add_value(7, 101.0, "f", 7.0)  # another wall time: a row of its own
    collector.add_value(7, None, "g", 8.0)  # now is far from 101.0: a row of its own
    assert _rows(collector) == [
        (5, {"a": 1.0}),
        (5, {"a": 2.0}),
        (6, {"b": 3.0}),
        (5, {"c": 4.0}),
        (7, {"d": 5.0, "e": 6.0}),
        (7, {"f": 7.0}),
        (7, {"g": 8.0}),
    ]


def test_a_value_added_after_its_row_was_sealed_starts_a_row_of_its_own() -> None:
    """Taking a row seals it: a value that reaches the row afterwards is not in the taken
    block, and its caller hears so and starts a new row; one that reached it before the
    seal is written with the row, even if its caller only looks after the seal."""
    collector = ScalarCollector()
    collector.add_value(1, None, "a", 1.0)
    collector.add_value(1, None, "b", 2.0)
    block = collector.take()
    assert block is not None and [row[2] for row in block.rows] == [{"a": 1.0, "b": 2.0}]
    assert collector.add_value(1, None, "c", 3.0) is False
    assert _rows(collector) == [(1, {"c": 3.0})]

    values: dict = {}
    values["a"] = 1.0
    assert _sealed(values) == {"a": 1.0}
    assert _before_seal(values, "a") is True
    values["b"] = 2.0  # after the seal
    assert _before_seal(values, "b") is False


def test_a_row_the_writer_took_is_never_changed_again() -> None:
    collector = ScalarCollector()
    collector.add_value(1, None, "a", 1.0)
    taken = collector.take()
    collector.add_value(1, None, "b", 2.0)
    assert taken is not None and [row[2] for row in taken.rows] == [{"a": 1.0}]
    assert _rows(collector) == [(1, {"b": 2.0})]
