"""Reading a run's event files into its state, from where the last read stopped.

Each file is read from the byte offset its :class:`~sumlens.board.data.state.FileState`
reached (:func:`sumlens.io.read_file_scalars`), so new points appear while training runs
and a torn last record is read once complete. The new points of all of a read's series
go to the :class:`~sumlens.board.data.store.SegmentStore` in one write; other values are
indexed into sample buckets (:mod:`sumlens.board.data.samples`).

Rules, per run:

* **Ranks stay apart.** A run's files are grouped by the rank in their names; each rank
  has its own series (TensorBoard files carry no rank: one group).
* **Files of one rank are read in order** (rotated files continue one another). If a file
  read before shrank, was replaced or vanished, or a new file sorts before one already
  read, the rank's series are rebuilt from the start. A replaced file is told from a
  grown one by a digest of its first bytes; on object storage (where an object grows only
  by being uploaded again) that costs a request per grown object per reload, so there a
  grown object is taken to continue: only its new bytes are read, with one ranged read
  (and an object uploaded again unchanged is not read at all: no probe either).
* **Steps going back drop what follows** (as TensorBoard's "preemption"): a point whose step
  is not above the series' last step removes the points at and after that step, so a run
  resumed from a checkpoint shows one line. A later file that starts at or before where an
  earlier file started marks the run as holding *several trainings* (MindSpore's docs ask
  for one training per directory; MindInsight overlays them silently).
* **A step written again with the same value is not a restart**: MindSpore writes each
  epoch's last step twice; the repeat is left out and nothing is counted. Written again
  with another value, it replaces the first (counted, as a resumed run's points are).
* **Records of the run written again are not a restart**: lineage, hyper-parameters and
  graphs (:data:`~sumlens.board.plugins.REWRITTEN`) are written again whole when they
  change, at step 0 (the adapters write the lineage at every evaluation): the newer one
  replaces the kept ones and nothing is counted as replaced points.
* **Damage is counted, never fatal**: corrupt records, resynchronised bytes, files with
  no record or that cannot be read are counted per file and shown.

Reading uses the numba engine once its kernels are loaded. Until then the python engine
(same results) reads the first :data:`SLOW_BYTES`, so the first runs are shown at once;
the rest waits for the kernels when they only need loading from numba's cache (about a
second), and is read in Python while a fresh install compiles them (~20 s, in a child
process).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from typing import Any, Literal

import numpy as np

from sumlens.board.data.discover import FoundFile, FoundRun, tree_lister
from sumlens.board.data.samples import SampleBucket, same_value
from sumlens.board.data.served import ServedRuns
from sumlens.board.data.state import BucketKey, FileState, RunState, SeriesKey, SeriesState
from sumlens.board.data.store import POINT
from sumlens.board.plugins import REWRITTEN
from sumlens.io import (
    Event,
    NotAnEventFileError,
    ReadStats,
    fast_engine_cached,
    fast_engine_ready,
    read_events_at,
    read_file_scalars,
)
from sumlens.io.decode import PayloadError
from sumlens.io.naming import file_rank
from sumlens.io.scalars import Columns, OtherEvents

_log = logging.getLogger("sumlens.board")

Engine = Literal["auto", "numba", "python"]
READ_LIMIT = 64 * 1024 * 1024
"""Bytes of one file read per call: bounds the memory a huge file needs while it loads."""
SLOW_BYTES = 256 * 1024
"""Bytes the python engine reads in all while the numba kernels load from numba's cache
(about a second): the first runs are shown at once, then reading waits for the kernels,
which read the rest many times faster (and load slower while Python reads beside them)."""
KERNEL_WAIT = 5.0
"""Seconds a read waits for cached numba kernels to load before reading in Python."""
HEAD_BYTES = 64
"""Leading bytes of a file remembered to tell a grown file from a replaced one."""


class RunReader:
    """Reads runs' files into their :class:`~sumlens.board.data.state.RunState`.

    The runs are ``served``'s: their files are opened through its storage, points go to
    its store, and each change is made under its lock and told to it. Reading stops early
    once ``stopping`` is set.
    """

    def __init__(
        self, served: ServedRuns, caps: dict[str, int], engine: Engine, stopping: threading.Event
    ) -> None:
        self.storage, self.store = served.storage, served.store
        self._object_storage = tree_lister(self.storage) is not None  # no digests, no probes
        self.caps, self.engine_choice = caps, engine
        self.engine_used: str | None = None
        self._slow_bytes = 0  # read by the python engine while "auto" waited for numba
        self._cached: bool | None = None  # whether the numba kernels are in numba's cache
        self._served, self._lock, self._stopping = served, served.lock, stopping

    def read(self, run: RunState, found: FoundRun) -> None:
        """Read what changed in the files of ``run`` (as the walk found them)."""
        groups: dict[int | None, list[FoundFile]] = {}
        for file in found.files:
            groups.setdefault(file_rank(file.name), []).append(file)
        with self._lock:
            for rank in set(run.order) - set(groups):  # every file of a rank vanished
                self._reset(run, rank)
                del run.order[rank]
            for name in set(run.files) - {f.name for f in found.files}:
                run.files.pop(name, None)
        for rank, files in groups.items():
            if not self._continues(run, rank, files, os.fspath(found.path)):
                with self._lock:
                    self._reset(run, rank)
            for file in files:
                if self._stopping.is_set():
                    return
                self._read_file(run, file, os.fspath(found.path))
            with self._lock:
                run.order[rank] = [f.name for f in files]

    def _continues(
        self, run: RunState, rank: int | None, files: list[FoundFile], directory: str
    ) -> bool:
        """Whether the files read before are still there, in order, and only grew."""
        read_before = run.order.get(rank, [])
        if [f.name for f in files[: len(read_before)]] != read_before:
            return False
        for file in files[: len(read_before)]:
            state = run.files.get(file.name)
            if state is None or file.size < state.offset:
                return False
            changed = (state.size, state.mtime_ns) != (file.size, file.mtime_ns)
            if state.offset and changed and not self._object_storage:
                try:
                    if self._head(self.storage.join(directory, file.name)) != state.head:
                        return False
                except OSError:
                    return False
        return True

    def _reset(self, run: RunState, rank: int | None) -> None:
        """Forget what the files of ``rank`` gave, to read them again from the start."""
        for key in [key for key in run.series if key.rank == rank]:
            self.store.release(run.series.pop(key).chunks)
        for bucket in [bucket for bucket in run.buckets if bucket.rank == rank]:
            del run.buckets[bucket]
            run.changed_buckets.add(bucket)
        for name in run.order.get(rank, []):
            run.files.pop(name, None)
        run.order[rank] = []

    def _read_file(self, run: RunState, file: FoundFile, directory: str) -> None:
        state = run.files.get(file.name)
        if state is None:
            state = FileState(file.name, file.kind, file_rank(file.name))
            with self._lock:
                run.files[file.name] = state
        path = self.storage.join(directory, file.name)
        if state.unreadable and (state.size, state.ctime_ns) == (file.size, file.ctime_ns):
            return
        # permissions may have changed (on object storage: uploaded again; a read says)
        probe = state.ctime_ns != file.ctime_ns and not self._object_storage
        while state.offset < file.size and not self._stopping.is_set():
            stats = ReadStats()
            try:
                if not state.head and not self._object_storage:
                    state.head = self._head(path)
                columns, end = read_file_scalars(
                    path,
                    file.kind,
                    start=state.offset,
                    engine=self._engine(file.size - state.offset),
                    stats=stats,
                    other=self._sample_collector(run, state, path),
                    limit=READ_LIMIT,
                    values=False,  # indexed only: a value is read back when a page asks
                    storage=self.storage,
                )
            except NotAnEventFileError:
                state.unreadable = True
                _seen(state, file)
                return
            except FileNotFoundError:  # removed while listed: the next walk sees it gone
                return
            except OSError as err:  # unreadable (permissions, I/O error): counted, said once
                if not state.unreadable:
                    _log.warning("cannot read %s: %s", path, err)
                state.unreadable = True
                _seen(state, file)
                return
            state.unreadable = probe = False
            with self._lock:
                self._take(run, state, columns)
                state.records += stats.records
                state.corrupt_records += stats.corrupt_records
                state.skipped_bytes += stats.skipped_bytes
                for name, count in stats.skipped_plugins.items():
                    state.skipped_plugins[name] = state.skipped_plugins.get(name, 0) + count
                moved = end > state.offset
                state.offset = end
                self._served.changed(run)
            if not moved:
                break  # a torn tail: read again once the file grows
        if probe or state.read_error:
            self._probe(run, state, path)
        _seen(state, file)

    def _probe(self, run: RunState, state: FileState, path: str) -> None:
        """Whether a file read before can still be read (one open): its values are read
        back from it, so a file that cannot be counts as damage before a page asks."""
        try:
            with self.storage.open_read(path):
                reason = ""
        except FileNotFoundError:  # removed while listed: the next walk sees it gone
            return
        except OSError as err:
            reason = err.strerror or str(err)
        self._served.note_read_error(run, state, path, reason)

    def _head(self, path: str) -> str:
        """A digest of the file's first bytes (a replaced file's differ)."""
        with self.storage.open_read(path) as handle:
            return hashlib.sha1(handle.read(HEAD_BYTES)).hexdigest()

    def _engine(self, unread: int) -> Engine:
        if self.engine_choice != "auto":
            engine = self.engine_choice
        else:
            worth_waiting = self._slow_bytes + unread > SLOW_BYTES and self._kernels_cached()
            ready = fast_engine_ready() or (worth_waiting and fast_engine_ready(KERNEL_WAIT))
            engine = "numba" if ready else "python"
            if not ready:
                self._slow_bytes += unread
        self.engine_used = engine
        return engine

    def _kernels_cached(self) -> bool:
        """Whether the numba kernels are in numba's cache (asked once: it hashes sources)."""
        if self._cached is None:
            self._cached = fast_engine_cached()
        return self._cached

    # ------------------------------------------------------------------ scalars

    def _take(self, run: RunState, file: FileState, columns: dict[str, Columns]) -> None:
        """Add one read's new points to their series, all in one write.

        Most series just continue (their first new step is above their last, and steps
        increase): those are checked all at once and their points written as read; the
        others go through :meth:`_fit` one by one.
        """
        tags = [tag for tag, (steps, _, _) in columns.items() if steps.size]
        if not tags:
            return
        points, starts, ends, rough = _side_by_side([columns[tag] for tag in tags])
        steps, walls = points["step"], points["wall"]
        firsts, lasts = steps[starts].tolist(), steps[ends - 1].tolist()
        first_walls, last_walls = walls[starts].tolist(), walls[ends - 1].tolist()
        starts, ends, rough = starts.tolist(), ends.tolist(), rough.tolist()
        taken: list[tuple[SeriesState, int, np.ndarray | None]] = []  # None: as read
        whole = True  # every point read is kept, in place
        for i, tag in enumerate(tags):
            key = SeriesKey(file.rank, tag)
            series = run.series.get(key)
            if series is None:
                series = run.series[key] = SeriesState(file.rank, tag)
            if rough[i] or (series.count and firsts[i] <= series.last_step):
                part = points[starts[i] : ends[i]]
                fitted = self._fit(run, file, series, part)
                if fitted is not part:
                    whole = False
                    if fitted is not None:
                        taken.append((series, i, fitted))
                    continue
            taken.append((series, i, None))
        if not taken:
            return
        kept = (
            points
            if whole
            else np.concatenate(
                [points[starts[i] : ends[i]] if part is None else part for _, i, part in taken]
            )
        )
        segment, first = self.store.write(kept)
        for series, i, fitted in taken:
            if fitted is None:
                count, first_step, first_wall = ends[i] - starts[i], firsts[i], first_walls[i]
                last_step, last_wall = lasts[i], last_walls[i]
            else:
                count = fitted.size
                (first_step, first_wall, _), (last_step, last_wall, _) = fitted[[0, -1]].tolist()
            series.chunks.append((segment, first, count))
            first += count
            if series.count == 0:
                series.first_step, series.first_wall = first_step, first_wall
            series.count += count
            series.last_step, series.last_wall = last_step, last_wall
            series.last_file = file.name
        first_wall = float(kept["wall"].min())
        if run.created is None or first_wall < run.created:
            run.created = first_wall

    def _fit(
        self, run: RunState, file: FileState, series: SeriesState, points: np.ndarray
    ) -> np.ndarray | None:
        """The points of one read that ``series`` keeps (None: none), after dropping
        repeats and what a restart replaces (in the points and in the series)."""
        steps = points["step"]
        again = self._repeated(series, points)
        if again.any():  # MindSpore writes each epoch's last step twice: not a restart
            points = points[~again]
            steps = points["step"]
            if steps.size == 0:
                return None
        # within the read: a point survives if every later step is above it
        later_min = np.minimum.accumulate(steps[::-1])[::-1]
        keep = np.ones(steps.size, dtype=bool)
        keep[:-1] = steps[:-1] < later_min[1:]
        lowest = int(later_min[0])
        dropped = int(steps.size - np.count_nonzero(keep))
        if series.count and lowest <= series.last_step:
            if lowest < series.last_step:
                run.restarts += 1
            if series.last_file != file.name and lowest <= series.first_step:
                run.several_trainings = True
            cut = self.store.count_below(series.chunks, lowest)
            dropped += series.count - cut
            series.chunks = self.store.cut(series.chunks, cut)
            series.count = cut
        run.stale_points_dropped += dropped
        return points if keep.all() else points[keep]

    def _repeated(self, series: SeriesState, points: np.ndarray) -> np.ndarray:
        """Which points repeat the point before them (the series' last one, for the first):
        the same step with the same value (NaN equal to NaN)."""
        steps, values = points["step"], points["value"]
        before_steps = np.empty_like(steps)
        before_values = np.empty_like(values)
        before_steps[1:], before_values[1:] = steps[:-1], values[:-1]
        if series.count and int(steps[0]) == series.last_step:
            last = self.store.read(series.chunks, series.count - 1)
            before_steps[0], before_values[0] = steps[0], last["value"][0]
        else:
            before_steps[0], before_values[0] = steps[0] ^ 1, values[0]  # never the same step
        same = (values == before_values) | (np.isnan(values) & np.isnan(before_values))
        return (steps == before_steps) & same

    # ------------------------------------------------------------------ samples

    def _unchanged_rewrite(
        self,
        before: tuple[str, str, dict[str, Any]],
        now: tuple[str, str],
        event: Event,
        offset: int,
        length: int,
    ) -> bool:
        """Whether ``event`` (its record at ``offset``, ``length`` of file ``now``: path, kind)
        holds the same value as the kept one ``before`` (its file's path, kind and sample row)
        at the same step. Both are read back and compared; what cannot be read is not equal."""
        path, kind, row = before
        try:
            old = read_events_at(path, kind, row["offset"], row["length"], event.tag, self.storage)
            new = read_events_at(now[0], now[1], offset, length, event.tag, self.storage)
        except (OSError, PayloadError):
            return False
        olds = [e.value for e in old if e.plugin == event.plugin]
        news = [e.value for e in new if e.plugin == event.plugin]
        return len(olds) == len(news) == 1 and same_value(olds[0], news[0])

    def _sample_collector(self, run: RunState, file: FileState, path: str) -> OtherEvents:
        """What keeps references to a file's non-scalar values in the run's buckets.

        A value at the step of its series' newest, equal to it, was written again
        (MindSpore writes each epoch's last step twice): it is left out, not counted.
        """
        with self._lock:
            if file.name not in run.sample_files:
                run.sample_files.append(file.name)
            index = run.sample_files.index(file.name)

        def collect(event: Event, offset: int, length: int) -> None:
            key = BucketKey(file.rank, event.plugin, event.tag)
            with self._lock:
                bucket = run.buckets.get(key)
                if bucket is None:
                    bucket = run.buckets[key] = SampleBucket(self.caps[event.plugin])
                newest = bucket.newest()
                before = None
                if newest is not None and newest["step"] == event.step:
                    name = run.sample_files[newest["file"]]
                    state = run.files.get(name)
                    if state is not None:
                        before = (self.storage.join(run.path, name), state.kind, newest)
            if before is not None and self._unchanged_rewrite(
                before, (path, file.kind), event, offset, length
            ):
                return
            with self._lock:
                dropped = bucket.offer(event.step, event.wall_time, index, offset, length)
                if event.plugin not in REWRITTEN:  # lineage written again is no restart
                    run.stale_points_dropped += dropped
                run.changed_buckets.add(key)
                if run.created is None or event.wall_time < run.created:
                    run.created = event.wall_time

        return collect


def _side_by_side(
    columns: list[Columns],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The points of several series' (non-empty) columns one after another, where each
    starts and ends, and whether its steps do not all increase (``rough``)."""
    if len(columns) == 1:  # most reads of small runs: no concatenation
        ((steps, walls, values),) = columns
        points = np.empty(steps.size, dtype=POINT)
        points["step"], points["wall"], points["value"] = steps, walls, values
        rough = np.array([steps.size > 1 and bool((steps[1:] <= steps[:-1]).any())])
        return points, np.zeros(1, np.int64), np.array([steps.size]), rough
    steps = np.concatenate([c[0] for c in columns])
    points = np.empty(steps.size, dtype=POINT)
    points["step"] = steps
    points["wall"] = np.concatenate([c[1] for c in columns])
    points["value"] = np.concatenate([c[2] for c in columns])
    ends = np.cumsum(np.fromiter((c[0].size for c in columns), np.int64, len(columns)))
    starts = np.empty_like(ends)
    starts[0], starts[1:] = 0, ends[:-1]
    back = steps[1:] <= steps[:-1]
    back[starts[1:] - 1] = False  # a series' first step is not compared with the one before
    rough = np.zeros(len(columns), dtype=bool)
    rough[np.searchsorted(ends, np.flatnonzero(back) + 1, side="right")] = True
    return points, starts, ends, rough


def _seen(state: FileState, file: FoundFile) -> None:
    """Remember the size and times the walk saw ``file`` with, once it was dealt with."""
    state.size, state.mtime_ns, state.ctime_ns = file.size, file.mtime_ns, file.ctime_ns
