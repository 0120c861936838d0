"""``read_file_scalars``: reading a growing file piece by piece gives what one read gives."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pytest

from sumlens import SummaryRecord
from sumlens.io import Event, ReadStats, read_events_at, read_file_scalars, read_scalars
from sumlens.io.decode import PayloadError
from sumlens.io.reader import resolve_files


def _write(directory: Path, fmt: str, steps: range) -> Path:
    with SummaryRecord(directory, file_format=fmt) as record:
        for step in steps:
            record.add_value("scalar", "loss", 1.0 / step)
            record.add_value("scalar", "acc", step / 100.0)
            if step % 10 == 0:
                record.add_value("histogram", "w", np.arange(8, dtype=np.float32) * step)
            record.record(step)
    (path,) = [p for p in resolve_files(directory) if "lineage" not in p.name]
    return path


@pytest.mark.parametrize("fmt", ["mindspore", "tensorboard"])
def test_pieces_add_up_to_one_read(tmp_path: Path, fmt: str, scalar_engine: str) -> None:
    path = _write(tmp_path, fmt, range(1, 201))
    data = path.read_bytes()
    whole = read_scalars(path, engine=scalar_engine)
    grown = tmp_path / "grown" / path.name
    grown.parent.mkdir()
    parts: dict[str, list[np.ndarray]] = {}
    others: list[tuple[Event, int, int]] = []
    offset = 0
    for cut in (0, 7, 1000, len(data) // 2 + 3, len(data) - 5, len(data)):
        grown.write_bytes(data[:cut])  # the writer got this far (records may be torn)
        stats = ReadStats()
        columns, end = read_file_scalars(
            grown,
            start=offset,
            engine=scalar_engine,
            stats=stats,
            other=lambda *found: others.append(found),
        )
        assert offset <= end <= cut
        assert stats.corrupt_records == 0 and stats.torn_tail_bytes == cut - end
        for tag, (steps, _, values) in columns.items():
            parts.setdefault(tag, []).append(np.stack([steps, values]))
        offset = end
    assert offset == len(data)
    assert sorted(parts) == sorted(whole)
    for tag, (steps, _, values) in whole.items():
        joined = np.concatenate(parts[tag], axis=1)
        np.testing.assert_array_equal(joined[0], steps)
        np.testing.assert_array_equal(joined[1], values)
    assert {(e.plugin, e.tag) for e, _, _ in others} == {("histogram", "w")}
    assert len(others) == 20
    for event, at, length in others:  # where each one is: read back alone
        kind = "summary" if fmt == "mindspore" else "tensorboard"
        again = [e for e in read_events_at(path, kind, at, length) if e.tag == "w"]
        assert [(e.step, e.plugin) for e in again] == [(event.step, "histogram")]
        np.testing.assert_array_equal(again[0].value.counts, event.value.counts)


def _collect(into: list[tuple[Event, int, int]], event: Event, at: int, length: int) -> None:
    into.append((event, at, length))


@pytest.mark.parametrize("fmt", ["mindspore", "tensorboard"])
def test_an_indexing_read_leaves_values_unconverted(
    tmp_path: Path, fmt: str, scalar_engine: str
) -> None:
    with SummaryRecord(tmp_path, file_format=fmt) as record:
        for step in range(1, 13):
            record.add_value("scalar", "loss", 1.0 / step)
            record.add_value("histogram", "w", np.arange(8, dtype=np.float32) * step)
            record.add_value("tensor", "act", np.full((2, 3), step, dtype=np.float32))
            record.add_value("image", "x", np.full((1, 3, 4, 4), step / 12, dtype=np.float32))
            record.record(step)
    (path,) = [p for p in resolve_files(tmp_path) if "lineage" not in p.name]
    read: dict[bool, tuple[dict, list[tuple[Event, int, int]]]] = {}
    for values in (True, False):
        found: list[tuple[Event, int, int]] = []
        columns, end = read_file_scalars(
            path, engine=scalar_engine, other=partial(_collect, found), values=values
        )
        assert end == path.stat().st_size
        read[values] = columns, found
    (full_columns, full), (index_columns, index) = read[True], read[False]
    assert sorted(full_columns) == sorted(index_columns) == ["loss"]
    np.testing.assert_array_equal(full_columns["loss"][2], index_columns["loss"][2])
    where = [(e.step, e.wall_time, e.plugin, e.tag, at, n) for e, at, n in full]
    assert where == [(e.step, e.wall_time, e.plugin, e.tag, at, n) for e, at, n in index]
    assert {e.plugin for e, _, _ in index} == {"histogram", "tensor", "image"}
    for event, _, _ in index:
        converted = event.plugin == "image"  # an image is its bytes: nothing to convert
        assert (event.value is not None) == converted
    kind = "summary" if fmt == "mindspore" else "tensorboard"
    event, at, length = next(f for f in index if f[0].plugin == "tensor")
    (again,) = read_events_at(path, kind, at, length, tag="act")
    np.testing.assert_array_equal(again.value, np.full((2, 3), event.step, dtype=np.float32))


def test_one_tag_of_a_step_is_read_alone(tmp_path: Path) -> None:
    path = _write(tmp_path, "mindspore", range(1, 11))
    found: list[tuple[Event, int, int]] = []
    read_file_scalars(path, other=lambda *f: found.append(f))
    event, at, length = found[-1]
    everything = read_events_at(path, "summary", at, length)
    assert {e.tag for e in everything} == {"loss", "acc", "w"}
    (alone,) = read_events_at(path, "summary", at, length, tag="w")
    assert (alone.step, alone.plugin) == (event.step, "histogram")
    np.testing.assert_array_equal(alone.value.counts, event.value.counts)
    assert read_events_at(path, "summary", at, length, tag="nope") == []


def test_a_replaced_record_is_not_taken_for_the_old_one(tmp_path: Path) -> None:
    path = _write(tmp_path, "tensorboard", range(1, 20))
    found: list[tuple[Event, int, int]] = []
    read_file_scalars(path, other=lambda *f: found.append(f))
    _, at, length = found[0]
    data = bytearray(path.read_bytes())
    data[at + 3] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(PayloadError):
        read_events_at(path, "tensorboard", at, length)
    with pytest.raises(PayloadError):
        read_events_at(path, "tensorboard", len(data) - 2, 100)


def test_limit_reads_a_bounded_piece(tmp_path: Path, scalar_engine: str) -> None:
    path = _write(tmp_path, "tensorboard", range(1, 3001))
    offset, steps = 0, []
    calls = 0
    while True:
        columns, end = read_file_scalars(
            path, "tensorboard", start=offset, engine=scalar_engine, limit=1
        )
        calls += 1
        if end == offset:
            break
        steps.append(columns["loss"][0])
        offset = end
    assert offset == path.stat().st_size
    np.testing.assert_array_equal(np.concatenate(steps), np.arange(1, 3001))


def test_bad_arguments_are_named(tmp_path: Path) -> None:
    path = _write(tmp_path, "mindspore", range(1, 3))
    with pytest.raises(ValueError, match="start=-1"):
        read_file_scalars(path, start=-1)
    with pytest.raises(ValueError, match="kind='csv'"):
        read_file_scalars(path, kind="csv")
    with pytest.raises(ValueError, match="engine='fast'"):
        read_file_scalars(path, engine="fast")  # type: ignore[arg-type]
