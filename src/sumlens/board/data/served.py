"""The runs being served and the read surface over them.

:class:`ServedRuns` holds every run's :class:`~sumlens.board.data.state.RunState` and
answers the routes' questions (:class:`~sumlens.board.data.surface.ReadSurface`) from
them: summaries, series and their points from the
:class:`~sumlens.board.data.store.SegmentStore`, kept samples, and values and raw records
read back from the run files through the storage. The
:class:`~sumlens.board.data.loader.Loader` fills it; whoever changes a run says so with
:meth:`ServedRuns.changed` (the lock held), which moves :attr:`ServedRuns.version` and
marks the run to be saved.

Values found damaged or unreadable when read back are counted in their run's damage and
said once in the log.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from sumlens._log import warn_once
from sumlens.board.data.state import DamagedValue, FileState, RunState, SeriesKey
from sumlens.board.data.store import POINT, SegmentStore
from sumlens.board.data.surface import RunFile, Samples, SeriesRef
from sumlens.board.errors import ValueUnreadable
from sumlens.io import Event, RecordChangedError, RecordFile, read_events_at, read_record_at
from sumlens.io.decode import PayloadError
from sumlens.io.storage import Storage


class ServedRuns:
    """Run states, and the read surface over them (points in ``store``, run files read
    through ``storage``). Its lock guards the states and the store while they change."""

    def __init__(self, store: SegmentStore, storage: Storage) -> None:
        self.store = store
        self.storage = storage
        self.version = 0
        self._lock = threading.RLock()
        self._runs: dict[str, RunState] = {}
        self._summaries: dict[str, dict[str, Any]] = {}  # of the runs unchanged since
        self._dirty: set[str] = set()  # runs changed since they were last saved

    @property
    def lock(self) -> threading.RLock:
        """Held while run states change, and by every query while it reads them."""
        return self._lock

    def runs(self) -> list[dict[str, Any]]:
        """Every run's summary (see :meth:`RunState.summary`), sorted by id.

        A run's summary is made again only after it changed: callers share them, and
        must not modify them."""
        with self._lock:
            summaries = self._summaries
            for name, run in self._runs.items():
                if name not in summaries:
                    summaries[name] = run.summary()
            return [summaries[name] for name in sorted(self._runs)]

    def has_run(self, run_id: str) -> bool:
        """Whether ``run_id`` names a run being served."""
        with self._lock:
            return run_id in self._runs

    def series(self, run_id: str) -> list[SeriesRef]:
        """The scalar series of a run (empty for an unknown run), by rank then tag."""
        with self._lock:
            run = self._runs.get(run_id)
            if run is None:
                return []
            refs = [
                SeriesRef(run_id, s.rank, s.tag, s.count, s.first_wall)
                for s in run.series.values()
                if s.count
            ]
        return sorted(refs, key=lambda r: (-1 if r.rank is None else r.rank, r.tag))

    def points(self, ref: SeriesRef) -> np.ndarray:
        """The points of a series (:data:`~sumlens.board.data.store.POINT` records), as now."""
        with self._lock:
            run = self._runs.get(ref.run)
            series = run.series.get(SeriesKey(ref.rank, ref.tag)) if run else None
            if series is None or series.count == 0:
                return np.empty(0, dtype=POINT)
            return self.store.read(series.chunks, 0, series.count)

    def samples(self, run_id: str, plugin: str, tag: str) -> list[Samples]:
        """The kept values of a run's ``plugin`` series named ``tag``, one entry per rank."""
        with self._lock:
            run = self._runs.get(run_id)
            if run is None:
                return []
            found = [
                Samples(run_id, key.rank, plugin, tag, bucket.items, index.rows, index.stride)
                for key, bucket in run.buckets.items()
                if key.plugin == plugin and key.tag == tag and bucket.items.size
                for index in (bucket.index,)
            ]
        return sorted(found, key=lambda s: -1 if s.rank is None else s.rank)

    def value(self, samples: Samples, index: int) -> Event | None:
        """The value of ``samples.items[index]``, read back from its event file.

        None when the file no longer holds it (replaced or removed since it was listed).
        Raises :class:`ValueUnreadable` when the value is damaged (indexing checks what it
        can without converting values; the rest is found here) or its file cannot be
        read: either is counted in the run's damage and said once in the log.
        """
        item = samples.items[index]
        if int(item["offset"]) < 0 or int(item["length"]) < 0:  # no record is there
            return None
        with self._lock:
            run = self._runs.get(samples.run)
            if run is None or not 0 <= int(item["file"]) < len(run.sample_files):
                return None
            name = run.sample_files[int(item["file"])]
            state = run.files.get(name)
            path = self.storage.join(run.path, name)
        # a record lies within what was read of its file: nothing else is ever read
        if state is None or item["offset"] + item["length"] + 4 > max(state.offset, state.size):
            return None
        what = f"{samples.tag!r} at step {int(item['step'])} of run {samples.run!r}"
        try:
            events = read_events_at(
                path, state.kind, int(item["offset"]), int(item["length"]), samples.tag,
                self.storage,
            )  # fmt: skip
        except (FileNotFoundError, RecordChangedError):
            return None
        except OSError as err:
            reason = err.strerror or str(err)
            self.note_read_error(run, state, path, reason)
            raise ValueUnreadable(f"{what}: its file {name!r} cannot be read ({reason})") from None
        except PayloadError as err:
            damaged = DamagedValue(name, int(item["offset"]), samples.tag)
            self._note_damaged_value(run, damaged, what)
            raise ValueUnreadable(f"{what} is damaged in its file {name!r}: {err}") from None
        if state.read_error:
            self.note_read_error(run, state, path, "")
        for event in events:
            if event.plugin == samples.plugin and event.tag == samples.tag:
                return event
        return None

    def files(self, run_id: str) -> list[RunFile]:
        """The event files of a run as last read, in reading order per rank."""
        with self._lock:
            run = self._runs.get(run_id)
            return [] if run is None else [state.public() for state in run.files.values()]

    def record_file(self, run_id: str, name: str, offset: int = 0) -> RecordFile | None:
        """The raw records of file ``name`` of a run from byte ``offset`` (None when the
        run has no such file): for readers with rules of their own (MindInsight's)."""
        with self._lock:
            run = self._runs.get(run_id)
            if run is None or name not in run.files:
                return None
            return RecordFile(self.storage.join(run.path, name), offset, self.storage)

    def payload(self, run_id: str, name: str, offset: int, length: int) -> bytes | None:
        """The payload of the record at ``offset`` of a run's file, checked against its
        CRC; None when the file no longer holds that record or cannot be read."""
        with self._lock:
            run = self._runs.get(run_id)
            if run is None or name not in run.files:
                return None
            path = self.storage.join(run.path, name)
        try:
            return read_record_at(path, offset, length, self.storage)
        except (RecordChangedError, OSError):
            return None

    def changed(self, run: RunState) -> None:
        """``run`` changed (the lock held): save it, and say so to the queries' caches."""
        self._dirty.add(run.id)
        self._summaries.pop(run.id, None)
        self.version += 1

    def note_read_error(self, run: RunState, state: FileState, path: str, reason: str) -> None:
        """Record that a file read before cannot be read now (``reason``), or can again ("")."""
        with self._lock:
            if state.read_error == reason:
                return
            state.read_error = reason
            self.changed(run)
        if reason:
            warn_once(f"read_error:{path}", "cannot read %s: %s", path, reason)

    def _note_damaged_value(self, run: RunState, damaged: DamagedValue, what: str) -> None:
        with self._lock:
            if damaged in run.damaged_values:
                return
            run.damaged_values.append(damaged)
            self.changed(run)
        warn_once(f"damaged:{run.id}\0{damaged}", "%s is damaged in its file: counted", what)
