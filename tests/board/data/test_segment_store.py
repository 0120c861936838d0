"""The segment store against the plain semantics: a series is the points appended to it,
less what was cut; whatever the chunks, segments, compaction and merging do underneath."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from sumlens.board.data.store import (
    COMPACT_MIN_POINTS,
    MAX_CHUNKS,
    POINT,
    SEGMENT_POINTS,
    Chunk,
    SegmentStore,
    merge_tail,
)


def _points(steps: np.ndarray) -> np.ndarray:
    points = np.zeros(steps.size, dtype=POINT)
    points["step"], points["wall"], points["value"] = steps, steps * 0.5, np.sqrt(steps)
    return points


class Model:
    """Series in a store beside the plain arrays they must equal."""

    def __init__(self, store: SegmentStore, series: int) -> None:
        self.store = store
        self.chunks: list[list[Chunk]] = [[] for _ in range(series)]
        self.plain = [np.empty(0, dtype=POINT) for _ in range(series)]

    def append(self, parts: dict[int, np.ndarray]) -> None:
        """New points of several series, in one write (as a read of one file does)."""
        segment, first = self.store.write(np.concatenate(list(parts.values())))
        for i, points in parts.items():
            self.chunks[i].append((segment, first, points.size))
            self.plain[i] = np.concatenate((self.plain[i], points))
            first += points.size

    def cut(self, i: int, count: int) -> None:
        self.chunks[i] = self.store.cut(self.chunks[i], count)
        self.plain[i] = self.plain[i][:count]

    def check(self) -> None:
        for chunks, plain in zip(self.chunks, self.plain, strict=True):
            assert sum(c[2] for c in chunks) == plain.size
            assert np.array_equal(self.store.read(chunks), plain)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SegmentStore]:
    made = SegmentStore(tmp_path / "workspace", tmp_path / "base")
    yield made
    made.close()


def _segment_files(store: SegmentStore) -> list[Path]:
    return sorted((store.root / "segments").glob("*.seg"))


def test_reads_gather_chunks_in_any_slice(store: SegmentStore) -> None:
    model = Model(store, 3)
    rng = np.random.default_rng(0)
    for batch in range(6):
        sizes = rng.integers(1, 40, size=3)
        model.append({i: _points(np.arange(n) + 100 * batch) for i, n in enumerate(sizes)})
    model.check()
    plain, chunks = model.plain[1], model.chunks[1]
    for start, stop in [(0, 1), (5, 60), (30, 31), (0, None), (plain.size - 1, None), (7, 3)]:
        assert np.array_equal(store.read(chunks, start, stop), plain[start:stop])
    assert len(_segment_files(store)) == 1  # six writes, one file


def test_cut_and_count_below(store: SegmentStore) -> None:
    model = Model(store, 2)
    for batch in range(4):
        model.append({0: _points(np.arange(10) + 10 * batch), 1: _points(np.arange(3))})
    plain = model.plain[0]
    for step in (-1, 0, 5, 10, 25, 39, 40, 1000):
        assert store.count_below(model.chunks[0], step) == np.searchsorted(plain["step"], step)
    model.cut(0, 25)  # inside the third chunk
    model.cut(1, 0)
    model.check()
    assert len(model.chunks[0]) == 3 and model.chunks[1] == []
    model.append({0: _points(np.arange(25, 30)), 1: _points(np.arange(2))})
    model.check()


def test_compaction_moves_live_points_and_removes_dead_segments(store: SegmentStore) -> None:
    model = Model(store, 2)
    big = COMPACT_MIN_POINTS + 10
    model.append({0: _points(np.arange(big)), 1: _points(np.arange(50))})
    assert not store.should_compact()
    model.cut(0, 10)  # nearly everything is dead now
    assert store.should_compact()
    (old,) = _segment_files(store)
    wasteful = [i for i, chunks in enumerate(model.chunks) if store.wasteful(chunks)]
    assert wasteful == [0, 1]
    moved = store.rewrite([model.chunks[i] for i in wasteful], fresh=True)
    for i, chunks in zip(wasteful, moved, strict=True):
        model.chunks[i] = chunks
    store.sweep()
    assert not old.exists() and not store.should_compact()
    assert [len(chunks) for chunks in model.chunks] == [1, 1]
    model.check()
    model.append({0: _points(np.arange(10, 20))})
    model.check()


def test_merging_keeps_few_chunks(store: SegmentStore) -> None:
    model = Model(store, 1)
    longest = 0
    for batch in range(300):  # a live run: a few points per pass
        model.append({0: _points(np.arange(3) + 3 * batch)})
        keep = len(model.chunks[0]) - merge_tail(model.chunks[0])
        if keep < len(model.chunks[0]):
            merged = store.rewrite([model.chunks[0][keep:]])
            model.chunks[0] = model.chunks[0][:keep] + merged[0]
        longest = max(longest, len(model.chunks[0]))
    assert longest <= MAX_CHUNKS + 1
    model.check()


def test_a_full_segment_makes_way_for_the_next(store: SegmentStore) -> None:
    model = Model(store, 2)
    model.append({0: _points(np.arange(SEGMENT_POINTS))})
    model.append({1: _points(np.arange(5))})
    assert len(_segment_files(store)) == 2
    model.check()


def test_reopened_chunks_are_adopted_unless_points_were_lost(tmp_path: Path) -> None:
    store = SegmentStore(tmp_path / "ws", tmp_path / "base")
    model = Model(store, 2)
    model.append({0: _points(np.arange(8)), 1: _points(np.arange(4))})
    (path,) = _segment_files(store)
    store.close()
    with open(path, "ab") as handle:  # written, but the state saying so was not saved
        handle.write(_points(np.arange(3)).tobytes() + b"torn")
    again = SegmentStore(tmp_path / "ws", tmp_path / "base")
    assert again.adopt(model.chunks[0] + model.chunks[1])
    model.store = again
    model.check()
    again.sweep()
    assert path.exists()  # its points are held
    model.append({1: _points(np.arange(4, 6))})  # a new session writes a segment of its own
    assert len(_segment_files(again)) == 2
    model.check()
    again.close()
    os.truncate(path, 10 * POINT.itemsize)  # the last points of the first segment were lost
    third = SegmentStore(tmp_path / "ws", tmp_path / "base")
    assert third.adopt(model.chunks[0])
    assert not third.adopt(model.chunks[1])
    third.close()
