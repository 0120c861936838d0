"""The loader's saved state: what is saved comes back, the segments are tidied on the way,
and a run whose points were lost is read again."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from sumlens.board.data.persist import SCHEMA_VERSION, StateDB
from sumlens.board.data.samples import SampleBucket
from sumlens.board.data.state import (
    BucketKey,
    DamagedValue,
    FileState,
    RunState,
    SeriesKey,
    SeriesState,
)
from sumlens.board.data.store import MAX_CHUNKS, POINT, SegmentStore


def _open(tmp_path: Path) -> tuple[SegmentStore, StateDB]:
    store = SegmentStore(tmp_path / "ws", tmp_path / "base")
    return store, StateDB(store.root)


def _close(store: SegmentStore, db: StateDB) -> None:
    db.close()
    store.close()


def _save(
    db: StateDB, store: SegmentStore, runs: dict[str, RunState], changed: list[str], gone: list[str]
) -> None:
    """A save as the loader makes it: rows made, written, then unheld segments removed."""
    db.write(db.batch(store, runs, changed, gone))
    store.sweep()


def _series(store: SegmentStore, rank: int | None, tag: str, pieces: int) -> SeriesState:
    """A series of ``pieces`` writes of 3 points each."""
    series = SeriesState(rank, tag, last_file="events.1")
    for piece in range(pieces):
        points = np.zeros(3, dtype=POINT)
        points["step"] = np.arange(3) + 3 * piece
        points["value"] = points["step"] * 2.0
        segment, first = store.write(points)
        series.chunks.append((segment, first, 3))
    series.count, series.last_step, series.last_wall = 3 * pieces, 3 * pieces - 1, 9.5
    return series


def _run(store: SegmentStore, run_id: str) -> RunState:
    run = RunState(run_id, f"/base/{run_id}", status="ready", created=1.5, restarts=2)
    run.files["events.1"] = FileState("events.1", "summary", 0, size=90, offset=90, head="ab")
    run.files["events.2"] = FileState("events.2", "tensorboard", None, read_error="EACCES")
    run.order = {0: ["events.1"], None: ["events.2"]}
    run.sample_files = ["events.1"]
    run.damaged_values = [DamagedValue("events.1", 40, "img")]
    for key in (SeriesKey(0, "loss"), SeriesKey(None, "acc/\u00e9\0x")):
        run.series[key] = _series(store, key.rank, key.tag, pieces=2)
    bucket = SampleBucket(4)
    for step in range(6):
        bucket.offer(step, 10.0 + step, 0, 100 * step, 20)
    run.buckets[BucketKey(None, "image", "img")] = bucket
    run.changed_buckets = set(run.buckets)
    return run


def _same(a: RunState, b: RunState) -> None:
    fields = ("id", "path", "files", "order", "series", "sample_files", "created", "status")
    for name in (*fields, "restarts", "damaged_values"):
        assert getattr(a, name) == getattr(b, name), name
    assert a.buckets.keys() == b.buckets.keys()
    for key, bucket in a.buckets.items():
        assert np.array_equal(bucket.items, b.buckets[key].items)
        assert bucket.stride == b.buckets[key].stride


def test_what_is_saved_comes_back(tmp_path: Path) -> None:
    store, db = _open(tmp_path)
    runs = {name: _run(store, name) for name in ("./a", "./b")}
    _save(db, store, runs, ["./a", "./b"], [])
    expected = {
        name: {key: store.read(s.chunks) for key, s in run.series.items()}
        for name, run in runs.items()
    }
    _close(store, db)
    store, db = _open(tmp_path)
    loaded, lost = db.load(store, {"image": 4})
    assert lost == set() and sorted(run.id for run in loaded) == ["./a", "./b"]
    for run in loaded:
        _same(run, runs[run.id])
        for key, series in run.series.items():
            assert np.array_equal(store.read(series.chunks), expected[run.id][key])
    _save(db, store, {}, [], ["./b"])  # removed: gone from the saved state
    _close(store, db)
    store, db = _open(tmp_path)
    assert [run.id for run in db.load(store, {})[0]] == ["./a"]
    _close(store, db)


def test_a_run_whose_points_were_lost_is_read_again(tmp_path: Path) -> None:
    store, db = _open(tmp_path)
    runs = {"./a": _run(store, "./a")}
    _save(db, store, runs, ["./a"], [])
    _close(store, db)
    for path in (store.root / "segments").glob("*.seg"):
        path.write_bytes(b"")
    store, db = _open(tmp_path)
    assert db.load(store, {}) == ([], {"./a"})
    _close(store, db)


def test_series_in_many_pieces_are_merged_when_saved(tmp_path: Path) -> None:
    store, db = _open(tmp_path)
    run = RunState("./a", "/base/a")
    run.series[SeriesKey(0, "loss")] = series = _series(store, 0, "loss", pieces=MAX_CHUNKS + 5)
    before = store.read(series.chunks)
    _save(db, store, {"./a": run}, ["./a"], [])
    assert len(series.chunks) <= MAX_CHUNKS
    assert np.array_equal(store.read(series.chunks), before)
    _close(store, db)
    store, db = _open(tmp_path)
    (loaded,), _ = db.load(store, {})
    assert np.array_equal(store.read(loaded.series[SeriesKey(0, "loss")].chunks), before)
    _close(store, db)


def test_a_cache_of_another_schema_is_rebuilt(tmp_path: Path) -> None:
    store, db = _open(tmp_path)
    _save(db, store, {"./a": _run(store, "./a")}, ["./a"], [])
    _close(store, db)
    with sqlite3.connect(store.root / "state.db") as raw:
        raw.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION - 1),))
    store, db = _open(tmp_path)
    assert db.load(store, {}) == ([], set())
    assert list((store.root / "segments").glob("*.seg")) == []  # no series holds them
    _close(store, db)
