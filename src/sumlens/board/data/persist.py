"""The loader's state saved beside the segments, so a re-open reads only what grew.

One SQLite database in the cache directory (``state.db``) holds a row per run and a row
per kept-sample bucket (its samples and its index of every step's record). A run's row
keeps its small fields and files as JSON and its series packed: their fields as
:data:`SERIES_ROW` records, their chunks as :data:`CHUNK` records and their tags as one
JSON list, so a run of 12,345 series saves in milliseconds.

:meth:`StateDB.batch` also keeps the segments tidy (:func:`tidy`); the segments no series
holds any more are removed only after :meth:`StateDB.write` committed the rows that no
longer name them: a crash at any point leaves saved rows whose points are on disk.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from sumlens.board.data.samples import INDEX_CAP, RECORD, SAMPLE, SampleBucket, StepIndex
from sumlens.board.data.state import (
    BucketKey,
    DamagedValue,
    FileState,
    RunState,
    SeriesKey,
    SeriesState,
)
from sumlens.board.data.store import SegmentStore, merge_tail

_log = logging.getLogger("sumlens.board")

SCHEMA_VERSION = 5
"""Bumped when the layout changes; a cache of another version is rebuilt."""
SERIES_ROW = np.dtype(
    [
        ("rank", "<i8"),  # -1: no rank
        ("count", "<i8"),
        ("first_step", "<i8"),
        ("last_step", "<i8"),
        ("first_wall", "<f8"),
        ("last_wall", "<f8"),
        ("last_file", "<i8"),  # index into the row's list of file names
        ("chunks", "<i8"),  # how many of the row's chunks, in order, are this series'
    ]
)
"""One series of a run's row (its tag is in the row's tag list)."""
CHUNK = np.dtype([("segment", "<i8"), ("first", "<i8"), ("count", "<i8")])
"""One chunk of a series (:data:`~sumlens.board.data.store.Chunk`), as saved."""
_FILE_FIELDS = [f.name for f in fields(FileState)]
_RUN_FIELDS = (
    "path", "created", "updated", "several_trainings", "restarts", "stale_points_dropped",
    "status", "error", "unlisted", "sample_files",
)  # fmt: skip
_NO_RANK = -1


@dataclass
class Batch:
    """Rows of one save (:meth:`StateDB.batch`)."""

    runs: list[tuple[str, str, str, bytes, bytes]] = field(default_factory=list)
    samples: list[tuple[str, int, str, str, int, bytes, int, bytes]] = field(default_factory=list)
    dropped: list[tuple[str, int, str, str]] = field(default_factory=list)
    """Buckets gone."""
    gone: list[str] = field(default_factory=list)
    """Runs gone."""


class StateDB:
    """The ``state.db`` of a cache directory (the caller serialises calls)."""

    def __init__(self, root: Path) -> None:
        self._db = sqlite3.connect(root / "state.db", check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        found = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if found is None or found[0] != str(SCHEMA_VERSION):
            self._db.execute("DROP TABLE IF EXISTS runs")
            self._db.execute("DROP TABLE IF EXISTS samples")
            self._db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
            )
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, state TEXT, tags TEXT, "
            "series BLOB, chunks BLOB)"
        )
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS samples (run TEXT, rank INTEGER, plugin TEXT, "
            "tag TEXT, stride INTEGER, items BLOB, index_stride INTEGER, steps BLOB, "
            "PRIMARY KEY (run, rank, plugin, tag))"
        )
        self._db.commit()

    def load(self, store: SegmentStore, caps: dict[str, int]) -> tuple[list[RunState], set[str]]:
        """The saved runs whose points ``store`` still holds (their chunks counted in), and
        the ids of the others (points lost, or a row that cannot be read): those are read
        again. Segments no restored series holds are removed."""
        buckets: dict[str, dict[BucketKey, SampleBucket]] = {}
        for run_id, rank, plugin, tag, stride, items, index_stride, steps in self._db.execute(
            "SELECT run, rank, plugin, tag, stride, items, index_stride, steps FROM samples"
        ):
            if plugin not in caps:  # a plugin no longer declared: its values are not served
                continue
            index = StepIndex(INDEX_CAP, np.frombuffer(steps, RECORD), index_stride)
            bucket = SampleBucket(caps[plugin], np.frombuffer(items, SAMPLE).copy(), stride, index)
            buckets.setdefault(run_id, {})[BucketKey(_rank(rank), plugin, tag)] = bucket
        runs, lost = [], set()
        for run_id, state, tags, series, chunks in self._db.execute(
            "SELECT id, state, tags, series, chunks FROM runs"
        ):
            try:
                run = _decode(run_id, json.loads(state), json.loads(tags), series, chunks)
            except (KeyError, TypeError, ValueError) as err:
                _log.warning(
                    "the saved state of run %s cannot be read (%s): reading it again", run_id, err
                )
                lost.add(run_id)
                continue
            if store.adopt([chunk for s in run.series.values() for chunk in s.chunks]):
                run.buckets = buckets.get(run_id, {})
                runs.append(run)
            else:  # points were lost (a crash before they reached the disk): read it again
                lost.add(run_id)
        store.sweep()
        return runs, lost

    def batch(
        self,
        store: SegmentStore,
        runs: dict[str, RunState],
        changed: Iterable[str],
        gone: Iterable[str],
    ) -> Batch:
        """The rows that save the ``changed`` runs of ``runs`` (with their changed buckets)
        and forget the ``gone`` ones; the segments are tidied first (:func:`tidy`). Made
        with the states' lock held; :meth:`write` them without it."""
        changed = set(changed) | tidy(store, runs, changed)
        batch = Batch(gone=list(gone))
        for run in (runs[run_id] for run_id in changed if run_id in runs):
            batch.runs.append((run.id, *_encode(run)))
            for key in run.changed_buckets:
                bucket = run.buckets.get(key)
                where = (run.id, _no_none(key.rank), key.plugin, key.tag)
                if bucket is None:
                    batch.dropped.append(where)
                else:
                    batch.samples.append(
                        (*where, bucket.stride, bucket.items.tobytes(),
                         bucket.index.stride, bucket.index.rows.tobytes())
                    )  # fmt: skip
            run.changed_buckets.clear()
        return batch

    def write(self, batch: Batch) -> None:
        """Write ``batch`` in one transaction. Then the segments no series holds any more
        may go (:meth:`~sumlens.board.data.store.SegmentStore.sweep`)."""
        gone = [(run_id,) for run_id in batch.gone]
        with self._db:  # a run gone and found again since the last save is deleted, then saved
            self._db.executemany("DELETE FROM runs WHERE id = ?", gone)
            self._db.executemany("DELETE FROM samples WHERE run = ?", gone)
            self._db.executemany("INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?)", batch.runs)
            self._db.executemany(
                "INSERT OR REPLACE INTO samples VALUES (?, ?, ?, ?, ?, ?, ?, ?)", batch.samples
            )
            self._db.executemany(
                "DELETE FROM samples WHERE run = ? AND rank = ? AND plugin = ? AND tag = ?",
                batch.dropped,
            )

    def close(self) -> None:
        """Close the database."""
        self._db.close()


def tidy(store: SegmentStore, runs: dict[str, RunState], changed: Iterable[str]) -> set[str]:
    """Merge the newest chunks of ``changed`` series grown in too many pieces
    (:func:`~sumlens.board.data.store.merge_tail`) and, once dead points pass their share,
    copy every series holding points in a segment with dead ones into a fresh segment.
    All in one write; returns the ids of the runs whose series moved (to be saved)."""
    compact = store.should_compact()
    chosen = runs.values() if compact else [runs[i] for i in changed if i in runs]
    moves: list[tuple[str, SeriesState, int]] = []
    for run in chosen:
        for series in run.series.values():
            chunks = series.chunks
            keep = 0 if compact and store.wasteful(chunks) else len(chunks) - merge_tail(chunks)
            if keep < len(chunks):
                moves.append((run.id, series, keep))
    moved = store.rewrite([series.chunks[keep:] for _, series, keep in moves], fresh=compact)
    for (_, series, keep), chunks in zip(moves, moved, strict=True):
        series.chunks = series.chunks[:keep] + chunks
    return {run_id for run_id, _, _ in moves}


def _encode(run: RunState) -> tuple[str, str, bytes, bytes]:
    """A run's row: its state as JSON, its tags as JSON, its series and chunks packed."""
    series = list(run.series.values())
    names = {name: i for i, name in enumerate(dict.fromkeys(s.last_file for s in series))}
    rows = np.array(
        [
            (_no_none(s.rank), s.count, s.first_step, s.last_step, s.first_wall, s.last_wall,
             names[s.last_file], len(s.chunks))
            for s in series
        ],
        dtype=SERIES_ROW,
    )  # fmt: skip
    chunks = np.array([chunk for s in series for chunk in s.chunks], dtype=CHUNK)
    state: dict[str, Any] = {name: getattr(run, name) for name in _RUN_FIELDS}
    state["files"] = [[getattr(f, name) for name in _FILE_FIELDS] for f in run.files.values()]
    state["order"] = [[rank, names] for rank, names in run.order.items()]
    state["damaged_values"] = [list(value) for value in run.damaged_values]
    state["last_files"] = list(names)
    tags = json.dumps([s.tag for s in series])
    return json.dumps(state), tags, rows.tobytes(), chunks.tobytes()


def _decode(
    run_id: str, state: dict[str, Any], tags: list[str], series: bytes, chunks: bytes
) -> RunState:
    """The inverse of :func:`_encode`."""
    run = RunState(run_id, state["path"])
    for name in _RUN_FIELDS:
        setattr(run, name, state[name])
    run.files = {row[0]: FileState(*row) for row in state["files"]}
    run.order = {rank: names for rank, names in state["order"]}
    run.damaged_values = [DamagedValue(*value) for value in state["damaged_values"]]
    last_files = state["last_files"]
    spans = np.frombuffer(chunks, CHUNK).tolist()
    at = 0
    for tag, row in zip(tags, np.frombuffer(series, SERIES_ROW).tolist(), strict=True):
        rank, count, first_step, last_step, first_wall, last_wall, last_file, n = row
        rank = _rank(rank)
        run.series[SeriesKey(rank, tag)] = SeriesState(
            rank, tag, count, first_step, last_step, first_wall, last_wall,
            last_files[last_file], spans[at : at + n],
        )  # fmt: skip
        at += n
    if at != len(spans):
        raise ValueError(f"{len(spans)} chunks saved, {at} named by the series")
    return run


def _rank(saved: int) -> int | None:
    return None if saved == _NO_RANK else saved


def _no_none(rank: int | None) -> int:
    return _NO_RANK if rank is None else rank
